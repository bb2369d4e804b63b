#pragma once
// FeedRouter: what every ViewFeed does with a message once it knows the message's stream and kind
// (ZeroMQ: the topic eit/<stream>/<kind>; NATS: the bed and the subject's last token), so that
// the feeds differ only in how they receive:
//   img     the 112-byte header (docs/protocol.md) and the float32 payload, checked against each
//           other, into the stream's channel (created on the stream's first image, replaced when
//           a larger image arrives);
//   series  the stream's series message (geometry may come before the first image: the stream
//           is made known then, with room for the image shape it announces);
//   global  the indices stage's binary per-frame message, batched into the page's JSON;
//   other   any JSON object (series-end, breath, …) forwarded to the stream's browsers.
//
// Threads: the feed's receiving thread only. Allocates on new streams and JSON messages (the
// view process's own thread, not a pipeline path).
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "eit/view/global_batch.hpp"
#include "eit/view/view_server.hpp"

namespace eit::view {

class FeedRouter {
 public:
  // `own_stream_names`: JSON messages get the feed's stream name in "stream" even when they carry
  // one (NATS names a stream after its bed; the publisher's --stream name would not match).
  explicit FeedRouter(ViewServer& server, bool own_stream_names = false)
      : server_(server), own_stream_names_(own_stream_names) {}

  enum class Outcome { kTaken, kMalformed, kUnknown };
  Outcome image(const std::string& stream, std::span<const std::byte> header,
                std::span<const std::byte> payload);
  Outcome global(const std::string& stream, std::span<const std::byte> body);
  // A text message of `kind`; kUnknown when it is not a JSON object (a binary kind the view does
  // not know).
  Outcome text(const std::string& stream, const std::string& kind, std::string_view body);
  // Sends the global batches that are due (all: every non-empty one, e.g. at the end).
  void flush_globals(bool all);

 private:
  struct Channel {
    std::shared_ptr<StreamChannel> channel;
    size_t capacity = 0;
  };
  ViewServer& server_;
  bool own_stream_names_;
  std::map<std::string, Channel> channels_;
  std::map<std::string, GlobalBatch> globals_;
};

}  // namespace eit::view
