#include "eit/bench/run_result.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

#include <fmt/format.h>

namespace eit::bench {
namespace {

constexpr size_t kScheduled = static_cast<size_t>(pipeline::Stage::kScheduled);
constexpr size_t kReceived = static_cast<size_t>(pipeline::Stage::kReceived);
constexpr size_t kPublished = static_cast<size_t>(pipeline::Stage::kPublished);

IntervalResult make_interval(std::string name, size_t from, size_t to, std::vector<int64_t> v) {
  IntervalResult r;
  r.name = std::move(name);
  r.from = from;
  r.to = to;
  r.sorted_ns = std::move(v);
  r.summary = summarize(r.sorted_ns);
  return r;
}

}  // namespace

std::string RunConfig::label() const {
  const std::string rate = rate_hz > 0 ? fmt::format("{:g} Hz", rate_hz) : std::string("max");
  std::string label =
      fmt::format("{} {}x{} b{} {} {}", backend, n_out, n_meas, batch, transport, rate);
  if (stages != "auto")
    label += " " + (stages == "run-to-completion" ? std::string("rtc") : stages);
  if (latency_mode != "balanced") label += " " + latency_mode;
  if (wants_wake_hold() != (latency_mode == "spin"))
    label += wants_wake_hold() ? " hold" : " nohold";
  if (backend == "cpu" && cpu_threads > 1) label += fmt::format(" {}t", cpu_threads);
  if (backend == "cuda" && !cuda_l2) label += " l2off";
  if (zmq_io_wake == "defer") label += " defer";
  if (zmq_send == "inline") label += " inline";
  if (static_cast<int64_t>(warm_us) != pipeline::kDefaultWarmIntervalUs)
    label += fmt::format(" warm{}", warm_us);
  if (latency_mode != "spin" && rate_hz > 0 && source_poll_us != kDefaultSourcePollUs)
    label += fmt::format(" poll{}", source_poll_us);
  if (publish_batch > 1) label += fmt::format(" pb{}", publish_batch);
  return label;
}

pipeline::LatencyMode RunConfig::pipeline_latency_mode() const noexcept {
  return pipeline::latency_mode_from_name(latency_mode).value_or(pipeline::LatencyMode::kBalanced);
}

pipeline::StageLayout RunConfig::pipeline_stages() const noexcept {
  return pipeline::layout_from_name(stages).value_or(pipeline::StageLayout::kAuto);
}

pipeline::WakeHold RunConfig::pipeline_wake_hold() const noexcept {
  return pipeline::wake_hold_from_name(wake_hold).value_or(pipeline::WakeHold::kAuto);
}

bool RunConfig::wants_wake_hold() const noexcept {
  return pipeline::takes_wake_hold(pipeline_latency_mode(), pipeline_wake_hold());
}

std::string_view interval_name(size_t index) noexcept {
  static constexpr std::array<std::string_view, kChainIntervals> kNames{
      "source",     // scheduled → received: pacing lateness and the source's own work
      "enqueue",    // received → enqueued: hand-over to the reconstructor's queue (and, lossless,
                    // waiting for room)
      "queue",      // enqueued → dequeued: waiting in the queue
      "batch",      // dequeued → submitted: gathering a batch
      "compute",    // submitted → done: the backend
      "out_queue",  // done → published: waiting for the publish stage
      "transport",  // published → subscribed: the send call and ZeroMQ to the subscriber
  };
  return index < kNames.size() ? kNames[index] : std::string_view("?");
}

RunResult analyze_run(const StampRecorder& recorder, uint64_t first_seq, const RunConfig& config,
                      const PipelineCounters& counters) {
  RunResult r;
  r.config = config;
  r.counters = counters;
  r.first_seq = first_seq;
  r.frames_total = config.warmup + config.frames;
  r.warmup_excluded = config.warmup;

  std::array<std::vector<int64_t>, kChainIntervals> samples;
  for (auto& s : samples) s.reserve(config.frames);
  std::vector<int64_t> e2e, pipe, own, send;
  for (auto* v : {&e2e, &pipe, &own, &send}) v->reserve(config.frames);
  r.end_to_end_over_time.reserve(config.frames);

  int64_t t0 = 0, last_recv = 0, first_sched = 0, last_sched = 0;
  uint64_t first_measured_seq = 0, last_measured_seq = 0;
  for (uint64_t seq = first_seq + config.warmup; seq < first_seq + r.frames_total; ++seq) {
    std::array<int64_t, kStampColumns> t{};
    for (size_t c = 0; c < kStampColumns; ++c) t[c] = recorder.stamp(seq, c);
    if (t[kScheduled] == 0) t[kScheduled] = t[kReceived];  // unpaced source: schedule = arrival
    if (t[kPublished] == 0 || t[kSentColumn] == 0) {
      ++r.not_published;
      continue;
    }
    if (t[kSubscriberColumn] == 0) {
      ++r.not_received;
      continue;
    }
    // "sent" is off the chain: the subscriber may hold the image before the publishing thread
    // returns from its send call, so only sent ≥ published is required of it.
    bool ordered = t[kChain[0]] > 0 && t[kSentColumn] >= t[kPublished];
    for (size_t i = 1; i < kChain.size() && ordered; ++i)
      ordered = t[kChain[i]] >= t[kChain[i - 1]];
    if (!ordered) {
      ++r.inconsistent;
      continue;
    }
    int64_t sum = 0;
    for (size_t i = 0; i < kChainIntervals; ++i) {
      samples[i].push_back(t[kChain[i + 1]] - t[kChain[i]]);
      sum += t[kChain[i + 1]] - t[kChain[i]];
    }
    const int64_t total = t[kSubscriberColumn] - t[kScheduled];
    r.max_sum_error_ns = std::max<int64_t>(r.max_sum_error_ns, std::llabs(sum - total));
    e2e.push_back(total);
    pipe.push_back(t[kPublished] - t[kScheduled]);
    own.push_back(t[kSentColumn] - t[kReceived]);
    send.push_back(t[kSentColumn] - t[kPublished]);
    if (r.measured == 0) {
      t0 = first_sched = t[kScheduled];
      first_measured_seq = seq;
    }
    last_measured_seq = seq;
    last_sched = t[kScheduled];
    last_recv = t[kSubscriberColumn];
    r.end_to_end_over_time.emplace_back(static_cast<double>(t[kScheduled] - t0) * 1e-9, total);
    ++r.measured;
  }

  if (r.measured >= 2) {
    // Offered: seqs scheduled per second (gaps from drops still count as offered frames);
    // delivered: images that arrived complete, per second from the first one's schedule to the
    // last one's arrival: the bare ZeroMQ loop's definition (zmq_reference.cpp), so that their
    // ratio compares like with like (first to last arrival left the first latency out).
    const auto span_s = [](int64_t a, int64_t b) { return static_cast<double>(b - a) * 1e-9; };
    if (last_sched > first_sched)
      r.offered_fps = static_cast<double>(last_measured_seq - first_measured_seq) /
                      span_s(first_sched, last_sched);
    if (last_recv > first_sched)
      r.delivered_fps = static_cast<double>(r.measured) / span_s(first_sched, last_recv);
    r.window_s = span_s(first_sched, last_recv);
  }
  for (size_t i = 0; i < kChainIntervals; ++i)
    r.intervals.push_back(make_interval(std::string(interval_name(i)), kChain[i], kChain[i + 1],
                                        std::move(samples[i])));
  r.end_to_end = make_interval("end_to_end", kScheduled, kSubscriberColumn, std::move(e2e));
  r.pipeline = make_interval("pipeline", kScheduled, kPublished, std::move(pipe));
  r.frame_to_image = make_interval("frame_to_image", kReceived, kSentColumn, std::move(own));
  r.send_call = make_interval("send_call", kPublished, kSentColumn, std::move(send));
  return r;
}

}  // namespace eit::bench
