#pragma once
// ZmqViewFeed: the input of `eitstream view`. Subscribes (SUB, prefix "eit/") to one or more
// eitstream publishers and feeds a ViewServer: images into the stream's channel (created on the
// first image of a stream, replaced when a larger image arrives), series messages as the
// stream's series, any other JSON message of a stream (series-end, global, breath…) forwarded.
// ZeroMQ reconnects by itself when a publisher restarts; a socket monitor per endpoint reports
// connected / reconnecting in the status.
//
// Threads: one receiving thread (start() to stop()); status_json() from any thread. Set-up
// errors (an endpoint ZeroMQ rejects) throw std::runtime_error naming the endpoint.
#include <memory>
#include <string>
#include <vector>

#include "eit/sinks/curve_keys.hpp"
#include "eit/view/view_server.hpp"

namespace eit::view {

// CURVE for the upstream subscriptions (docs/security.md): the publisher's public key and this
// viewer's own key pair (on the publisher's allow list). Empty server key: plaintext.
struct ZmqViewCurve {
  std::string server_public_z85;
  sinks::CurveKeyPair client;
};

class ZmqViewFeed {
 public:
  ZmqViewFeed(ViewServer& server, std::vector<std::string> endpoints, ZmqViewCurve curve = {});
  ~ZmqViewFeed();  // stop()
  ZmqViewFeed(const ZmqViewFeed&) = delete;
  ZmqViewFeed& operator=(const ZmqViewFeed&) = delete;

  void start();
  void stop() noexcept;
  // {"kind": "zmq", "endpoints": [{"endpoint", "state", "reconnects", "images", "malformed",
  //  "last_error"}]}
  std::string status_json() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::view
