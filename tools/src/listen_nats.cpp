#include "listen_nats.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/sinks/image_header.hpp"
#if EIT_HAVE_NATS
#include "eit/nats/nats_image_reader.hpp"
#endif

namespace eit::cli {

bool is_nats_listen_uri(const std::string& uri) noexcept {
  return uri.starts_with("nats://") || uri.starts_with("tls://");
}

#if EIT_HAVE_NATS
namespace {

class Feed final : public NatsListenFeed {
 public:
  explicit Feed(const std::string& uri) : reader_(uri) {}
  bool next(std::vector<zmq::message_t>& parts, int timeout_ms) override {
    nats::ImageStreamMessage m;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (reader_.next(m, timeout_ms)) {
      parts.clear();
      if (m.kind == "series") {
        parts.emplace_back(std::string_view("eit/series"));
        parts.emplace_back(m.data.data(), m.data.size());
        return true;
      }
      if (m.kind == "img") {
        const size_t h = std::min(m.data.size(), sizeof(sinks::ImageHeader));
        parts.emplace_back(std::string_view("eit/img"));
        parts.emplace_back(m.data.data(), h);
        parts.emplace_back(m.data.data() + h, m.data.size() - h);
        return true;
      }
      if (std::chrono::steady_clock::now() > until) return false;  // other kinds: skipped
    }
    return false;
  }

 private:
  nats::NatsImageReader reader_;
};

}  // namespace

std::unique_ptr<NatsListenFeed> open_nats_listen_feed(const std::string& uri) {
  return std::make_unique<Feed>(uri);
}
#else
std::unique_ptr<NatsListenFeed> open_nats_listen_feed(const std::string& uri) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
#endif

}  // namespace eit::cli
