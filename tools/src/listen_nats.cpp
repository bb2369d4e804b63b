#include "listen_nats.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/sinks/image_header.hpp"
#if EIT_HAVE_NATS
#include <chrono>
#include <cstdio>
#include <thread>

#include "eit/nats/nats_image_reader.hpp"
#include "nats_reader_uri.hpp"
#endif

namespace eit::cli {

bool is_nats_listen_uri(const std::string& uri) noexcept {
  return uri.starts_with("nats://") || uri.starts_with("tls://");
}

#if EIT_HAVE_NATS
namespace {

using Clock = std::chrono::steady_clock;

class Feed final : public NatsListenFeed {
 public:
  explicit Feed(std::string uri) : uri_(std::move(uri)) {
    // A listener started before its publisher waits for it and then misses nothing: since=new
    // (the default) means from when listen started, not from when the stream appeared.
    const std::string since = since_of(uri_);
    if (since.empty() || since == "new") {
      const double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      retry_uri_ = with_since(uri_, fmt::format("{:.3f}", now));
    } else {
      retry_uri_ = uri_;
    }
    open(uri_);
  }

  bool next(std::vector<zmq::message_t>& parts, int timeout_ms) override {
    const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
    if (!reader_) {
      if (Clock::now() >= next_attempt_) open(retry_uri_);
      if (!reader_) {
        std::this_thread::sleep_until(std::min(until, next_attempt_));
        return false;
      }
    }
    nats::ImageStreamMessage m;
    while (reader_->next(m, timeout_ms)) {
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
      if (Clock::now() > until) return false;  // other kinds: skipped
    }
    return false;
  }

 private:
  // The server down, or the bed's stream not made yet (no publisher so far): said once per
  // change, then tried again, as view does.
  void open(const std::string& uri) {
    try {
      reader_ = std::make_unique<nats::NatsImageReader>(uri);
      if (!said_.empty()) std::fprintf(stderr, "listen: %s: reading\n", uri_.c_str());
    } catch (const std::exception& e) {
      const std::string line = fmt::format("listen: {}: waiting — {}; retrying every {} s", uri_,
                                           e.what(), kNatsReaderRetry.count());
      if (line != said_) std::fprintf(stderr, "%s\n", line.c_str());
      said_ = line;
      next_attempt_ = Clock::now() + kNatsReaderRetry;
    }
  }

  const std::string uri_;
  std::string retry_uri_, said_;
  Clock::time_point next_attempt_{};
  std::unique_ptr<nats::NatsImageReader> reader_;
};

}  // namespace

std::unique_ptr<NatsListenFeed> open_nats_listen_feed(const std::string& uri) {
  checked_nats_reader_address("listen", uri);  // a mistake in the URI is not waited for
  return std::make_unique<Feed>(uri);
}
#else
std::unique_ptr<NatsListenFeed> open_nats_listen_feed(const std::string& uri) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
#endif

}  // namespace eit::cli
