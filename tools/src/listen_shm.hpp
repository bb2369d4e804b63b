#pragma once
// `eitstream listen shm://NAME`: the images of a shared-memory ring (eit/sinks/shm_reader.hpp)
// handed to listen's loop in the ZeroMQ message shape, as listen_nats does: an image as
// [topic, header, payload], the ring's series message as [topic, json] on attach (again after a
// publisher restart) and a series-end as [topic, json] when the publisher ends or goes.
// Waits for the ring to appear when the publisher is not there yet (saying so once on stderr). A
// ring whose publisher ended or was killed is not a series: it is reported once (its series-end,
// or a line on stderr when listen finds it so) and then waited on until a new publisher takes
// the name. A bad name throws CommandError. One thread.
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace eit::sinks {
class ShmReader;
}

namespace eit::cli {

class ShmListenFeed {
 public:
  explicit ShmListenFeed(const std::string& uri);
  ~ShmListenFeed();
  // Replaces `parts` with the next message; false when none came within timeout_ms.
  bool next(std::vector<zmq::message_t>& parts, int timeout_ms);
  // Whether a live publisher's ring was attached at all; if not, problem() says why.
  bool attached() const noexcept { return attached_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  bool attach(std::vector<zmq::message_t>& parts);
  void note_waiting();

  std::string uri_, problem_;
  std::unique_ptr<sinks::ShmReader> reader_;  // the live series
  std::unique_ptr<sinks::ShmReader> stale_;   // an ended ring, kept until its name is rebound
  bool attached_ = false, noted_ = false;
};

}  // namespace eit::cli
