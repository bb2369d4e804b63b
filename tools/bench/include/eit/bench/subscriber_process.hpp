#pragma once
// The benchmark's subscriber in a separate process, so the published images really cross a
// process boundary (ipc, tcp). The parent runs `<eitstream> bench --subscriber-only ENDPOINT
// --subscriber-capacity N [--subscriber-pull] [--subscriber-spin] [--subscriber-cpu C]
// [--subscriber-io-cpu D]` (fork + exec of its own executable) and talks to it over two pipes:
//   child stdout: "ready\n" once it has connected and subscribed (and pinned itself to CPU C
//                 after its ZeroMQ context's I/O thread has started, so that thread stays free to
//                 run elsewhere: on CPU D when given, the sender's CPU in spin mode); at the end,
//                 the binary record "EITBSUB3", eight uint64 fields (images, overflow, malformed,
//                 series, series_end, pinning result as ThreadCpu::error, n, batch messages), then
//                 n × (uint64 seq, int64 receive time in CLOCK_MONOTONIC ns);
//   child stdin:  the parent closes it when the pipeline has finished; the child then keeps
//                 receiving until 300 ms pass without a message (or the series-end arrives)
//                 and writes its record.
// For an endpoint shm://NAME the child reads the shared-memory ring instead
// (shm_image_receiver.hpp) and writes the same record. CLOCK_MONOTONIC is shared by all processes
// of a host, so the child's times compare directly with the pipeline's stamps.
//
// Threads: a SubscriberProcess is used by one thread. Set-up failures (spawn, no "ready" in
// time, a malformed record) throw std::runtime_error saying what happened.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "eit/bench/image_subscriber.hpp"

namespace eit::bench {

// How the subscriber receives: pull — a PULL socket for a PUSH publisher (else SUB); spin —
// busy-poll the socket without sleeping and hold a CpuWakeHold (the pair of --latency-mode spin),
// else sleep in zmq_poll until a message is there.
// cpu ≥ 0: pin the receiving thread to it (cpu_pinning.hpp).
struct SubscriberMode {
  bool pull = false;
  bool spin = false;
  int cpu = -1;     // the receiving thread's CPU (-1: not pinned)
  int io_cpu = -1;  // its ZeroMQ context's I/O threads' CPU (-1: not placed)
};

struct SubscriberReport {
  std::vector<ReceiveTime> times;
  SubscriberCounts counts;
  int pin_error = -1;  // ThreadCpu::error of the receiving thread (-1: not pinned, not asked)
};

class SubscriberProcess {
 public:
  // Spawns the child and waits (up to ready_timeout_ms) for it to be subscribed.
  SubscriberProcess(const std::string& executable, const std::string& endpoint, size_t capacity,
                    SubscriberMode mode = {}, int ready_timeout_ms = 10'000);
  ~SubscriberProcess();  // kills a child still running
  SubscriberProcess(const SubscriberProcess&) = delete;
  SubscriberProcess& operator=(const SubscriberProcess&) = delete;

  // Tells the child the run is over, reads its record and reaps it.
  SubscriberReport finish(int timeout_ms = 30'000);
  pid_t pid() const noexcept { return pid_; }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
};

// The child's side: connects, says ready, records, writes the record to stdout. Returns the
// process exit code.
int run_subscriber_child(const std::string& endpoint, size_t capacity, SubscriberMode mode);

// This process's executable (/proc/self/exe).
std::string current_executable();

}  // namespace eit::bench
