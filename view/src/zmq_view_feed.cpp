#include "eit/view/zmq_view_feed.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "eit/sinks/image_batch.hpp"
#include "eit/view/feed_router.hpp"

namespace eit::view {
namespace {

enum class LinkState { kConnecting, kConnected, kReconnecting };

const char* to_string(LinkState s) {
  switch (s) {
    case LinkState::kConnected:
      return "connected";
    case LinkState::kReconnecting:
      return "reconnecting";
    default:
      return "connecting";
  }
}

// A ZMTP protocol error (ZMQ_PROTOCOL_ERROR_*) in words, with what usually causes it.
std::string handshake_protocol_error(uint32_t code) {
  if (code == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    return "security mismatch: the publisher uses CURVE and this view does not, or the reverse "
           "(--curve-server-key and --curve-secret must match the publisher's --curve-secret)";
  if (code == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC || code == ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE)
    return "CURVE handshake failed: --curve-server-key is not the publisher's public key";
  if (code >= ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED && code < ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED)
    return fmt::format("the publisher's authentication failed (ZAP error {:#x})", code);
  return fmt::format("not a ZeroMQ publisher, or an incompatible one (ZMTP error {:#x})", code);
}

}  // namespace

struct ZmqViewFeed::Impl {
  struct Endpoint {
    std::string address;
    zmq::socket_t socket;
    zmq::socket_t monitor;  // PAIR receiving the socket's events
    std::atomic<LinkState> state{LinkState::kConnecting};
    std::atomic<uint64_t> reconnects{0}, images{0}, malformed{0};
    std::string last_error;  // guarded by Impl::error_mutex
    std::map<std::string, std::string> renamed;  // stream → "stream@address"; receiving thread
    // Receiving thread: a TCP connection since the last retry, and a handshake that failed on it
    // (its reason is then the link's error, not what the disconnection after it would say).
    bool tcp_since_retry = false, handshake_failed = false;
  };
  zmq::context_t context{1};
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  FeedRouter router;  // receiving thread only
  std::map<std::string, const Endpoint*> image_owner;  // which endpoint's images a name shows
  std::atomic<bool> stop{false};
  std::thread thread;
  mutable std::mutex error_mutex;

