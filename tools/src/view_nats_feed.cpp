// NatsViewFeed: one bed followed through NATS JetStream into the live view (view_nats_feed.hpp).
#include "view_nats_feed.hpp"
#include "eit/sinks/json_text.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#if EIT_HAVE_NATS
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_image_reader.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/zmq_link_monitor.hpp"
#include "eit/view/feed_router.hpp"
#include "nats_reader_uri.hpp"
#endif

namespace eit::cli {

bool is_nats_view_uri(const std::string& endpoint) noexcept {
  return endpoint.starts_with("nats://") || endpoint.starts_with("tls://");
}

#if EIT_HAVE_NATS
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The live view's link states, as for a ZeroMQ publisher (sinks/zmq_link_monitor.hpp).
using State = sinks::LinkState;
using sinks::to_string;

class NatsViewFeed final : public view::ViewFeed {
 public:
  NatsViewFeed(view::ViewServer& server, std::string uri, const nats::NatsAddress& address)
      : uri_(std::move(uri)),
        live_uri_(with_since(uri_, "new")),  // a consumer made anew follows live
        stream_(fmt::format("{}.{}", address.site, address.bed)),
        router_(server, true) {}
  ~NatsViewFeed() override { stop(); }

  void start() override {
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  void stop() noexcept override {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  std::string status_json() const override {
    std::lock_guard lock(error_mutex_);
    const nlohmann::json e{{"endpoint", uri_},
                           {"stream", stream_},
                           {"state", to_string(state_.load())},
                           {"reconnects", reconnects_.load()},
                           {"images", images_.load()},
                           {"malformed", malformed_.load()},
                           {"last_error", last_error_}};
    return sinks::json_text(
        nlohmann::json{{"kind", "nats"}, {"endpoints", nlohmann::json::array({e})}});
  }

 private:
  // How long a consumer may stay silent after its connection came back before it is made anew:
  // libnats' ordered consumer resumes by itself when the stream survived (its heartbeats notice
  // the gap within a few seconds); when it does not, a new live one does.
  static constexpr auto kResumeWait = 8s;
  static constexpr auto kRetryEvery = kNatsReaderRetry;

  void run();
  void open_reader(bool first);
  void watch_link();
  void route(const nats::ImageStreamMessage& m);
  void note(State s, const std::string& error);

  const std::string uri_, live_uri_, stream_;
  view::FeedRouter router_;                        // receiving thread only
  std::unique_ptr<nats::NatsImageReader> reader_;  // receiving thread only
  Clock::time_point back_since_{};                 // connection back, nothing received yet
  bool awaiting_resume_ = false;
  std::atomic<State> state_{State::kConnecting};
  std::atomic<uint64_t> reconnects_{0}, images_{0}, malformed_{0};
  std::atomic<bool> stop_{false};
  mutable std::mutex error_mutex_;  // copies of the text only, never per image
  std::string last_error_, printed_;
  std::thread thread_;
};

void NatsViewFeed::note(State s, const std::string& error) {
  state_.store(s);
  std::string line = fmt::format("view: {} ({}): {}", uri_, stream_, to_string(s));
  if (!error.empty()) line += fmt::format(" — {}", error);
  std::lock_guard lock(error_mutex_);
  // Connected again: the problem that was reported is over, so it is not the link's state.
  if (!error.empty() || s == State::kConnected) last_error_ = error;
  if (line == printed_) return;  // one line per change, not one per retry
  std::fprintf(stderr, "%s\n", line.c_str());
  printed_ = std::move(line);
}

void NatsViewFeed::open_reader(bool first) {
  try {
    reader_ = std::make_unique<nats::NatsImageReader>(first ? uri_ : live_uri_);
    note(State::kConnected, "");
  } catch (const std::exception& e) {
    // The server down, the stream not made yet (no publisher so far): said, then retried.
    note(first ? State::kConnecting : State::kReconnecting,
         fmt::format("{}; retrying every {} s", e.what(), kRetryEvery.count()));
  }
}

void NatsViewFeed::watch_link() {
  const auto link = reader_->link_state();
  if (!link.connected) {
    if (state_.load() == State::kConnected) {
      reconnects_.fetch_add(1);
      note(State::kReconnecting,
           link.last_error.empty() ? "NATS connection lost; reconnecting" : link.last_error);
    }
    awaiting_resume_ = false;
    return;
  }
  if (state_.load() == State::kReconnecting) {
    note(State::kConnected, "");
    back_since_ = Clock::now();
    awaiting_resume_ = true;
  }
  if (awaiting_resume_ && Clock::now() - back_since_ > kResumeWait) {
    awaiting_resume_ = false;
    reader_.reset();
    open_reader(false);
  }
}

void NatsViewFeed::route(const nats::ImageStreamMessage& m) {
  awaiting_resume_ = false;
  const auto* data = reinterpret_cast<const std::byte*>(m.data.data());
  view::FeedRouter::Outcome outcome = view::FeedRouter::Outcome::kMalformed;
  if (m.kind == "img") {
    if (m.data.size() >= sizeof(sinks::ImageHeader))
      outcome = router_.image(
          stream_, {data, sizeof(sinks::ImageHeader)},
          {data + sizeof(sinks::ImageHeader), m.data.size() - sizeof(sinks::ImageHeader)});
    if (outcome == view::FeedRouter::Outcome::kTaken) images_.fetch_add(1);
  } else {
    outcome = router_.text(stream_, m.kind, m.data);
  }
  if (outcome != view::FeedRouter::Outcome::kMalformed) return;
  malformed_.fetch_add(1);
  std::lock_guard lock(error_mutex_);
  last_error_ = fmt::format("malformed {} message of bed {}", m.kind, stream_);
}

void NatsViewFeed::run() {
  nats::ImageStreamMessage m;
  Clock::time_point next_attempt{}, next_watch{};
  bool first = true;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (!reader_) {
      if (Clock::now() < next_attempt) {
        std::this_thread::sleep_for(50ms);
        continue;
      }
      open_reader(first);
      if (reader_) first = false;  // until then, every attempt keeps the URI's since=
      next_attempt = Clock::now() + kRetryEvery;
      continue;
    }
    if (reader_->next(m, 100)) route(m);
    if (Clock::now() >= next_watch) {
      watch_link();
      next_watch = Clock::now() + 200ms;
    }
  }
  reader_.reset();
}

}  // namespace

std::unique_ptr<view::ViewFeed> open_nats_view_feed(view::ViewServer& server,
                                                    const std::string& uri) {
  const nats::NatsAddress address = checked_nats_reader_address("view", uri);
  return std::make_unique<NatsViewFeed>(server, uri, address);
}
#else
std::unique_ptr<view::ViewFeed> open_nats_view_feed(view::ViewServer&, const std::string& uri) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
#endif

}  // namespace eit::cli
