#pragma once
// The receiving end every `eitstream bench` measurement shares — the pipeline's runs and the bare
// ZeroMQ reference (zmq_reference.hpp) — so both are timed by the very same code:
//   bench_endpoint(): a fresh endpoint of a transport (inproc, ipc and shm names unique per
//                     process and call; tcp on an ephemeral loopback port, resolved by the
//                     binding side);
//   MeasuringSubscriber: an ImageSubscriber on that endpoint, as a thread sharing the sender's
//                     context for inproc, else a child process (subscriber_process.hpp), in the
//                     given SubscriberMode (PULL or SUB; busy-polling or sleeping in zmq_poll).
//
// Threads: construct, finish() and destroy on one thread. Construction throws (naming the
// endpoint) when the subscriber cannot connect or the child does not start.
#include <memory>
#include <string>

#include <zmq.hpp>

#include "eit/bench/subscriber_process.hpp"

namespace eit::bench {

// Throws std::invalid_argument for a transport other than inproc, ipc, tcp, shm.
std::string bench_endpoint(const std::string& transport);

class MeasuringSubscriber {
 public:
  // `endpoint` is bound already (by the sender); `executable` starts the child (ipc, tcp).
  MeasuringSubscriber(zmq::context_t& context, const std::string& executable,
                      const std::string& endpoint, size_t capacity, SubscriberMode mode);
  ~MeasuringSubscriber();
  MeasuringSubscriber(const MeasuringSubscriber&) = delete;
  MeasuringSubscriber& operator=(const MeasuringSubscriber&) = delete;

  // After the sender has finished: receives until 300 ms of quiet or the series end, then
  // returns every image's receive time and the counts.
  SubscriberReport finish();
  // The child process's id (ipc, tcp, shm) until finish(); -1 for the inproc thread.
  pid_t child_pid() const noexcept;

 private:
  class Thread;
  std::unique_ptr<Thread> thread_;
  std::unique_ptr<SubscriberProcess> process_;
};

}  // namespace eit::bench
