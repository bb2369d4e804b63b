#pragma once
// `eitstream listen nats://…`: one bed's images and series messages from JetStream
// (eit/nats/nats_image_reader.hpp) handed to listen's loop in the ZeroMQ message shape: an image
// as [topic, header, payload], a series message as [topic, json]. Without libnats,
// open_nats_listen_feed() throws CommandError saying so. A mistake in the URI throws at once; a
// server that is down or a bed whose stream does not exist yet is waited for (said on stderr, tried
// again every second; since=new then means from when listen started).
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace eit::cli {

class NatsListenFeed {
 public:
  virtual ~NatsListenFeed() = default;
  // Replaces `parts` with the next message; false when none came within timeout_ms.
  virtual bool next(std::vector<zmq::message_t>& parts, int timeout_ms) = 0;
};

bool is_nats_listen_uri(const std::string& uri) noexcept;
std::unique_ptr<NatsListenFeed> open_nats_listen_feed(const std::string& uri);

}  // namespace eit::cli
