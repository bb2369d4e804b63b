#include "eit/pipeline/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/thread_pin.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {

// Below this rate the pipelined layout wins with the CPU backend: its idle reconstructor keeps H
// in cache between frames (Reconstructor::warm()), which the source thread, blocked in read(),
// cannot. Measured at 50 Hz, 1024×208: compute p50 134 µs run to completion vs 53 µs pipelined.
// Re-measured with an inline sink (the shm ring, published on the producing thread, so both
// layouts then have the same hops after the backend): end to end p50 154 µs pipelined vs 231 µs
// run to completion (compute 46 vs 106 µs, H cold), 2-core machine, load 4.6
// (docs/benchmarks.md, "Inline sinks"). The extra queue hop (~15 µs) costs less than cold H.
constexpr double kRunToCompletionMinRateHz = 500;
// A backend that is not synchronous (CUDA) runs to completion only up to this rate (pipeline.hpp).
constexpr double kAsyncRunToCompletionMaxRateHz = 5000;

size_t rounded_queue(size_t capacity) { return std::bit_ceil(std::max<size_t>(2, capacity)); }

size_t sink_queue_capacity(const PipelineOptions& o) {
  return rounded_queue(o.sink_queue_capacity ? o.sink_queue_capacity : o.queue_capacity);
}

size_t slots_needed(const PipelineOptions& o, const Reconstructor& r, size_t n_sinks) {
  const size_t batch = std::max<size_t>(1, std::min(o.max_batch, r.max_batch()));
  // The input queue full, every batch the backend can hold plus one being gathered, every sink
  // queue full with a burst taken off it inside each sink thread (kLaneBurst), and the few slots
  // held by the source, the fan-out and the live spare.
  return rounded_queue(o.queue_capacity) + batch * (std::max<size_t>(1, r.max_in_flight()) + 1) +
         n_sinks * (sink_queue_capacity(o) + kLaneBurst) + 4;
}

void validate(const recon::Model& model, const Source& source, const Reconstructor* backend,
              const PipelineOptions& o, bool normalize) {
  if (!backend) throw std::invalid_argument("pipeline: no reconstructor backend given");
  if (model.n_meas() == 0 || model.n_out() == 0)
    throw std::invalid_argument(fmt::format("model {}: H is {}×{}, expected a non-empty matrix",
                                            model.id, model.n_out(), model.n_meas()));
  if (source.n_values() != model.n_meas())
    throw std::invalid_argument(fmt::format(
        "source '{}' delivers {} values per frame, model {} ({}) expects {} measurements",
        source.describe(), source.n_values(), model.id, model.algorithm, model.n_meas()));
  if (backend->n_meas() != model.n_meas() || backend->n_out() != model.n_out())
    throw std::invalid_argument(fmt::format("backend '{}' is {}×{}, model {} is {}×{}",
                                            backend->name(), backend->n_out(), backend->n_meas(),
                                            model.id, model.n_out(), model.n_meas()));
  if (o.reference.mode == ReferenceMode::kModel) {
    if (model.v_ref.size() == 0)
      throw std::invalid_argument(fmt::format(
          "model {} has no v_ref: capture the reference from the stream (reference first:N)",
          model.id));
    if (static_cast<size_t>(model.v_ref.size()) != model.n_meas())
      throw std::invalid_argument(fmt::format("model {}: v_ref has {} values, H has {} columns",
                                              model.id, model.v_ref.size(), model.n_meas()));
  } else if (o.reference.mode == ReferenceMode::kGiven) {
    if (o.reference.values.size() != model.n_meas())
      throw std::invalid_argument(fmt::format("given reference has {} values, model {} has {}",
                                              o.reference.values.size(), model.id, model.n_meas()));
  } else if (o.reference.capture_frames == 0) {
    throw std::invalid_argument("reference capture: frame count is 0, expected at least 1");
  }
  if (o.max_batch == 0) throw std::invalid_argument("pipeline: max_batch is 0, expected ≥ 1");
  if (o.spin_ns < 0)
    throw std::invalid_argument(fmt::format("pipeline: spin_ns is {}, expected ≥ 0", o.spin_ns));
  (void)normalize;
}

}  // namespace

