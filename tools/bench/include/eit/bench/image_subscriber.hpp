#pragma once
// ImageSubscriber: the benchmark's receiving end. A ZeroMQ SUB socket (or PULL, for a PUSH
// publisher: the lossless `max` runs) connected to the publisher's endpoint; for every image it
// notes (seq, now_ns() once the whole multipart message is in) into arrays reserved for `capacity`
// images — every image of a batch message ("imgs") with that message's time — and it notices the
// series-end message. The same class runs as a thread next to the
// pipeline (inproc, which needs the publisher's context) and inside `eitstream bench
// --subscriber-only` in a child process (ipc, tcp).
//
// Threads: one thread calls poll()/received(); construction connects (throws naming the
// endpoint). poll() never allocates beyond libzmq's own message buffers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>

namespace eit::bench {

struct ReceiveTime {
  uint64_t seq;
  int64_t t_ns;
};

struct SubscriberCounts {
  uint64_t images = 0;      // images received (each image of a batch message counts)
  uint64_t batches = 0;     // batch messages ("imgs") among them
  uint64_t overflow = 0;    // images beyond capacity (not recorded)
  uint64_t malformed = 0;   // messages that were not a valid image or series message
  uint64_t series = 0;      // series messages (including the end)
  bool series_end = false;  // the publisher said the series is over
};

class ImageSubscriber {
 public:
  // pull: a PULL socket (the publisher PUSHes), else SUB subscribed to "eit/".
  ImageSubscriber(zmq::context_t& context, const std::string& endpoint, size_t capacity,
                  bool pull = false);

  // Waits up to timeout_ms for messages and takes every one that is ready. Returns how many
  // images it recorded.
  size_t poll(int timeout_ms);
  // Takes every message ready now, without waiting (a spinning caller loops on it). Returns how
  // many images it recorded.
  size_t drain();
  // Closes the socket (a PUSH publisher's lossless end waits for its consumers to go).
  void close() { socket_.close(); }
  // For callers that poll other things too (the child's stdin).
  zmq::socket_t& socket() noexcept { return socket_; }

  const std::vector<ReceiveTime>& received() const noexcept { return times_; }
  const SubscriberCounts& counts() const noexcept { return counts_; }

 private:
  bool receive_one();  // false when nothing was waiting
  void note_image(uint64_t seq, int64_t t_ns) noexcept;

  zmq::socket_t socket_;
  size_t capacity_;
  std::vector<ReceiveTime> times_;
  SubscriberCounts counts_;
  zmq::message_t topic_, header_, payload_;
};

}  // namespace eit::bench
