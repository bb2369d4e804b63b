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
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {

size_t slots_needed(const PipelineOptions& o, const Reconstructor& r) {
  const size_t q = std::bit_ceil(std::max<size_t>(2, o.queue_capacity));
  const size_t batch = std::max<size_t>(1, std::min(o.max_batch, r.max_batch()));
  // Both queues full, every batch the backend can hold plus one being gathered, and the few
  // slots held by the source, the publish stage and the live spare.
  return 2 * q + batch * (std::max<size_t>(1, r.max_in_flight()) + 1) + 4;
}

void validate(const recon::Model& model, const Source& source,
              const Reconstructor* backend, const PipelineOptions& o, bool normalize) {
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
  (void)normalize;
}

}  // namespace

void tune_stage_thread() noexcept {
#if defined(__linux__)
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
}

Pipeline::State::State(const recon::Model& m, Source& src,
                       std::unique_ptr<Reconstructor> backend, std::vector<ImageSink*> s,
                       const PipelineOptions& o, size_t pool_slots)
    : model(m),
      source(src),
      primary(std::move(backend)),
      sinks(std::move(s)),
      options(o),
      normalize(o.normalize < 0 ? m.normalize : o.normalize > 0),
      pool(pool_slots, m.n_meas(), m.n_out(),
           o.allocator ? *o.allocator : default_host_allocator()),
      in_queue(o.queue_capacity),
      out_queue(o.queue_capacity),
      recycle_queue(pool_slots),
      reference(m.n_meas()) {}

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
  const size_t slots = slots_needed(options, *backend);
  state_ =
      std::make_unique<State>(model, source, std::move(backend), std::move(sinks), options, slots);
  State& s = *state_;
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
  s.publish_thread = std::thread(run_publish_stage, std::ref(s));
  s.reconstruct_thread = std::thread(run_reconstruct_stage, std::ref(s));
  s.source_thread = std::thread(run_source_stage, std::ref(s));
}

void Pipeline::request_stop() noexcept {
  state_->stop_requested.store(true, std::memory_order_release);
  state_->source.stop();
}

void Pipeline::abort() noexcept {
  state_->aborted.store(true, std::memory_order_release);
  for (ImageSink* sink : state_->sinks) sink->abort();
  request_stop();
}

void Pipeline::wait() {
  State& s = *state_;
  if (!s.started.load()) return;
  for (std::thread* t : {&s.source_thread, &s.reconstruct_thread, &s.publish_thread})
    if (t->joinable()) t->join();
}

bool Pipeline::finished() const noexcept {
  return state_->started.load() && state_->publish_done.load(std::memory_order_acquire) &&
         state_->source_done.load(std::memory_order_acquire);
}

void Pipeline::recapture_reference(size_t n_frames) noexcept {
  state_->reference.request(n_frames);
}

const PipelineOptions& Pipeline::options() const noexcept { return state_->options; }
size_t Pipeline::pool_size() const noexcept { return state_->pool.size(); }

HistogramSnapshot Pipeline::latency(size_t span) const noexcept {
  return state_->latency[std::min(span, kSpanCount - 1)].snapshot();
}
HistogramSnapshot Pipeline::sink_latency() const noexcept {
  return state_->sink_latency.snapshot();
}

PipelineStats Pipeline::stats() const {
  const State& s = *state_;
  constexpr auto r = std::memory_order_relaxed;
  PipelineStats st;
  st.now_ns = now_ns();
  st.started_ns = s.started_ns.load(r);
  st.running = s.started.load() && !s.publish_done.load(std::memory_order_acquire);
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
  st.input = {s.in_queue.capacity(), s.in_queue.size_approx(), s.in_queue.high_water(),
              s.input_dropped.load(r)};
  st.output = {s.out_queue.capacity(), s.out_queue.size_approx(), s.out_queue.high_water(),
               s.output_dropped.load(r)};
  st.source = s.source.stats();
  for (const ImageSink* sink : s.sinks) st.sinks.push_back(sink->stats());
  for (size_t i = 0; i < kSpanCount; ++i) st.latency[i] = s.latency[i].snapshot().summary();
  st.sink_call = s.sink_latency.snapshot().summary();
  {
    std::lock_guard lock(s.error_mutex);
    st.error = s.error;
  }
  return st;
}

}  // namespace eit::pipeline
