#pragma once
// ZeroMQ's I/O threads on a chosen CPU. An ipc or tcp message crosses two of them (the sending
// context's, then the receiving one's), and each hand-off wakes a sleeping thread. On a virtual
// machine such a wake-up of another CPU costs tens of µs; with both I/O threads on the sending
// thread's CPU, and that thread yielding while it waits (a pipeline sink lane does), each
// hand-off is a context switch on one CPU instead (docs/benchmarks.md, "ZeroMQ's I/O threads on
// the publishing CPU": bare PUSH → PULL over ipc at 1 kHz, p50 78 → 13 µs on the H200 host).
//
// place_io_threads(): call before the context's first socket (libzmq starts its threads then,
// and each applies these options to itself as it starts). Also names them "<tag>/ZMQbg/…" so that
// io_thread_cpus() can tell this context's threads from other contexts' in the same process.
// io_thread_cpus(): the CPUs an I/O thread of process `pid` (0: this one) named with `tag`
// (kAnyTag: any context's) may run on, ascending; empty when none is found. Waits up to
// `wait_ms` for the thread to appear and, with expect_cpu ≥ 0, to be on that CPU alone. For
// reports and tests, never on the per-frame path.
#include <sys/types.h>

#include <vector>

#include <zmq.hpp>

namespace eit::sinks {

inline constexpr int kAnyTag = -1;

// Returns the tag given to the context's thread names. Throws zmq::error_t if libzmq refuses.
int place_io_threads(zmq::context_t& context, int cpu);

std::vector<int> io_thread_cpus(pid_t pid, int tag, int expect_cpu = -1, int wait_ms = 500);

}  // namespace eit::sinks
