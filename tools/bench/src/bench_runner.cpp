#include "eit/bench/bench_runner.hpp"

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/bench/measuring_subscriber.hpp"
#include "eit/bench/stamp_sink.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_keeper.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/zmq_io_placement.hpp"
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
  pub_options.publish_batch = config.publish_batch;
  // Lossless runs (max) measure delivered frames: PUSH to one PULL consumer waits for it, where
  // PUB drops per subscriber once the subscriber falls behind (it must never stall the others).
  pub_options.pattern = pub_options.lossless ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  config.pattern = pub_options.lossless ? "push" : "pub";
  SubscriberMode sub_mode{pub_options.lossless, config.latency_mode == "spin"};
  pub_options.series.stream = "bench";
  pub_options.series.rate_hz = config.rate_hz;
  pub_options.series.source = "eitstream bench frame table";

  acquisition::PhantomOptions src_options;
  src_options.rate_hz = config.rate_hz;
  src_options.frames = total;
  src_options.snr_db = std::numeric_limits<double>::infinity();
  // Spin mode: the source polls its due time for the whole period, as the stages poll their
  // queues (a dedicated host). Otherwise it polls the last source_poll_us only: either way the
  // host's late timer wake-up does not land in the latency (run_result.hpp).
  src_options.spin_ns = config.latency_mode == "spin"
                            ? acquisition::kSpinWholeWait
                            : static_cast<int64_t>(config.source_poll_us) * 1000;
  acquisition::SyntheticPhantomSource source(frames, src_options);

  pipeline::PipelineOptions options;
  options.policy =
      config.policy == "lossless" ? pipeline::Policy::kLossless : pipeline::Policy::kLive;
  options.max_batch = config.batch;
  options.max_frames = total;
  options.stages = config.pipeline_stages();
  options.latency_mode = config.pipeline_latency_mode();
  options.wake_hold = config.pipeline_wake_hold();
  options.warm_interval_us = static_cast<int64_t>(config.warm_us);
  if (model.v_ref.size() == 0) {
    options.reference.mode = pipeline::ReferenceMode::kCapture;
    options.reference.capture_frames = 1;
  }
  std::unique_ptr<pipeline::Reconstructor> backend = env.make_backend(config, model);
  // --cpus: the threads this run has (its layout and whether the sink runs inline decide), each
  // with its CPU; the pipeline's take indices source 0, reconstructor 1, sink 2. The CPUs are
  // known before the publisher exists, which may place ZeroMQ's I/O thread on its sink's CPU.
  const bool shm = config.transport == "shm";                   // ShmPublisher runs inline
  const bool zmq_inline = !shm && config.zmq_send == "inline";  // ZmqPublisher when asked
  const bool pipelined = pipeline::resolve_layout(options.stages, *backend, source) ==
                         pipeline::StageLayout::kPipelined;
  // With --cpus: both ends' ZeroMQ I/O threads on the sink thread's CPU in every mode, or (spin
  // mode) on one of their own (zmq_io_placement.hpp), as the bare reference places its own.
  const bool place_io = !shm && (config.zmq_io_cpu == "sink" ||
                                 (config.latency_mode == "spin" && config.own_io_cpu()));
  const bool own_io = place_io && config.own_io_cpu();
  std::vector<std::string> threads = threads_to_pin(pipelined, !shm && !zmq_inline);
  if (own_io) threads.emplace_back("zmq io");
  config.cpus = assign_cpus(config.cpu_request, threads, allowed_cpus());
  // The thread that sends: the sink's own, or (inline) the one that finishes each frame.
  const char* sender = !zmq_inline ? "sink 0" : pipelined ? "reconstructor" : "source";
  const int io_cpu = place_io ? cpu_of(config.cpus, own_io ? "zmq io" : sender) : -1;
  // The placeholder gives way to the I/O threads' own entries, reported below.
  std::erase_if(config.cpus, [](const ThreadCpu& t) { return t.thread == "zmq io"; });
  const int source_cpu = cpu_of(config.cpus, "source");  // -1: nothing pinned
  if (!config.cpus.empty()) {
    for (const char* t : {"source", "reconstructor", "sink 0"}) {
      const int cpu = cpu_of(config.cpus, t);
      options.cpus.push_back(cpu >= 0 ? cpu : source_cpu);  // absent threads: never used
    }
  }
  // A stage thread on the source's CPU runs only when the source's clock polls let it.
  config.source_yields =
      source_cpu >= 0 && std::ranges::any_of(config.cpus, [&](const ThreadCpu& t) {
        return t.thread != "source" && t.thread != "subscriber" && t.cpu == source_cpu;
      });
  source.set_yield_polls(config.source_yields);
  pub_options.io_cpu = io_cpu;
  pub_options.send_inline = zmq_inline;
  pub_options.io_wake =
      config.zmq_io_wake == "defer" ? sinks::IoWake::kDefer : sinks::IoWake::kPreempt;
  sub_mode.io_cpu = io_cpu;
  std::optional<pipeline::CpuKeeper> keeper;  // "own": the I/O threads' CPU never halts
  if (own_io && config.zmq_io_cpu == "own") {
    keeper.emplace(io_cpu);
    config.cpu_keeper = keeper->describe();
  }

  // shm: the shared-memory ring (live whatever the policy: it never waits for its reader).
  std::unique_ptr<pipeline::ImageSink> publisher;
  const sinks::ZmqPublisher* zmq_publisher = nullptr;
  if (shm) {
    sinks::ShmPublisherOptions so;
    so.uri = pub_options.endpoint;
    so.series = pub_options.series;
    so.slots = kShmBenchSlots;
    auto ring = std::make_unique<sinks::ShmPublisher>(model, so);
    config.endpoint = ring->uri();
    config.pattern = "ring";
    publisher = std::move(ring);
  } else {
    auto zmq = std::make_unique<sinks::ZmqPublisher>(model, pub_options, context);
    config.endpoint = zmq->endpoint();
    zmq_publisher = zmq.get();
    publisher = std::move(zmq);
  }
  if (publisher->inline_safe() != (shm || zmq_inline))
    throw std::logic_error("bench: the CPUs were planned for the other kind of sink thread");
  const std::string ipc_path =
      config.transport == "ipc" ? config.endpoint.substr(std::string("ipc://").size()) : "";

  StampSink stamps(*recorder, *publisher);  // stamps "sent" on the publisher's own thread
  sub_mode.cpu = cpu_of(config.cpus, "subscriber");
  MeasuringSubscriber subscriber(*context, env.executable, config.endpoint, total, sub_mode);
  if (io_cpu >= 0) {
    config.cpus.push_back(
        io_thread_placement("zmq io (publisher)", 0, zmq_publisher->io_tag(), io_cpu));
    if (const pid_t child = subscriber.child_pid(); child > 0)
      config.cpus.push_back(
          io_thread_placement("zmq io (subscriber)", child, sinks::kAnyTag, io_cpu));
  }

  pipeline::PipelineStats stats;
  {
    pipeline::Pipeline pipe(model, source, std::move(backend), {&stamps}, options);
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
  for (ThreadCpu& t : config.cpus) {
    if (t.thread == "subscriber") t.error = sub_report.pin_error;
    for (const auto& p : stats.thread_cpus)
      if (p.thread == t.thread) t.error = p.error;
  }
  for (const auto& r : sub_report.times) recorder->record_subscriber(r.seq, r.t_ns);
  const SubscriberCounts& sub_counts = sub_report.counts;
  counters.subscriber_received = sub_counts.images;
  counters.subscriber_batches = sub_counts.batches;
  if (!ipc_path.empty()) std::filesystem::remove(ipc_path);

  RunOutput out;
  out.result = analyze_run(*recorder, 0, config, counters);
  out.recorder = std::move(recorder);
  return out;
}

}  // namespace eit::bench
