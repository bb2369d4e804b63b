#include "eit/view/zmq_view_feed.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/json_text.hpp"
#include "eit/sinks/zmq_link_monitor.hpp"
#include "eit/view/feed_router.hpp"

namespace eit::view {
namespace {

using sinks::LinkState;

}  // namespace

struct ZmqViewFeed::Impl {
  struct Endpoint {
    std::string address;
    zmq::socket_t socket;
    std::optional<sinks::ZmqLinkMonitor> link;  // the receiving thread reads its events
    // The link's state and error as the HTTP thread reads them (copied from `link`).
    std::atomic<LinkState> state{LinkState::kConnecting};
    std::atomic<uint64_t> reconnects{0}, images{0}, malformed{0};
    std::string last_error;  // guarded by Impl::error_mutex
    std::map<std::string, std::string> renamed;  // stream → "stream@address"; receiving thread
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
  for (auto& a : addresses) {
    auto e = std::make_unique<Impl::Endpoint>();
    e->address = a;
    try {
      e->socket = zmq::socket_t(impl_->context, zmq::socket_type::sub);
      e->socket.set(zmq::sockopt::linger, 0);
      e->socket.set(zmq::sockopt::rcvhwm, 1000);
      e->socket.set(zmq::sockopt::subscribe, "eit/");
      sinks::set_consumer_link_options(e->socket);
      // Nothing larger than an image of 1024×1024 floats plus its header is legitimate.
      e->socket.set(zmq::sockopt::maxmsgsize, int64_t{4} << 20);
      if (!curve.server_public_z85.empty())
        sinks::apply_curve_client(e->socket, curve.server_public_z85, curve.client);
      e->link.emplace(impl_->context, e->socket);
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
    items.push_back({e->link->events().handle(), 0, ZMQ_POLLIN, 0});
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
  if (!e.link->on_event()) return;
  e.state = e.link->state();
  e.reconnects = e.link->reconnects();
  set_error(e, e.link->error());
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
                    {"state", sinks::to_string(e->state.load())},
                    {"reconnects", e->reconnects.load()},
                    {"images", e->images.load()},
                    {"malformed", e->malformed.load()},
                    {"last_error", e->last_error}});
  return sinks::json_text(nlohmann::json{{"kind", "zmq"}, {"endpoints", list}});
}

}  // namespace eit::view
