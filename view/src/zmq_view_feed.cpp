#include "eit/view/zmq_view_feed.hpp"

#include <atomic>
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

}  // namespace

struct ZmqViewFeed::Impl {
  struct Endpoint {
    std::string address;
    zmq::socket_t socket;
    zmq::socket_t monitor;  // PAIR receiving the socket's events
    std::atomic<LinkState> state{LinkState::kConnecting};
    std::atomic<uint64_t> reconnects{0}, images{0}, malformed{0};
    std::string last_error;  // guarded by Impl::error_mutex
  };
  zmq::context_t context{1};
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  FeedRouter router;  // receiving thread only
  std::atomic<bool> stop{false};
  std::thread thread;
  mutable std::mutex error_mutex;

  explicit Impl(ViewServer& s) : router(s) {}
  void run();
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
  std::memcpy(&id, event.data(), sizeof id);
  switch (id) {
    case ZMQ_EVENT_CONNECTED:
      e.state = LinkState::kConnected;
      break;
    case ZMQ_EVENT_DISCONNECTED:
      e.state = LinkState::kReconnecting;
      e.reconnects.fetch_add(1);
      set_error(e, "publisher disconnected; reconnecting");
      break;
    case ZMQ_EVENT_CONNECT_RETRIED:
      if (e.state != LinkState::kConnected) e.state = LinkState::kReconnecting;
      break;
    default:
      break;
  }
}

void ZmqViewFeed::Impl::on_message(Endpoint& e, std::vector<zmq::message_t>& parts) {
  const std::string topic = parts.empty() ? std::string() : parts[0].to_string();
  // "eit/<stream>/<kind>"
  const auto slash = topic.find('/', 4);
  if (!topic.starts_with("eit/") || slash == std::string::npos) {
    e.malformed.fetch_add(1);
    return;
  }
  const std::string stream = topic.substr(4, slash - 4);
  const std::string kind = topic.substr(slash + 1);
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
