#include "eit/bench/bench_runner.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/bench/image_subscriber.hpp"
#include "eit/bench/stamp_sink.hpp"
#include "eit/bench/subscriber_process.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/zmq_publisher.hpp"

namespace eit::bench {
namespace {

std::string endpoint_for(const std::string& transport) {
  static std::atomic<int> counter{0};
  const int n = counter.fetch_add(1);
  if (transport == "inproc") return fmt::format("inproc://eit-bench-{}-{}", ::getpid(), n);
  if (transport == "ipc")
    return fmt::format("ipc://{}/eit-bench-{}-{}.sock",
                       std::filesystem::temp_directory_path().string(), ::getpid(), n);
  if (transport == "tcp") return "tcp://127.0.0.1:*";
  throw std::invalid_argument(
      fmt::format("--transport '{}': expected inproc, ipc or tcp", transport));
}

// The inproc subscriber: a thread next to the pipeline, sharing the publisher's context.
class SubscriberThread {
 public:
  SubscriberThread(zmq::context_t& context, const std::string& endpoint, size_t capacity,
                   SubscriberMode mode)
      : sub_(context, endpoint, capacity, mode.pull),
        spin_(mode.spin),
        thread_([this] { loop(); }) {}
  ~SubscriberThread() { finish(); }
  // After the pipeline has finished: receive until 300 ms of quiet or the series end.
  const ImageSubscriber& finish() {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
    return sub_;
  }

 private:
  void loop() {
    int64_t quiet_until = std::numeric_limits<int64_t>::max();
    bool stopping = false;
    while (!sub_.counts().series_end) {
      const size_t got = spin_ ? sub_.drain() : sub_.poll(50);
      if (!stopping && stop_.load(std::memory_order_acquire)) {
        stopping = true;
        quiet_until = pipeline::now_ns() + 300'000'000;
      }
      if (stopping && got > 0) quiet_until = pipeline::now_ns() + 300'000'000;
      if (pipeline::now_ns() > quiet_until) break;
    }
    sub_.close();  // a PUSH publisher's lossless end waits for its consumers to go
  }
  ImageSubscriber sub_;
  bool spin_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

PipelineCounters counters_from(const pipeline::PipelineStats& s) {
  PipelineCounters c;
  c.produced = s.frames_in;
  c.dropped = s.dropped() + s.lost_on_fault;
  c.published = s.frames_out;
  if (!s.sinks.empty()) c.send_dropped = s.sinks.front().dropped + s.sinks.front().errors;
  c.non_finite = s.non_finite;
  c.backend_errors = s.backend_faults;
  // "output": the fullest sink queue; then each sink's own.
  c.queue_high_water = {{"input", {s.input.high_water, s.input.capacity}},
                        {"output", {s.output.high_water, s.output.capacity}}};
  for (const auto& q : s.sink_queues)
    c.queue_high_water.push_back({"sink " + q.name, {q.queue.high_water, q.queue.capacity}});
  if (!s.sink_queues.empty()) c.send_dropped += s.sink_queues.front().queue.dropped;
  return c;
}

}  // namespace

RunOutput run_benchmark(const recon::Model& model, const acquisition::PhantomTable& frames,
                        const RunConfig& config_in, const RunEnvironment& env) {
  RunConfig config = config_in;
  const size_t total = config.warmup + config.frames;
  if (config.frames == 0) throw std::invalid_argument("--frames: must be ≥ 1");
  auto recorder = std::make_unique<StampRecorder>(total, 0);

  auto context = std::make_shared<zmq::context_t>(1);
  sinks::ZmqPublisherOptions pub_options;
  pub_options.endpoint = endpoint_for(config.transport);
  pub_options.lossless = config.policy == "lossless";
  // Lossless runs (max) measure delivered frames: PUSH to one PULL consumer waits for it, where
  // PUB drops per subscriber once the subscriber falls behind (it must never stall the others).
  pub_options.pattern = pub_options.lossless ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  config.pattern = pub_options.lossless ? "push" : "pub";
  const SubscriberMode sub_mode{pub_options.lossless, config.latency_mode == "spin"};
  pub_options.series.stream = "bench";
  pub_options.series.rate_hz = config.rate_hz;
  pub_options.series.source = "eitstream bench frame table";
  sinks::ZmqPublisher publisher(model, pub_options, context);
  config.endpoint = publisher.endpoint();
  const std::string ipc_path =
      config.transport == "ipc" ? config.endpoint.substr(std::string("ipc://").size()) : "";

  std::unique_ptr<SubscriberThread> sub_thread;
  std::unique_ptr<SubscriberProcess> sub_process;
  if (config.transport == "inproc")
    sub_thread = std::make_unique<SubscriberThread>(*context, config.endpoint, total, sub_mode);
  else
    sub_process =
        std::make_unique<SubscriberProcess>(env.executable, config.endpoint, total, sub_mode);
  if (sub_thread) std::this_thread::sleep_for(std::chrono::milliseconds(50));

  acquisition::PhantomOptions src_options;
  src_options.rate_hz = config.rate_hz;
  src_options.frames = total;
  src_options.snr_db = std::numeric_limits<double>::infinity();
  acquisition::SyntheticPhantomSource source(frames, src_options);

  pipeline::PipelineOptions options;
  options.policy =
      config.policy == "lossless" ? pipeline::Policy::kLossless : pipeline::Policy::kLive;
  options.max_batch = config.batch;
  options.max_frames = total;
  options.stages = config.stages == "pipelined"           ? pipeline::StageLayout::kPipelined
                   : config.stages == "run-to-completion" ? pipeline::StageLayout::kRunToCompletion
                                                          : pipeline::StageLayout::kAuto;
  options.latency_mode = config.latency_mode == "spin"   ? pipeline::LatencyMode::kSpin
                         : config.latency_mode == "idle" ? pipeline::LatencyMode::kIdle
                                                         : pipeline::LatencyMode::kBalanced;
  if (model.v_ref.size() == 0) {
    options.reference.mode = pipeline::ReferenceMode::kCapture;
    options.reference.capture_frames = 1;
  }
  StampSink stamps(*recorder, publisher);  // stamps "sent" on the publisher's own thread
  pipeline::PipelineStats stats;
  {
    pipeline::Pipeline pipe(model, source, env.make_backend(config, model), {&stamps}, options);
    config.layout = std::string(pipeline::layout_name(pipe.layout()));
    pipe.start();
    while (!pipe.finished()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (env.progress) env.progress(config, pipe.stats());
    }
    pipe.wait();
    stats = pipe.stats();
  }
  config.cpu_wake_hold = stats.cpu_wake_hold;
  PipelineCounters counters = counters_from(stats);

  SubscriberCounts sub_counts;
  if (sub_thread) {
    const ImageSubscriber& sub = sub_thread->finish();
    for (const auto& r : sub.received()) recorder->record_subscriber(r.seq, r.t_ns);
    sub_counts = sub.counts();
  } else {
    const SubscriberReport report = sub_process->finish();
    for (const auto& r : report.times) recorder->record_subscriber(r.seq, r.t_ns);
    sub_counts = report.counts;
  }
  counters.subscriber_received = sub_counts.images;
  if (!ipc_path.empty()) std::filesystem::remove(ipc_path);

  RunOutput out;
  out.result = analyze_run(*recorder, 0, config, counters);
  out.recorder = std::move(recorder);
  return out;
}

}  // namespace eit::bench
