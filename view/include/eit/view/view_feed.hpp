#pragma once
// ViewFeed: what feeds `eitstream view` from outside the process: ZeroMQ subscriptions
// (ZmqViewFeed) or a bed followed through NATS JetStream (tools/src/view_nats_feed.hpp). A feed
// owns one receiving thread (start() to stop()) that hands every message to a FeedRouter; its
// status says, per subscription, whether it is connected and what went wrong last.
#include <memory>
#include <string>
#include <vector>

namespace eit::view {

class ViewFeed {
 public:
  virtual ~ViewFeed() = default;
  virtual void start() = 0;
  virtual void stop() noexcept = 0;
  // {"kind": "zmq"|"nats", "endpoints": [{"endpoint", "state", "reconnects", "images",
  //  "malformed", "last_error"}…]}; state is "connecting", "connected" or "reconnecting".
  // Any thread.
  virtual std::string status_json() const = 0;
};

// The page's "source" object for several feeds: one feed's own status, or every feed's endpoints
// in one list ({"kind": "feeds", "endpoints": […]}).
std::string feeds_status_json(const std::vector<std::unique_ptr<ViewFeed>>& feeds);

}  // namespace eit::view
