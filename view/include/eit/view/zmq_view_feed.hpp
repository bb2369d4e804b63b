#pragma once
// ZmqViewFeed: a ViewFeed of `eitstream view` (the NATS one is tools/src/view_nats_feed.hpp).
// Subscribes (SUB, prefix "eit/") to one or more eitstream publishers and hands every message,
// by its topic eit/<stream>/<kind>, to a FeedRouter (images, series, global, other JSON).
// ZeroMQ reconnects by itself when a publisher restarts; a socket monitor per endpoint reports
// connected / reconnecting in the status.
//
// Threads: one receiving thread (start() to stop()); status_json() from any thread. Set-up
// errors (an endpoint ZeroMQ rejects) throw std::runtime_error naming the endpoint.
#include <memory>
#include <string>
#include <vector>

#include "eit/sinks/curve_keys.hpp"
#include "eit/view/view_feed.hpp"
#include "eit/view/view_server.hpp"

namespace eit::view {

// CURVE for the upstream subscriptions (docs/security.md): the publisher's public key and this
// viewer's own key pair (on the publisher's allow list). Empty server key: plaintext.
struct ZmqViewCurve {
  std::string server_public_z85;
  sinks::CurveKeyPair client;
};

class ZmqViewFeed final : public ViewFeed {
 public:
  ZmqViewFeed(ViewServer& server, std::vector<std::string> endpoints, ZmqViewCurve curve = {});
  ~ZmqViewFeed() override;  // stop()
  ZmqViewFeed(const ZmqViewFeed&) = delete;
  ZmqViewFeed& operator=(const ZmqViewFeed&) = delete;

  void start() override;
  void stop() noexcept override;
  // {"kind": "zmq", "endpoints": [{"endpoint", "state", "reconnects", "images", "malformed",
  //  "last_error"}]}
  std::string status_json() const override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::view
