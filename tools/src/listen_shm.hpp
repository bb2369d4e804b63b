#pragma once
// `eitstream listen shm://NAME`: the images of a shared-memory ring (eit/sinks/shm_reader.hpp)
// handed to listen's loop in the ZeroMQ message shape, as listen_nats does: an image as
// [topic, header, payload], the ring's series message as [topic, json] on attach (again after a
// publisher restart) and a series-end as [topic, json] when the publisher ends or goes. Waits
// for the ring to appear when the publisher is not there yet. A bad name throws CommandError.
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

 private:
  std::string uri_;
  std::unique_ptr<sinks::ShmReader> reader_;
  bool ended_ = false;
};

}  // namespace eit::cli
