#pragma once
// CpuKeeper: keeps one CPU from going idle with a thread that spins there at the lowest priority
// Linux has (SCHED_IDLE). Any other thread woken on that CPU preempts it at once, so a thread that
// sleeps in the kernel there (ZeroMQ's I/O threads in epoll) is switched to in a few µs. Without
// it the CPU halts between messages, and on a virtual machine whose idle vCPUs halt in the
// hypervisor every wake-up there costs tens of µs (docs/benchmarks.md, "A CPU kept awake for
// ZeroMQ's I/O threads"). CpuWakeHold asks the same of every CPU through PM QoS, but only where
// the kernel has a cpuidle driver that honours it; this works on any, at the price of one busy
// CPU. For dedicated hosts in spin mode only.
//
// The spinner calls sched_yield() rather than spinning in user space: on the H200 host's VM a
// wake-up sent to a vCPU that never enters its kernel waited for a tick now and then (1-5 ms
// tails at p99.9, with or without PAUSE); entering the kernel on every turn removed them.
//
// Threads: construct and destroy on one thread; describe() from any thread once the keeper
// started (the constructor waits for it). Allocates at construction only.
#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>

namespace eit::pipeline {

class CpuKeeper {
 public:
  explicit CpuKeeper(int cpu);
  ~CpuKeeper();
  CpuKeeper(const CpuKeeper&) = delete;
  CpuKeeper& operator=(const CpuKeeper&) = delete;

  pid_t thread_id() const noexcept { return tid_; }  // the spinner's kernel thread id
  // True when the thread is on `cpu` alone at SCHED_IDLE, as asked.
  bool keeping() const noexcept { return keeping_; }
  // "keeping CPU 3 (SCHED_IDLE spinner)" or why not, e.g. "not keeping CPU 99: pinning: Invalid
  // argument" (the thread then ends at once: an unpinned spinner would only take CPU time).
  const std::string& describe() const noexcept { return text_; }

 private:
  int cpu_;
  pid_t tid_ = 0;
  bool keeping_ = false;
  std::string text_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace eit::pipeline