StageLayout resolve_layout(StageLayout asked, const Reconstructor& r,
                           const Source& source) noexcept {
  if (asked != StageLayout::kAuto) return asked;
  const double rate = source.nominal_rate_hz();
  const bool paced_fast_enough = rate >= kRunToCompletionMinRateHz &&
                                 (r.synchronous() || rate <= kAsyncRunToCompletionMaxRateHz);
  return r.fast_single_frames() && paced_fast_enough ? StageLayout::kRunToCompletion
                                                     : StageLayout::kPipelined;
}

bool takes_wake_hold(LatencyMode mode, WakeHold hold) noexcept {
  return hold == WakeHold::kOn || (hold == WakeHold::kAuto && mode == LatencyMode::kSpin);
}

int stage_cpu(const std::vector<int>& cpus, size_t thread_index) noexcept {
  return cpus.empty() ? -1 : cpus[thread_index % cpus.size()];
}

PollStyle stage_poll_style(const std::vector<int>& cpus, size_t thread_index,
                           const std::vector<size_t>& threads) noexcept {
  // Unpinned threads keep pausing: yielding showed no gain there (docs/benchmarks.md).
  if (cpus.empty()) return PollStyle::kPause;
  const int cpu = stage_cpu(cpus, thread_index);
  for (size_t other : threads)
    if (other != thread_index && stage_cpu(cpus, other) == cpu) return PollStyle::kYield;
  return PollStyle::kPause;
}

void tune_stage_thread(Pipeline::State& s, size_t thread_index, std::string_view name) noexcept {
  const PipelineOptions& o = s.options;
  name_this_thread(name);
#if defined(__linux__)
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  if (!o.cpus.empty()) {
    // Not pinned (a container's cpuset, an offline CPU) is reported in stats(), never fatal.
    const int result = pin_this_thread(stage_cpu(o.cpus, thread_index));
    s.pin_results[thread_index].store(result, std::memory_order_release);
  }
#else
  (void)o;
  (void)s;
  (void)thread_index;
#endif
}

void Pipeline::State::ring_all() noexcept {
  in_work.ring();
  in_room.ring();
  slot_freed.ring();
  for (auto& lane : lanes) {
    lane->work.ring();
    lane->room.ring();
  }
}

Pipeline::State::State(const recon::Model& m, Source& src, std::unique_ptr<Reconstructor> backend,
                       std::vector<ImageSink*> s, const PipelineOptions& o, size_t pool_slots)
    : model(m),
      source(src),
      primary(std::move(backend)),
      sinks(std::move(s)),
      options(o),
      normalize(o.normalize < 0 ? m.normalize : o.normalize > 0),
      pool(pool_slots, m.n_meas(), m.n_out(), primary->frame_allocator()),
      in_queue(o.queue_capacity),
      recycle_queue(pool_slots),
      refs(std::make_unique<std::atomic<uint32_t>[]>(pool_slots)),
      reference(m.n_meas()) {
  freed_slots.reserve(pool_slots);
  const bool lossless = o.policy == Policy::kLossless;
  pin_results = std::make_unique<std::atomic<int>[]>(sink_thread(sinks.size()));
  for (size_t i = 0; i < sink_thread(sinks.size()); ++i) pin_results[i].store(kPinNotTried);
  for (ImageSink* sink : sinks)
    lanes.push_back(std::make_unique<SinkLane>(*sink, sink_queue_capacity(o), pool_slots,
                                               lossless || sink->policy() == SinkPolicy::kBlock));
}

void Pipeline::State::set_error(std::string message) noexcept {
  try {
    std::lock_guard lock(error_mutex);
    error = std::move(message);
  } catch (...) {
  }
}

