#pragma once
// CpuWakeHold: while held, asks the kernel to keep every CPU out of idle states whose exit takes
// longer than max_latency_us (Linux PM QoS: the value is written to /dev/cpu_dma_latency and the
// file kept open; the kernel drops the request when the file is closed, at destruction or at
// process exit, so nothing outlives the process). --latency-mode spin takes one for the whole run:
// a thread that sleeps anyway (ZeroMQ's I/O threads in epoll, a subscriber woken by an eventfd)
// then wakes in a few µs instead of the tens of µs a deep C-state exit costs on a server.
// Needs write access to /dev/cpu_dma_latency (root, or a udev rule granting it); without it the
// hold is not taken and why() says so: the run goes on, only without this help.
//
// Threads: construct and destroy on one thread; held()/why() from any thread after construction.
// Allocates only at construction (the message).
#include <cstdint>
#include <string>

namespace eit::pipeline {

class CpuWakeHold {
 public:
  explicit CpuWakeHold(int32_t max_latency_us = 0);
  ~CpuWakeHold();
  CpuWakeHold(const CpuWakeHold&) = delete;
  CpuWakeHold& operator=(const CpuWakeHold&) = delete;

  bool held() const noexcept { return fd_ >= 0; }
  // "held (cpu_dma_latency 0 µs)" or why not, e.g. "/dev/cpu_dma_latency: Permission denied".
  const std::string& describe() const noexcept { return text_; }

 private:
  int fd_ = -1;
  std::string text_;
};

}  // namespace eit::pipeline
