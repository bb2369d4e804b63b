#include "eit/bench/bench_runner.hpp"

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/bench/measuring_subscriber.hpp"
#include "eit/bench/stamp_sink.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/zmq_publisher.hpp"

namespace eit::bench {
namespace {

// The shm ring's length in the bench: the reader may lag this many images (4.3 MB at 1024×208).
constexpr uint32_t kShmBenchSlots = 1024;

PipelineCounters counters_from(const pipeline::PipelineStats& s) {
  PipelineCounters c;
  c.produced = s.frames_in;
  c.dropped = s.dropped() + s.lost_on_fault;
  c.published = s.frames_out;
  if (!s.sinks.empty()) c.send_dropped = s.sinks.front().dropped + s.sinks.front().errors;
  c.non_finite = s.non_finite;
  c.backend_errors = s.backend_faults;
  c.met_polling = s.frames_met_polling;
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
  pub_options.endpoint = bench_endpoint(config.transport);
  pub_options.lossless = config.policy == "lossless";
  // Lossless runs (max) measure delivered frames: PUSH to one PULL consumer waits for it, where
  // PUB drops per subscriber once the subscriber falls behind (it must never stall the others).
  pub_options.pattern = pub_options.lossless ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  config.pattern = pub_options.lossless ? "push" : "pub";
  const SubscriberMode sub_mode{pub_options.lossless, config.latency_mode == "spin"};
  pub_options.series.stream = "bench";
  pub_options.series.rate_hz = config.rate_hz;
  pub_options.series.source = "eitstream bench frame table";
  // shm: the shared-memory ring (live whatever the policy: it never waits for its reader).
  std::unique_ptr<pipeline::ImageSink> publisher;
  if (config.transport == "shm") {
    sinks::ShmPublisherOptions so;
    so.uri = pub_options.endpoint;
    so.series = pub_options.series;
    so.slots = kShmBenchSlots;
    auto shm = std::make_unique<sinks::ShmPublisher>(model, so);
    config.endpoint = shm->uri();
    config.pattern = "ring";
    publisher = std::move(shm);
  } else {
    auto zmq = std::make_unique<sinks::ZmqPublisher>(model, pub_options, context);
    config.endpoint = zmq->endpoint();
    publisher = std::move(zmq);
  }
  const std::string ipc_path =
      config.transport == "ipc" ? config.endpoint.substr(std::string("ipc://").size()) : "";

  MeasuringSubscriber subscriber(*context, env.executable, config.endpoint, total, sub_mode);

  acquisition::PhantomOptions src_options;
  src_options.rate_hz = config.rate_hz;
  src_options.frames = total;
  src_options.snr_db = std::numeric_limits<double>::infinity();
  // Spin mode: the source polls its due time as the stages poll their queues (a dedicated host).
  if (config.latency_mode == "spin") src_options.spin_ns = 100'000;
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
  StampSink stamps(*recorder, *publisher);  // stamps "sent" on the publisher's own thread
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

  const SubscriberReport sub_report = subscriber.finish();
  for (const auto& r : sub_report.times) recorder->record_subscriber(r.seq, r.t_ns);
  const SubscriberCounts& sub_counts = sub_report.counts;
  counters.subscriber_received = sub_counts.images;
  if (!ipc_path.empty()) std::filesystem::remove(ipc_path);

  RunOutput out;
  out.result = analyze_run(*recorder, 0, config, counters);
  out.recorder = std::move(recorder);
  return out;
}

}  // namespace eit::bench