Pipeline::Pipeline(const recon::Model& model, Source& source,
                   std::unique_ptr<Reconstructor> backend, std::vector<ImageSink*> sinks,
                   PipelineOptions options) {
  const bool normalize = options.normalize < 0 ? model.normalize : options.normalize > 0;
  validate(model, source, backend.get(), options, normalize);
  for (const ImageSink* sink : sinks)
    if (!sink) throw std::invalid_argument("pipeline: a sink is null");
  const size_t slots = slots_needed(options, *backend, sinks.size());
  const StageLayout layout = resolve_layout(options.stages, *backend, source);
  state_ =
      std::make_unique<State>(model, source, std::move(backend), std::move(sinks), options, slots);
  State& s = *state_;
  s.primary->bind_frames(s.pool);  // the pool came from primary->frame_allocator()
  s.layout = layout;
  std::vector<size_t> threads = {0};  // the stage threads start() will run, by index
  if (layout == StageLayout::kPipelined) threads.push_back(1);
  for (size_t i = 0; i < s.lanes.size(); ++i)
    if (!s.lanes[i]->runs_inline) threads.push_back(sink_thread(i));
  s.source_poll = stage_poll_style(options.cpus, 0, threads);
  s.reconstructor_poll = stage_poll_style(options.cpus, 1, threads);
  // The thread that runs the inline sinks shares its CPU with their helpers (ZeroMQ's placed
  // I/O threads): it yields while it waits, as a sink thread would.
  for (const auto& lane : s.lanes)
    if (lane->runs_inline && lane->sink.helpers_on_caller_cpu())
      (layout == StageLayout::kPipelined ? s.reconstructor_poll : s.source_poll) =
          PollStyle::kYield;
  // A gn model has no H to fall back on (and its backend already runs on the host).
  if (options.on_fault == FaultPolicy::kFallbackToCpu && s.primary->name() != "cpu" && !model.gn)
    s.fallback = std::make_unique<CpuReconstructor>(
        model.H, CpuOptions{std::min<size_t>(options.max_batch, 64)});
  if (options.reference.mode != ReferenceMode::kCapture) {
    const std::vector<double> v_ref =
        options.reference.mode == ReferenceMode::kGiven
            ? options.reference.values
            : std::vector<double>(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
    s.primary->set_reference(v_ref, normalize);
    if (s.fallback) s.fallback->set_reference(v_ref, normalize);
  } else {
    s.reference.request(options.reference.capture_frames);
  }
}

Pipeline::~Pipeline() {
  if (!state_) return;
  request_stop();
  wait();
}

void Pipeline::start() {
  State& s = *state_;
  if (s.started.exchange(true)) return;
  s.started_ns.store(now_ns());
  if (takes_wake_hold(s.options.latency_mode, s.options.wake_hold))
    s.wake_hold = std::make_unique<CpuWakeHold>();
  for (size_t i = 0; i < s.lanes.size(); ++i) {
    SinkLane& lane = *s.lanes[i];
    if (lane.runs_inline) continue;  // the producing thread publishes it (sink_fanout.cpp)
    lane.thread =
        std::thread([&s, &lane, i, name = fmt::format("eit-sink-{}", s.sinks[i]->name())] {
          tune_stage_thread(s, sink_thread(i), name);
          run_sink_lane(s, lane);
        });
  }
  if (s.layout == StageLayout::kRunToCompletion) {
    s.source_thread = std::thread(run_inline_stage, std::ref(s));
  } else {
    s.reconstruct_thread = std::thread(run_reconstruct_stage, std::ref(s));
    s.source_thread = std::thread(run_source_stage, std::ref(s));
  }
}

void Pipeline::request_stop() noexcept {
  state_->stop_requested.store(true, std::memory_order_release);
  state_->source.stop();
  state_->ring_all();
}

void Pipeline::abort() noexcept {
  state_->aborted.store(true, std::memory_order_release);
  for (ImageSink* sink : state_->sinks) sink->abort();
  request_stop();
}

void Pipeline::wait() {
  State& s = *state_;
  if (!s.started.load()) return;
  for (std::thread* t : {&s.source_thread, &s.reconstruct_thread})
    if (t->joinable()) t->join();
  for (auto& lane : s.lanes)
    if (lane->thread.joinable()) lane->thread.join();
}

namespace {
bool lanes_done(const Pipeline::State& s) noexcept {
  for (const auto& lane : s.lanes)
    if (!lane->done.load(std::memory_order_acquire)) return false;
  return true;
}
}  // namespace

bool Pipeline::finished() const noexcept {
  const State& s = *state_;
  return s.started.load() && s.source_done.load(std::memory_order_acquire) &&
         s.recon_done.load(std::memory_order_acquire) && lanes_done(s);
}

bool Pipeline::source_finished() const noexcept {
  return state_->started.load() && state_->source_done.load(std::memory_order_acquire);
}

uint64_t Pipeline::frames_out() const noexcept {
  return state_->frames_out.load(std::memory_order_relaxed);
}

StageLayout Pipeline::layout() const noexcept { return state_->layout; }

void Pipeline::recapture_reference(size_t n_frames) noexcept {
  state_->reference.request(n_frames);
}

const PipelineOptions& Pipeline::options() const noexcept { return state_->options; }
size_t Pipeline::pool_size() const noexcept { return state_->pool.size(); }

HistogramSnapshot Pipeline::latency(size_t span, size_t sink) const noexcept {
  if (sink >= state_->lanes.size()) return {};
  return state_->lanes[sink]->latency[std::min(span, kSpanCount - 1)].snapshot();
}
HistogramSnapshot Pipeline::sink_latency(size_t sink) const noexcept {
  if (sink >= state_->lanes.size()) return {};
  return state_->lanes[sink]->call.snapshot();
}

PipelineStats Pipeline::stats() const {
  const State& s = *state_;
  constexpr auto r = std::memory_order_relaxed;
  PipelineStats st;
  st.now_ns = now_ns();
  st.started_ns = s.started_ns.load(r);
  st.running = s.started.load() && !finished();
  st.layout = std::string(layout_name(s.layout));
  st.latency_mode = std::string(latency_mode_name(s.options.latency_mode));
  if (s.wake_hold) st.cpu_wake_hold = s.wake_hold->describe();
  st.backend = std::string(s.using_fallback.load(r) ? s.fallback->name() : s.primary->name());
  st.frames_in = s.frames_in.load(r);
  st.frames_reconstructed = s.reconstructed.load(r);
  st.frames_out = s.frames_out.load(r);
  st.non_finite = s.non_finite.load(r);
  st.reference_frames = s.reference_frames.load(r);
  st.reference_captures = s.reference.completed();
  st.backend_faults = s.backend_faults.load(r);
  st.fallback_frames = s.fallback_frames.load(r);
  st.lost_on_fault = s.lost_on_fault.load(r);
  st.frames_met_polling = s.frames_met_polling.load(r);
  st.input = {s.in_queue.capacity(), s.in_queue.size_approx(), s.in_queue.high_water(),
              s.input_dropped.load(r)};
  st.source = s.source.stats();
  for (size_t i = 0; i < sink_thread(s.sinks.size()) && !s.options.cpus.empty(); ++i) {
    const int result = s.pin_results[i].load(std::memory_order_acquire);
    if (result == State::kPinNotTried) continue;  // not started, or no such thread
    st.thread_cpus.push_back({i == 0   ? std::string("source")
                              : i == 1 ? std::string("reconstructor")
                                       : fmt::format("sink {}", i - 2),
                              s.options.cpus[i % s.options.cpus.size()], result});
  }
  for (const ImageSink* sink : s.sinks) st.sinks.push_back(sink->stats());
  st.output.capacity = sink_queue_capacity(s.options);
  for (const auto& lane : s.lanes) {
    SinkQueueStats q;
    q.name = std::string(lane->sink.name());
    q.blocks = lane->blocks;
    q.runs_inline = lane->runs_inline;
    q.queue = {lane->queue.capacity(), lane->queue.size_approx(), lane->queue.high_water(),
               lane->dropped.load(r)};
    q.delivered = lane->delivered.load(r);
    q.latency = lane->latency[kSpanTotal].snapshot().summary();
    q.call = lane->call.snapshot().summary();
    st.output.depth = std::max(st.output.depth, q.queue.depth);
    st.output.high_water = std::max(st.output.high_water, q.queue.high_water);
    st.sink_queues.push_back(std::move(q));
  }
  if (!s.lanes.empty()) {
    for (size_t i = 0; i < kSpanCount; ++i)
      st.latency[i] = s.lanes.front()->latency[i].snapshot().summary();
    st.sink_call = s.lanes.front()->call.snapshot().summary();
  }
  {
    std::lock_guard lock(s.error_mutex);
    st.error = s.error;
  }
  return st;
}

}  // namespace eit::pipeline
