// The status loop of `eitstream run` (run_loop.hpp).
#include "run_loop.hpp"

#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/zmq_io_placement.hpp"
#include "run_inputs.hpp"
#include "run_nats.hpp"
#include "run_report.hpp"
#include "source_watchdog.hpp"
#include "stop_signals.hpp"

namespace eit::cli {
namespace {

// "source → CPU 2 pinned, …, zmq io (publisher) → CPU 4 pinned": each pinned stage thread and
// each placed ZeroMQ I/O thread (run_sinks.cpp), as the kernel reports it.
std::string cpu_line(const pipeline::PipelineStats& st, const RunSinks& sinks) {
  std::vector<std::string> parts;
  for (const auto& t : st.thread_cpus)
    parts.push_back(fmt::format(
        "{} → CPU {} {}", t.thread, t.cpu,
        t.error == 0 ? "pinned" : fmt::format("not pinned: {}", std::strerror(t.error))));
  const auto io_part = [&](const char* name, const sinks::ZmqPublisher* p) {
    if (!p || p->io_tag() < 0) return;
    const int cpu = p->io_cpu();
    const std::vector<int> seen = sinks::io_thread_cpus(0, p->io_tag(), cpu);
    std::string outcome = "pinned";
    if (seen.empty())
      outcome = "not found";
    else if (seen != std::vector<int>{cpu})
      outcome = fmt::format("on CPUs {}", fmt::join(seen, ","));
    if (p->io_defers())
      outcome += sinks::io_thread_policy(0, p->io_tag(), SCHED_BATCH) == SCHED_BATCH
                     ? ", deferring (SCHED_BATCH)"
                     : ", not seen at SCHED_BATCH";
    parts.push_back(fmt::format("zmq io ({}) → CPU {} {}", name, cpu, outcome));
  };
  io_part("publisher", sinks.publisher.get());
  io_part("monitor", sinks.monitor.get());
  if (sinks.io_keeper) parts.push_back(sinks.io_keeper->describe());
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Frames the source delivered that the publisher has neither sent nor dropped: still queued.
uint64_t frames_waiting_for_consumer(const RunSinks& sinks, const pipeline::PipelineStats& st) {
  const auto sent = sinks.publisher->stats();
  const uint64_t handled = sent.sent + sent.dropped;
  return st.frames_in > handled ? st.frames_in - handled : 0;
}

// Lossless: the frames queued for the consumer may never leave (no consumer, or one that stopped
// reading). Asked to stop, the run waits for them a bounded time, saying so, instead of for ever.
void stop_waiting_for_consumer(const RunSinks& sinks, const pipeline::PipelineStats& st, bool quiet,
                               bool by_signal) {
  if (!sinks.publisher_options.lossless) return;
  const double wait_s = sinks.publisher_options.drain_timeout_s;
  sinks.publisher->stop_waiting_at(pipeline::now_ns() + static_cast<int64_t>(wait_s * 1e9));
  const uint64_t waiting = frames_waiting_for_consumer(sinks, st);
  if (!quiet && waiting > 0)
    fmt::print(stderr,
               "\neitstream: stopping: waiting up to {:g} s for the consumer to take {} frames "
               "(lossless); Ctrl-C {}to give up\n",
               wait_s, waiting, by_signal ? "again " : "");
}

// Lossless: a consumer that takes no frame stalls the run (the queues fill, then a file source
// waits). The run says so once the consumer has taken nothing for the drain wait, and waits on
// while more frames may come, since the consumer may come back. Once the source has ended, the
// queued frames wait as long as the consumer keeps taking them; when it has taken none for the
// drain wait, the run gives up on the rest, counted as lost (exit 4), instead of waiting for ever.
class LosslessStallWatch {
 public:
  explicit LosslessStallWatch(const RunSinks& sinks) : sinks_(sinks) {}

  // Takes the pipeline, not its stats: stats() copies every stage's histograms, too much to do
  // 50 times a second in a run that is not lossless.
  void check(const pipeline::Pipeline& pipe, int64_t now, bool quiet) {
    if (!sinks_.publisher_options.lossless || gave_up_) return;
    const pipeline::PipelineStats st = pipe.stats();
    const bool source_ended = pipe.source_finished();
    const uint64_t sent = sinks_.publisher->stats().sent;
    const uint64_t waiting = frames_waiting_for_consumer(sinks_, st);
    if (sent != last_sent_ || last_progress_ns_ == 0 || waiting == 0) {
      last_sent_ = sent;
      last_progress_ns_ = now;
      told_ = false;
      return;
    }
    const double wait_s = sinks_.publisher_options.drain_timeout_s;
    if (now - last_progress_ns_ < static_cast<int64_t>(wait_s * 1e9)) return;
    if (source_ended) {
      sinks_.publisher->stop_waiting_at(now);
      gave_up_ = true;
      if (!quiet)
        fmt::print(stderr,
                   "\neitstream: the source ended and the consumer took no frame for {:g} s: "
                   "giving up on {} frames (lossless)\n",
                   wait_s, waiting);
    } else if (!told_ && !quiet) {
      fmt::print(stderr,
                 "\neitstream: the consumer took no frame for {:g} s; {} frames wait for it "
                 "(lossless: the run waits for it to come back; Ctrl-C to stop)\n",
                 wait_s, waiting);
      told_ = true;
    }
  }

 private:
  const RunSinks& sinks_;
  uint64_t last_sent_ = 0;
  int64_t last_progress_ns_ = 0;
  bool told_ = false, gave_up_ = false;
};

// The end of a run without its wait: once the stream has stopped (a stop was asked, or the
// source ended), every interval in which no image reached the sinks is time spent waiting for
// them to finish (a lossless consumer, NATS, a recording), not streaming. Frames still moving
// after the stop (a backlog being reconstructed) count as streaming.
class StopWait {
 public:
  void sample(const pipeline::Pipeline& pipe, bool stopping, int64_t now) {
    if (!stopping && !pipe.source_finished()) {
      last_ns_ = 0;
      return;
    }
    const uint64_t frames_out = pipe.frames_out();
    if (frames_out == last_out_ && last_ns_ != 0) waited_ns_ += now - last_ns_;
    last_out_ = frames_out;
    last_ns_ = now;
  }
  double seconds() const { return static_cast<double>(waited_ns_) / 1e9; }

 private:
  uint64_t last_out_ = 0;
  int64_t last_ns_ = 0, waited_ns_ = 0;
};

}  // namespace

RunEnd run_until_finished(const RunConfig& c, pipeline::Pipeline& pipe, const RunSinks& sinks,
                          bool device_source, const StopSignals& interrupts) {
  const bool tty = isatty(fileno(stderr));
  pipe.start();
  if (const std::string hold = pipe.stats().cpu_wake_hold; !hold.empty() && !c.quiet)
    fmt::print(stderr, "eitstream: CPU wake-up hold: {}\n", hold);
  StatusLine status(pipe);
  const int64_t t0 = pipeline::now_ns();
  int64_t next_status = t0 + 500'000'000;
  bool cpus_told = c.cpus.empty() || c.quiet;
  SourceWatchdog watchdog(c.source, device_source ? c.source_timeout : 0, t0);
  std::string source_failure;
  int64_t next_watch = t0;
  bool stopping = false, aborted = false;
  int signals_at_stop = 0;  // a signal after the stop began gives up the wait
  bool recording_failure_told = false;
  LosslessStallWatch stall_watch(sinks);
  StopWait stop_wait;
  while (!pipe.finished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t now = pipeline::now_ns();
    stop_wait.sample(pipe, stopping, now);
    const bool timed_out = c.duration > 0 && now - t0 >= static_cast<int64_t>(c.duration * 1e9);
    if (!stopping && (interrupts.count() > 0 || timed_out)) {
      stopping = true;
      signals_at_stop = interrupts.count();
      pipe.request_stop();
      stop_waiting_for_consumer(sinks, pipe.stats(), c.quiet, signals_at_stop > 0);
      if (sinks.nats && !c.quiet)
        if (const std::string wait = nats_stop_wait(*sinks.nats); !wait.empty())
          fmt::print(stderr, "\neitstream: stopping: {}; Ctrl-C {}to give up\n", wait,
                     signals_at_stop > 0 ? "again " : "");
    }
    if (device_source && !stopping && now >= next_watch) {
      const auto st = pipe.stats();
      if (auto why = watchdog.check(st.source, st.frames_in, now)) {
        source_failure = *why;
        stopping = true;
        signals_at_stop = interrupts.count();
        pipe.request_stop();
      }
      next_watch = now + 100'000'000;
    }
    if (!stopping) stall_watch.check(pipe, now, c.quiet);
    if (!aborted && stopping && interrupts.count() > signals_at_stop) {
      aborted = true;
      pipe.abort();
    }
    if (!cpus_told && now >= next_status) {  // the stage threads have pinned themselves by now
      fmt::print(stderr, "{}eitstream: CPUs: {}\n", tty ? "\r\x1b[K" : "",
                 cpu_line(pipe.stats(), sinks));
      cpus_told = true;
    }
    // A recorder that stopped (a full disk) says so at once, once, on its own line: the status
    // line is overwritten, and the stream goes on without the file.
    if (!recording_failure_told && now >= next_status) {
      if (const std::string failed = recording_failure(sinks.recorders); !failed.empty()) {
        fmt::print(stderr, "{}eitstream: RECORDING STOPPED: {}; the stream goes on\n",
                   tty ? "\r\x1b[K" : "", failed);
        recording_failure_told = true;
      }
    }
    if (!c.quiet && now >= next_status) {
      std::string line = fmt::format("{} | {}", status.next(), sinks.publisher->health_line());
      if (sinks.nats) line += " | " + nats_status(*sinks.nats);
      if (sinks.monitor) line += " | monitor " + sinks.monitor->health_line();
      if (tty)
        fmt::print(stderr, "\r{}\x1b[K", line);
      else
        fmt::print(stderr, "{}\n", line);
      std::fflush(stderr);
      next_status = now + 500'000'000;
    }
  }
  pipe.wait();
  if (!cpus_told)  // a run shorter than the first status line
    fmt::print(stderr, "eitstream: CPUs: {}\n", cpu_line(pipe.stats(), sinks));
  if (!c.quiet && tty) fmt::print(stderr, "\n");
  if (device_source && source_failure.empty()) {
    const auto st = pipe.stats();
    source_failure = watchdog.at_end(st.source, st.frames_in).value_or("");
  } else if (!stopping && is_recording(c)) {
    // A recording that ended by itself without one frame (every frame unreadable): nothing was
    // reconstructed, which is no success.
    const auto st = pipe.stats();
    source_failure = watchdog.at_end(st.source, st.frames_in).value_or("");
  }
  return {source_failure, stop_wait.seconds()};
}

}  // namespace eit::cli