  // Messages carry the view's name for the stream, which may differ from the topic's (below).
  explicit Impl(ViewServer& s) : router(s, true) {}
  void run();
  std::string view_stream(Endpoint& e, const std::string& stream, bool carries_images);
  void on_message(Endpoint& e, std::vector<zmq::message_t>& parts);
  void on_event(Endpoint& e);
  void set_error(Endpoint& e, std::string text) {
    std::lock_guard lock(error_mutex);
    e.last_error = std::move(text);
  }
};

ZmqViewFeed::ZmqViewFeed(ViewServer& server, std::vector<std::string> addresses,
                         ZmqViewCurve curve)
    : impl_(std::make_unique<Impl>(server)) {
  if (addresses.empty()) throw std::invalid_argument("view: no publisher endpoint given");
  int n = 0;
  for (auto& a : addresses) {
    auto e = std::make_unique<Impl::Endpoint>();
    e->address = a;
    try {
      e->socket = zmq::socket_t(impl_->context, zmq::socket_type::sub);
      e->socket.set(zmq::sockopt::linger, 0);
      e->socket.set(zmq::sockopt::rcvhwm, 1000);
      e->socket.set(zmq::sockopt::subscribe, "eit/");
      // Reconnect quickly after a publisher restart (ZeroMQ's default is 100 ms, doubling off).
      e->socket.set(zmq::sockopt::reconnect_ivl, 100);
      e->socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
      // A server that takes the connection but never answers ZeroMQ's greeting (not a publisher)
      // is reported after 3 s rather than libzmq's default 30 s.
      e->socket.set(zmq::sockopt::handshake_ivl, 3000);
      // Nothing larger than an image of 1024×1024 floats plus its header is legitimate.
      e->socket.set(zmq::sockopt::maxmsgsize, int64_t{4} << 20);
      if (!curve.server_public_z85.empty())
        sinks::apply_curve_client(e->socket, curve.server_public_z85, curve.client);
      const std::string inproc = fmt::format("inproc://eit-view-monitor-{}", n++);
      if (zmq_socket_monitor(e->socket.handle(), inproc.c_str(), ZMQ_EVENT_ALL) != 0)
        throw zmq::error_t();
      e->monitor = zmq::socket_t(impl_->context, zmq::socket_type::pair);
      e->monitor.connect(inproc);
      e->socket.connect(a);
    } catch (const zmq::error_t& err) {
      throw std::runtime_error(
          fmt::format("view: cannot subscribe to '{}': {} (expected e.g. tcp://127.0.0.1:5555)", a,
                      err.what()));
    }
    impl_->endpoints.push_back(std::move(e));
  }
}

ZmqViewFeed::~ZmqViewFeed() { stop(); }

void ZmqViewFeed::start() {
  if (impl_->thread.joinable()) return;
  impl_->thread = std::thread([this] { impl_->run(); });
}

void ZmqViewFeed::stop() noexcept {
  impl_->stop.store(true);
  if (impl_->thread.joinable()) impl_->thread.join();
}

void ZmqViewFeed::Impl::run() {
  std::vector<zmq::pollitem_t> items;
  for (auto& e : endpoints) {
    items.push_back({e->socket.handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({e->monitor.handle(), 0, ZMQ_POLLIN, 0});
  }
  std::vector<zmq::message_t> parts;
  while (!stop.load(std::memory_order_relaxed)) {
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(20));
    } catch (const zmq::error_t&) {
      continue;  // EINTR
    }
    router.flush_globals(false);
    for (size_t i = 0; i < endpoints.size(); ++i) {
      Endpoint& e = *endpoints[i];
      if (items[2 * i + 1].revents & ZMQ_POLLIN) on_event(e);
      if (!(items[2 * i].revents & ZMQ_POLLIN)) continue;
      // Drain what is queued; the server's ring keeps the newest images anyway.
      for (int k = 0; k < 256; ++k) {
        parts.clear();
        if (!zmq::recv_multipart(e.socket, std::back_inserter(parts), zmq::recv_flags::dontwait))
          break;
        on_message(e, parts);
      }
    }
  }
}

void ZmqViewFeed::Impl::on_event(Endpoint& e) {
  zmq::message_t event, address;
  if (!e.monitor.recv(event, zmq::recv_flags::dontwait)) return;
  if (event.more()) (void)e.monitor.recv(address, zmq::recv_flags::dontwait);
  if (event.size() < 6) return;
  uint16_t id;
  uint32_t value;
  std::memcpy(&id, event.data(), sizeof id);
  std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof id, sizeof value);
  // Connected means the ZeroMQ handshake succeeded: a TCP connection alone may lead to a CURVE
  // refusal or to a server that is not a ZeroMQ publisher at all.
  switch (id) {
    case ZMQ_EVENT_CONNECTED:
      e.tcp_since_retry = true;
      break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      e.state = LinkState::kConnected;
      e.handshake_failed = false;
      set_error(e, {});  // a past problem is not the link's state any more
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      e.state = LinkState::kReconnecting;
      e.handshake_failed = true;
      set_error(e, fmt::format("the publisher refused this view's CURVE key (status {}): give "
                               "--curve-secret a key in the publisher's --curve-allow",
                               value));
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      e.state = LinkState::kReconnecting;
      e.handshake_failed = true;
      set_error(e, handshake_protocol_error(value));
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      e.state = LinkState::kReconnecting;
      e.handshake_failed = true;
      set_error(e, fmt::format("ZeroMQ handshake failed ({}): a wrong --curve-server-key, or not "
                               "a ZeroMQ publisher",
                               zmq_strerror(static_cast<int>(value))));
      break;
    case ZMQ_EVENT_DISCONNECTED:
      // After a failed handshake the disconnection is that failure's: keep its reason.
      if (e.state == LinkState::kConnected) {
        e.reconnects.fetch_add(1);
        set_error(e, "publisher disconnected; reconnecting");
      } else if (!e.handshake_failed) {
        set_error(e,
                  "the server there took the connection but gave no ZeroMQ handshake (not a "
                  "ZeroMQ publisher?); retrying");
      }
      e.state = LinkState::kReconnecting;
      break;
    case ZMQ_EVENT_CONNECT_RETRIED:
      // A retry with no TCP connection since the last one: nothing listens there (yet).
      if (e.state != LinkState::kConnected && !e.tcp_since_retry) {
        e.state = LinkState::kReconnecting;
        e.handshake_failed = false;
        set_error(e, "no publisher accepts connections there (yet); retrying");
      }
      e.tcp_since_retry = false;
      break;
    default:
      break;
  }
}

// Publishers name their stream "default" unless told otherwise, so two of them often share a
// name: the first endpoint to send images under it keeps it, another shows as "NAME@ENDPOINT",
// and their images never mix in one stream. Messages without images (an indices publisher's
// breaths and global curve) go with the name's images, or the endpoint's own renamed stream.
std::string ZmqViewFeed::Impl::view_stream(Endpoint& e, const std::string& stream,
                                           bool carries_images) {
  if (const auto it = e.renamed.find(stream); it != e.renamed.end()) return it->second;
  if (!carries_images) return stream;
  const auto [owner, fresh] = image_owner.try_emplace(stream, &e);
  if (owner->second == &e) return stream;
  return e.renamed.emplace(stream, stream + "@" + e.address).first->second;
}

void ZmqViewFeed::Impl::on_message(Endpoint& e, std::vector<zmq::message_t>& parts) {
  const std::string topic = parts.empty() ? std::string() : parts[0].to_string();
  // "eit/<stream>/<kind>"
  const auto slash = topic.find('/', 4);
  if (!topic.starts_with("eit/") || slash == std::string::npos) {
    e.malformed.fetch_add(1);
    return;
  }
  const std::string kind = topic.substr(slash + 1);
  const std::string stream =
      view_stream(e, topic.substr(4, slash - 4),
                  kind == "img" || kind == "imgs" || kind == "series" || kind == "series-end");
  const auto bytes = [](const zmq::message_t& m) {
    return std::span<const std::byte>(static_cast<const std::byte*>(m.data()), m.size());
  };
  FeedRouter::Outcome outcome = FeedRouter::Outcome::kMalformed;
  if (kind == "img") {
    if (parts.size() == 3) outcome = router.image(stream, bytes(parts[1]), bytes(parts[2]));
    if (outcome == FeedRouter::Outcome::kTaken) e.images.fetch_add(1);
  } else if (kind == "imgs") {  // a publisher's batch (image_batch.hpp): each image in order
    if (parts.size() == 3 &&
        sinks::for_each_batched_image(
            bytes(parts[1]), bytes(parts[2]),
            [&](const sinks::ImageHeader& h, std::span<const std::byte> payload) {
              if (router.image(stream, std::as_bytes(std::span(&h, 1)), payload) ==
                  FeedRouter::Outcome::kTaken)
                e.images.fetch_add(1);
            }) > 0)
      outcome = FeedRouter::Outcome::kTaken;
  } else if (parts.size() == 2) {
    outcome = kind == "global"  // the indices stage's binary per-frame message
                  ? router.global(stream, bytes(parts[1]))
                  : router.text(stream, kind, parts[1].to_string_view());
  }
  if (outcome != FeedRouter::Outcome::kMalformed) return;
  e.malformed.fetch_add(1);
  if (kind == "img" || kind == "imgs" || kind == "global")
    set_error(e, fmt::format("malformed {} message on {}",
                             kind == "img"    ? "image"
                             : kind == "imgs" ? "image batch"
                                              : kind,
                             topic));
}

std::string ZmqViewFeed::status_json() const {
  nlohmann::json list = nlohmann::json::array();
  std::lock_guard lock(impl_->error_mutex);
  for (const auto& e : impl_->endpoints)
    list.push_back({{"endpoint", e->address},
                    {"state", to_string(e->state.load())},
                    {"reconnects", e->reconnects.load()},
                    {"images", e->images.load()},
                    {"malformed", e->malformed.load()},
                    {"last_error", e->last_error}});
  return nlohmann::json{{"kind", "zmq"}, {"endpoints", list}}.dump();
}

}  // namespace eit::view
