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
// IoWake::kDefer starts the threads at SCHED_BATCH, whose wake-ups never preempt the running
// thread: the I/O thread that a send call wakes waits until the sending thread yields or sleeps,
// instead of running inside the send (a sink lane yields right after the publish call that woke
// it: ImageSink::take_handoff()). The send call then only hands the image over; the transport's
// work follows it on the same CPU.
// Batch threads still get their fair share of the CPU; they lose only wake-up preemption, so a
// sending thread that spins without yielding would keep them waiting up to a scheduler tick.
// io_thread_cpus(): the CPUs an I/O thread of process `pid` (0: this one) named with `tag`
// (kAnyTag: any context's) may run on, ascending; empty when none is found. Waits up to
// `wait_ms` for the thread to appear and, with expect_cpu ≥ 0, to be on that CPU alone. For
// reports and tests, never on the per-frame path.
#include <sys/types.h>

#include <vector>

#include <zmq.hpp>

namespace eit::sinks {

inline constexpr int kAnyTag = -1;

// How a placed I/O thread treats the thread whose send woke it (see above).
enum class IoWake { kPreempt, kDefer };

// Returns the tag given to the context's thread names. Throws zmq::error_t if libzmq refuses.
int place_io_threads(zmq::context_t& context, int cpu, IoWake wake = IoWake::kPreempt);

std::vector<int> io_thread_cpus(pid_t pid, int tag, int expect_cpu = -1, int wait_ms = 500);

// The scheduling policy (SCHED_OTHER, SCHED_BATCH, …) of such a thread, waiting up to wait_ms
// for it to appear and, with expect_policy ≥ 0, to have taken that policy; -1 when none is found.
int io_thread_policy(pid_t pid, int tag, int expect_policy = -1, int wait_ms = 500);

}  // namespace eit::sinks
