// FeedRouter: one message of a feed into the ViewServer (see feed_router.hpp).
#include "eit/view/feed_router.hpp"
#include "eit/sinks/json_text.hpp"

#include <nlohmann/json.hpp>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/view/view_feed.hpp"

namespace eit::view {

FeedRouter::Outcome FeedRouter::image(const std::string& stream, std::span<const std::byte> header,
                                      std::span<const std::byte> payload) {
  if (!sinks::decode_image_message(header, payload)) return Outcome::kMalformed;
  const size_t bytes = header.size() + payload.size();
  auto& c = channels_[stream];
  if (!c.channel || c.capacity < bytes) {
    c.capacity = bytes;
    c.channel = server_.add_stream(stream, bytes);
  }
  c.channel->publish(header, payload);
  return Outcome::kTaken;
}

FeedRouter::Outcome FeedRouter::global(const std::string& stream, std::span<const std::byte> body) {
  const auto p = decode_global(body);
  if (!p) return Outcome::kMalformed;
  globals_[stream].add(*p, pipeline::now_ns());
  return Outcome::kTaken;
}

FeedRouter::Outcome FeedRouter::text(const std::string& stream, const std::string& kind,
                                     std::string_view body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return Outcome::kUnknown;
  if (!j.contains("type")) j["type"] = kind;
  if (own_stream_names_ || !j.contains("stream")) j["stream"] = stream;
  if (kind == "series" && j["type"] == "series") {
    if (channels_.find(stream) == channels_.end()) {
      // Geometry may arrive before the first image: make the stream known with room for it.
      size_t n = 1;
      if (j.contains("image") && j["image"].contains("shape"))
        for (const auto& d : j["image"]["shape"])
          if (d.is_number_unsigned()) n *= d.get<size_t>();
      auto& c = channels_[stream];
      c.capacity = sizeof(sinks::ImageHeader) + n * sizeof(float);
      c.channel = server_.add_stream(stream, c.capacity);
    }
    server_.set_series(stream, sinks::json_text(j));
  } else {
    server_.post_json(stream, sinks::json_text(j));
  }
  return Outcome::kTaken;
}

void FeedRouter::flush_globals(bool all) {
  const int64_t now = pipeline::now_ns();
  for (auto& [stream, batch] : globals_)
    if (all ? !batch.empty() : batch.due(now))
      server_.post_json(stream, batch.take_json(stream, pipeline::wall_ns() - pipeline::now_ns()));
}

std::string feeds_status_json(const std::vector<std::unique_ptr<ViewFeed>>& feeds) {
  if (feeds.size() == 1) return feeds.front()->status_json();
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& f : feeds) {
    const auto one = nlohmann::json::parse(f->status_json(), nullptr, false);
    if (!one.is_object() || !one.contains("endpoints")) continue;
    for (auto& e : one["endpoints"]) endpoints.push_back(e);
  }
  return sinks::json_text(nlohmann::json{{"kind", "feeds"}, {"endpoints", endpoints}});
}

}  // namespace eit::view
