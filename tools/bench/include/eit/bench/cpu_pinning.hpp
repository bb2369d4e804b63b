#pragma once
// CPU pinning of a benchmark run (`eitstream bench --cpus LIST|auto`): which threads a run pins,
// which CPU each gets, pinning the calling thread, and how each attempt turned out.
//
// Order of the threads: source and subscriber first — every run has them, so with one list they
// get the same CPUs in every run, and the bare-ZeroMQ reference's sender and receiver run on
// exactly those (zmq_reference.hpp) — then the reconstructor (pipelined layout only) and the sink
// thread (only for a sink that is not published inline). A given list is taken in that order,
// round robin when shorter than the threads (threads then share CPUs: the report shows it); auto
// takes distinct CPUs of the process's allowed set, skipping CPU 0 when there are more CPUs than
// threads, and refuses when there are fewer. Without --cpus nothing is pinned.
//
// In spin mode over ZeroMQ, the I/O threads of both ends' contexts also go to the sink thread's CPU
// (the reference's: its sender's), listed as "zmq io (publisher)" and "zmq io (subscriber)".
//
// Pinning may fail (a CPU outside a container's cpuset): that is reported, never fatal.
// Set-up only, except pin_this_thread() (any thread, no allocation).
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "eit/pipeline/thread_pin.hpp"

namespace eit::bench {

// What --cpus asked for.
struct CpuRequest {
  bool automatic = false;  // auto: chosen from the allowed CPUs
  std::vector<int> list;   // the given CPUs; empty and not automatic: nothing pinned
  bool any() const noexcept { return automatic || !list.empty(); }
  std::string text() const;  // "auto", "2,3,4" or ""
};

// One thread of a run: the CPU it was given and what pinning it did.
struct ThreadCpu {
  static constexpr int kNotReported = -1;
  std::string thread;  // "source", "subscriber", "reconstructor", "sink 0"
  int cpu = -1;
  int error = kNotReported;  // 0: pinned; > 0: the errno; kNotReported: the thread never said
  bool pinned() const noexcept { return error == 0; }
  std::string outcome() const;  // "pinned", "not pinned: Invalid argument", "not reported"
};

// The CPUs the calling thread may run on (sched_getaffinity), ascending: the pipeline's own.
using pipeline::allowed_cpus;

// The threads of a run in the order they take CPUs (see above).
std::vector<std::string> threads_to_pin(bool reconstructor_thread, bool sink_thread);

// Each thread's CPU. Throws std::invalid_argument for auto with fewer allowed CPUs than threads,
// naming the threads and the CPUs.
std::vector<ThreadCpu> assign_cpus(const CpuRequest& request,
                                   const std::vector<std::string>& threads,
                                   const std::vector<int>& allowed);

// The CPU given to `thread`, or -1.
int cpu_of(const std::vector<ThreadCpu>& cpus, std::string_view thread) noexcept;

// A ZeroMQ I/O thread placed on `cpu` (zmq_io_placement.hpp), as the kernel reports it: error 0
// when it runs on that CPU alone, EINVAL on others, ESRCH when process `pid` (0: this one) has
// no I/O thread with name tag `tag` (sinks::kAnyTag: any).
ThreadCpu io_thread_placement(std::string name, pid_t pid, int tag, int cpu);

// Pins the calling thread to `cpu`: 0, or the errno (EINVAL for a CPU it may not use). The
// pipeline's own, which pins its stage threads.
using pipeline::pin_this_thread;

// Pins the calling thread to `cpu` (nothing when cpu < 0) and gives it back the CPUs it had when
// destroyed: for the bench's main thread, which sends the bare-ZeroMQ reference and then must
// start the next run's threads unpinned.
class ScopedThreadPin {
 public:
  explicit ScopedThreadPin(int cpu) noexcept;
  ~ScopedThreadPin();
  ScopedThreadPin(const ScopedThreadPin&) = delete;
  ScopedThreadPin& operator=(const ScopedThreadPin&) = delete;
  int error() const noexcept { return error_; }  // as ThreadCpu::error

 private:
  std::vector<int> previous_;
  int error_ = ThreadCpu::kNotReported;
};

// "source 2 pinned, subscriber 3 pinned, …" or `none` when the list is empty.
std::string describe_cpus(const std::vector<ThreadCpu>& cpus, std::string_view none);

}  // namespace eit::bench
