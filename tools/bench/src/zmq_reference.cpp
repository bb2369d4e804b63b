#include "eit/bench/zmq_reference.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <zmq.hpp>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/bench/measuring_subscriber.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_keeper.hpp"
#include "eit/pipeline/cpu_wake_hold.hpp"
#include "eit/pipeline/doorbell_wait.hpp"
#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/zmq_io_placement.hpp"
#include "eit/sinks/zmq_publisher.hpp"

namespace eit::bench {
namespace {

constexpr std::string_view kTopic = "eit/bench/img";  // the bench publisher's image topic
constexpr std::string_view kBatchTopic = "eit/bench/imgs";  // … and its batch topic
constexpr double kAssumedMaxRate = 100'000;           // messages/s, for estimates at max
constexpr double kSetUpSeconds = 0.5;                 // subscriber start, connection, drain

std::string pattern_of(const RunConfig& run) {
  if (run.transport == "shm") return "ring";
  return run.policy == "lossless" ? "push" : "pub";
}

// Spin: polls the clock; `yield` offers the CPU between polls (to ZeroMQ's I/O threads when
// they share it, as the pipeline's sink lane does).
void wait_for(int64_t due_ns, bool spin, bool yield = false) noexcept {
  if (spin) {
    while (pipeline::now_ns() < due_ns)
      if (yield)
        sched_yield();
      else
        pipeline::cpu_relax();
    return;
  }
  const timespec ts{static_cast<time_t>(due_ns / 1'000'000'000),
                    static_cast<long>(due_ns % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

// Sends one multipart message; live: never waits (false on a full queue), lossless: waits (in
// send-timeout steps) until `give_up_ns`.
bool send_parts(zmq::socket_t& socket, zmq::message_t (&parts)[3], bool wait,
                int64_t give_up_ns) noexcept {
  const auto base = wait ? zmq::send_flags::none : zmq::send_flags::dontwait;
  try {
    while (!socket.send(parts[0], base | zmq::send_flags::sndmore))
      if (!wait || pipeline::now_ns() > give_up_ns) return false;
    // Multipart messages are atomic: once the first part is in, the others go in too.
    (void)socket.send(parts[1], base | zmq::send_flags::sndmore);
    (void)socket.send(parts[2], base);
    return true;
  } catch (const zmq::error_t&) {
    return false;
  }
}

// The runs' CPUs for the sender (their source's) and the receiver (their subscriber's).
void plan_cpus(ZmqReference& ref, const RunConfig& run) {
  for (const char* t : {"source", "subscriber"})
    if (const int cpu = cpu_of(run.cpus, t); cpu >= 0)
      ref.cpus.push_back({t == std::string_view("source") ? "sender" : "receiver", cpu});
}
int sender_cpu(const ZmqReference& ref) noexcept { return cpu_of(ref.cpus, "sender"); }
int receiver_cpu(const ZmqReference& ref) noexcept { return cpu_of(ref.cpus, "receiver"); }

// `call_ns[i]`: how long message i's send call took (0: none was made).
void summarize_into(ZmqReference& ref, const std::vector<int64_t>& sent_ns,
                    const std::vector<int64_t>& call_ns, const SubscriberReport& received,
                    int sender_pin_error) {
  for (ThreadCpu& t : ref.cpus) {
    if (t.thread == "sender") t.error = sender_pin_error;
    if (t.thread == "receiver") t.error = received.pin_error;
  }
  const size_t total = sent_ns.size();
  std::vector<int64_t> received_ns(total, 0);
  for (const auto& r : received.times)
    if (r.seq < total) received_ns[r.seq] = r.t_ns;
  ref.received = received.counts.images;
  std::vector<int64_t> one_way;
  one_way.reserve(ref.frames);
  int64_t first_sent = 0, last_received = 0;
  for (size_t seq = ref.warmup; seq < total; ++seq) {
    if (sent_ns[seq] == 0) continue;  // dropped at the send: counted in send_dropped
    if (received_ns[seq] == 0) {
      ++ref.lost;
      continue;
    }
    one_way.push_back(received_ns[seq] - sent_ns[seq]);
    if (first_sent == 0) first_sent = sent_ns[seq];
    last_received = std::max(last_received, received_ns[seq]);
  }
  ref.measured = one_way.size();
  ref.one_way = summarize(one_way);
  std::vector<int64_t> calls;
  calls.reserve(total - std::min(total, ref.warmup));
  for (size_t seq = ref.warmup; seq < total; ++seq)
    if (sent_ns[seq] != 0 && call_ns[seq] > 0) calls.push_back(call_ns[seq]);
  ref.send_call = summarize(calls);
  if (ref.measured > 0 && last_received > first_sent)
    ref.delivered_fps =
        static_cast<double>(ref.measured) * 1e9 / static_cast<double>(last_received - first_sent);
}

// The bare shm reference: a ShmPublisher fed the same schedule straight from this thread (no
// pipeline), read by the same subscriber child. The ring is live whatever the policy.
ZmqReference run_shm_reference(ZmqReference ref, const RunConfig& run,
                               const std::string& executable) {
  const size_t total = run.warmup + run.frames;
  const bool spin = run.latency_mode == "spin";
  recon::Model model;  // only its size and (empty) geometry reach the series message
  model.H.resize(static_cast<Eigen::Index>(run.n_out), 0);
  sinks::ShmPublisherOptions options;
  options.uri = bench_endpoint("shm");
  options.slots = 1024;  // as the bench's runs
  options.series.stream = "bench";
  sinks::ShmPublisher publisher(model, options);
  ref.endpoint = publisher.uri();
  ref.message_bytes = sizeof(sinks::ImageHeader) + run.n_out * sizeof(float);
  std::vector<float> image(run.n_out, 0.5f);
  std::vector<int64_t> sent_ns(total, 0), call_ns(total, 0);
  std::optional<pipeline::CpuWakeHold> wake_hold;
  if (ref.wake_hold) {  // as the runs' pipeline takes it (system-wide: the receiver too)
    wake_hold.emplace();
    ref.cpu_wake_hold = wake_hold->describe();
  }
  zmq::context_t unused;  // MeasuringSubscriber's signature; shm needs no context
  MeasuringSubscriber subscriber(unused, executable, ref.endpoint, total,
                                 {false, spin, receiver_cpu(ref)});
  const ScopedThreadPin pin(sender_cpu(ref));  // after the child is forked: it must not inherit
  pipeline::FrameSlot frame;
  frame.image = image.data();
  const int64_t period = run.rate_hz > 0 ? std::llround(1e9 / run.rate_hz) : 0;
  const int64_t t0 = pipeline::now_ns();
  for (size_t i = 0; i < total; ++i) {
    if (period > 0) wait_for(t0 + static_cast<int64_t>(i) * period, spin);
    frame.seq = i;
    const int64_t t = pipeline::now_ns();
    frame.stamp(pipeline::Stage::kPublished, t);
    publisher.publish(frame);
    call_ns[i] = pipeline::now_ns() - t;
    sent_ns[i] = t;
    ++ref.sent;
  }
  publisher.end();
  summarize_into(ref, sent_ns, call_ns, subscriber.finish(), pin.error());
  return ref;
}

}  // namespace

size_t reference_batch(const RunConfig& run) noexcept {
  if (run.rate_hz > 0 || run.transport == "shm") return 1;
  return sinks::fitting_publish_batch(run.publish_batch, run.n_out);
}

double estimated_reference_seconds(const RunConfig& run) noexcept {
  const double n = static_cast<double>(run.warmup + run.frames);
  return n / (run.rate_hz > 0 ? run.rate_hz : kAssumedMaxRate) + kSetUpSeconds;
}

bool same_setup(const ZmqReference& ref, const RunConfig& run) noexcept {
  return ref.transport == run.transport && ref.pattern == pattern_of(run) &&
         ref.latency_mode == run.latency_mode && ref.wake_hold == run.wants_wake_hold() &&
         ref.zmq_io_cpu == run.zmq_io_cpu && ref.zmq_io_wake == run.zmq_io_wake &&
         ref.rate_hz == run.rate_hz && ref.n_out == run.n_out && ref.frames == run.frames &&
         ref.warmup == run.warmup && ref.publish_batch == reference_batch(run) &&
         sender_cpu(ref) == cpu_of(run.cpus, "source") &&
         receiver_cpu(ref) == cpu_of(run.cpus, "subscriber");
}

ZmqReference run_zmq_reference(const RunConfig& run, const std::string& executable) {
  if (run.frames == 0) throw std::invalid_argument("--frames: must be ≥ 1");
  ZmqReference ref;
  ref.transport = run.transport;
  ref.pattern = pattern_of(run);
  ref.latency_mode = run.latency_mode;
  ref.wake_hold = run.wants_wake_hold();
  ref.zmq_io_cpu = run.zmq_io_cpu;
  ref.zmq_io_wake = run.zmq_io_wake;
  ref.rate_hz = run.rate_hz;
  ref.n_out = run.n_out;
  ref.frames = run.frames;
  ref.warmup = run.warmup;
  ref.publish_batch = reference_batch(run);
  plan_cpus(ref, run);
  if (run.transport == "shm") return run_shm_reference(std::move(ref), run, executable);
  const size_t batch = ref.publish_batch;
  ref.message_bytes = (batch > 1 ? kBatchTopic : kTopic).size() +
                      batch * (sizeof(sinks::ImageHeader) + run.n_out * sizeof(float));
  const size_t total = run.warmup + run.frames;
  const bool push = ref.pattern == "push";
  const bool spin = run.latency_mode == "spin";

  // Everything the loop touches, allocated first: one header per image (libzmq reads it after
  // send() returns, so none is reused; a batch's headers are consecutive), one constant payload
  // of a whole batch, the send times.
  std::vector<sinks::ImageHeader> headers(total);
  for (auto& h : headers) {
    h.shape[0] = static_cast<uint32_t>(run.n_out);
    h.count = static_cast<uint32_t>(run.n_out);
    h.series_id = 1;
  }
  const std::vector<float> payload(run.n_out * batch, 0.5f);
  std::vector<int64_t> sent_ns(total, 0), call_ns(total, 0);
  std::optional<pipeline::CpuWakeHold> wake_hold;
  if (ref.wake_hold) {  // as the runs' pipeline takes it (system-wide: the receiver too)
    wake_hold.emplace();
    ref.cpu_wake_hold = wake_hold->describe();
  }

  const sinks::ZmqPublisherOptions publisher;  // the options the bench's publisher runs with
  zmq::context_t context(1);
  // Both contexts' I/O threads on the sender's CPU, as a run places them on its sink thread's
  // (bench_runner.cpp), the sender's polls (spin mode) then yielding to them; or, spin mode, on
  // the CPU the run gave its own I/O threads.
  const int io_cpu = run.zmq_io_cpu == "sink"   ? sender_cpu(ref)
                     : spin && run.own_io_cpu() ? cpu_of(run.cpus, "zmq io (publisher)")
                                                : -1;
  std::optional<pipeline::CpuKeeper> keeper;  // as the run keeps its I/O threads' CPU
  if (io_cpu >= 0 && run.zmq_io_cpu == "own") {
    keeper.emplace(io_cpu);
    ref.cpu_keeper = keeper->describe();
  }
  const sinks::IoWake wake =
      run.zmq_io_wake == "defer" ? sinks::IoWake::kDefer : sinks::IoWake::kPreempt;
  const int io_tag = io_cpu >= 0 ? sinks::place_io_threads(context, io_cpu, wake) : -1;
  zmq::socket_t socket(context, push ? zmq::socket_type::push : zmq::socket_type::pub);
  std::string ipc_path;
  try {
    socket.set(zmq::sockopt::sndhwm, publisher.send_hwm);
    socket.set(zmq::sockopt::linger, publisher.linger_ms);
    socket.set(zmq::sockopt::sndtimeo, 100);
    socket.set(zmq::sockopt::maxmsgsize, publisher.max_inbound_bytes);
    socket.bind(bench_endpoint(run.transport));
    ref.endpoint = socket.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(fmt::format("bare ZeroMQ reference: cannot bind a {} socket on {}: {}",
                                         ref.pattern, run.transport, e.what()));
  }
  if (ref.endpoint.starts_with("ipc://")) ipc_path = ref.endpoint.substr(6);
  {
    MeasuringSubscriber subscriber(context, executable, ref.endpoint, total,
                                   {push, spin, receiver_cpu(ref), io_cpu});
    if (io_cpu >= 0) {
      ref.cpus.push_back(io_thread_placement("zmq io (sender)", 0, io_tag, io_cpu));
      if (const pid_t child = subscriber.child_pid(); child > 0)
        ref.cpus.push_back(io_thread_placement("zmq io (receiver)", child, sinks::kAnyTag, io_cpu));
    }
    // Pinned after the socket (its I/O thread keeps this thread's unpinned CPUs, as the runs'
    // publisher context's does) and the child (it must not inherit the pin); undone after.
    const ScopedThreadPin pin(sender_cpu(ref));
    const int64_t period = run.rate_hz > 0 ? std::llround(1e9 / run.rate_hz) : 0;
    const auto give_up = static_cast<int64_t>(publisher.drain_timeout_s * 1e9);
    const int64_t t0 = pipeline::now_ns();
    for (size_t i = 0; i < total; i += batch) {
      if (period > 0)
        wait_for(t0 + static_cast<int64_t>(i) * period, spin,
                 io_cpu >= 0 && io_cpu == sender_cpu(ref));
      const size_t n = std::min(batch, total - i);
      const int64_t t = pipeline::now_ns();
      for (size_t k = i; k < i + n; ++k) {
        headers[k].seq = k;
        headers[k].t_published_ns = t;
      }
      const std::string_view topic = n > 1 ? kBatchTopic : kTopic;
      zmq::message_t parts[3] = {
          zmq::message_t(const_cast<char*>(topic.data()), topic.size(), nullptr, nullptr),
          zmq::message_t(&headers[i], n * sizeof(sinks::ImageHeader), nullptr, nullptr),
          zmq::message_t(const_cast<float*>(payload.data()), n * run.n_out * sizeof(float), nullptr,
                         nullptr)};
      const bool sent = send_parts(socket, parts, push, t + give_up);
      call_ns[i] = pipeline::now_ns() - t;  // a batch's call counts once, at its first image
      if (sent) {
        std::fill_n(sent_ns.begin() + static_cast<std::ptrdiff_t>(i), n, t);
        ref.sent += n;
      } else {
        ref.send_dropped += n;
      }
    }
    sinks::SeriesInfo series;
    series.stream = "bench";
    const std::string end = sinks::series_end_json(series, ref.sent, ref.send_dropped);
    const std::string topic = "eit/bench/series";
    (void)socket.send(zmq::buffer(topic), zmq::send_flags::sndmore);
    (void)socket.send(zmq::buffer(end), zmq::send_flags::none);
    summarize_into(ref, sent_ns, call_ns, subscriber.finish(), pin.error());
  }
  socket.close();
  if (!ipc_path.empty()) std::filesystem::remove(ipc_path);
  return ref;
}

}  // namespace eit::bench
