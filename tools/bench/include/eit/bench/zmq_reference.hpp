#pragma once
// run_zmq_reference(): the bare-ZeroMQ reference of one run set-up — "how fast is the transport
// alone?", measured the way the runs are, so that eitstream's published→subscribed hop and its
// end to end can be read as multiples of it. What it keeps the same as a run of `eitstream bench`:
//   - the sending socket: PUB (live) or PUSH (lossless), bound on a fresh endpoint of the same
//     transport, with the publisher's options (send HWM, linger, send timeout, max message size:
//     sinks::ZmqPublisherOptions' defaults, as the bench's publisher uses them), in a context
//     with one I/O thread;
//   - the messages: [topic "eit/bench/img", 112-byte ImageHeader, n_out float32], the header and
//     payload handed to libzmq without copying (each message has its own header; one constant
//     payload), as the publisher's zero-copy pool does; at max with a publish batch, full batch
//     messages ["eit/bench/imgs", headers, payloads] (reference_batch()); live sends never wait
//     (EAGAIN counts a drop), lossless sends wait; a series-end closes the run;
//   - the subscriber: the same MeasuringSubscriber (thread for inproc, child process otherwise)
//     in the same SubscriberMode (PULL/SUB; spinning with --latency-mode spin);
//   - the schedule: message i due at t0 + i/rate (none at max); warm-up and measured counts;
//   - the CPUs (--cpus): the sending thread pinned to the runs' source CPU, the receiver to their
//     subscriber's (RunConfig::cpus), so pinned runs are compared with a pinned transport;
//   - waiting: spin busy-waits for the due time on the sending thread and holds a CpuWakeHold
//     (as the pipeline's stages do in spin mode); balanced and idle sleep until the due time
//     (clock_nanosleep, as the pipeline's source does).
// Transport shm has no socket: its reference is the bare shared-memory ring (pattern "ring"): a
// ShmPublisher fed the same schedule from the sending thread, read by the same subscriber child.
// Each message is stamped just before its first part is sent (as the pipeline stamps
// "published") and when the subscriber has its last part (as "subscribed"); CLOCK_MONOTONIC in
// both processes; the send call is timed from that stamp until send() returns, as the runs'
// "send call" times their sink's publish call. Nothing else runs: no queues, no
// reconstruction, no stamps of stages.
//
// Set-up errors throw (std::invalid_argument / std::runtime_error naming what failed). Allocates
// everything before the first message; the send loop allocates nothing itself.
#include <string>

#include "eit/bench/bench_report.hpp"
#include "eit/bench/run_result.hpp"

namespace eit::bench {

// `run` gives transport, policy, latency mode, rate, n_out, frames and warm-up; `executable` is
// eitstream, for the subscriber child (ipc, tcp).
ZmqReference run_zmq_reference(const RunConfig& run, const std::string& executable);

// Images per reference message for `run`: at max its publish batch, shrunk as its publisher
// shrinks it for large images (a run at max batches whenever the socket falls behind, so the
// reference sends full batches: the transport's own ceiling); paced (and shm), one per due time.
size_t reference_batch(const RunConfig& run) noexcept;

// A generous estimate of how long run_zmq_reference(run) takes, in seconds (schedule plus
// set-up; at max an assumed 100 k messages/s), for deciding whether it is cheap enough to run
// by default.
double estimated_reference_seconds(const RunConfig& run) noexcept;

// Whether `ref` was measured with `run`'s set-up (the CPUs of source and subscriber included).
bool same_setup(const ZmqReference& ref, const RunConfig& run) noexcept;

}  // namespace eit::bench
