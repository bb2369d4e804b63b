// FeedRouter, shared by the ZeroMQ and NATS feeds of `eitstream view`: an image whose header and
// payload disagree, or whose header is cut short, is refused as malformed; a text message that is
// not a JSON object is unknown (skipped, not an error); a series message with a nonsensical
// image shape is taken without throwing on the feed's thread.
#include <doctest/doctest.h>

#include <cstddef>
#include <span>
#include <vector>

#include "eit/sinks/image_header.hpp"
#include "eit/view/feed_router.hpp"
#include "eit/view/view_server.hpp"

using eit::view::FeedRouter;

namespace {

eit::view::ViewServerOptions any_port() {
  eit::view::ViewServerOptions o;
  o.port = 0;
  return o;
}

}  // namespace

TEST_CASE("feed router: images are checked against their header, text against JSON") {
  eit::view::ViewServer server(any_port());
  FeedRouter router(server, true);
  eit::sinks::ImageHeader h;
  h.ndim = 2;
  h.shape[0] = 4;
  h.shape[1] = 8;
  h.count = 32;
  const auto head = std::as_bytes(std::span(&h, 1));
  std::vector<float> values(32, 1.0f);
  const auto body = std::as_bytes(std::span(values));

  CHECK(router.image("icu.5", head, body) == FeedRouter::Outcome::kTaken);
  CHECK(router.image("icu.5", head, body.first(31 * sizeof(float))) ==
        FeedRouter::Outcome::kMalformed);
  CHECK(router.image("icu.5", head.first(100), body) == FeedRouter::Outcome::kMalformed);
  auto bad = h;
  bad.magic = 0;
  CHECK(router.image("icu.5", std::as_bytes(std::span(&bad, 1)), body) ==
        FeedRouter::Outcome::kMalformed);

  CHECK(router.text("icu.5", "series", "not json") == FeedRouter::Outcome::kUnknown);
  CHECK(router.text("icu.5", "series", "[1, 2]") == FeedRouter::Outcome::kUnknown);
  CHECK(router.text("icu.5", "series-end", R"({"type":"series-end"})") ==
        FeedRouter::Outcome::kTaken);
  CHECK(router.global("icu.5", body.first(8)) == FeedRouter::Outcome::kMalformed);
}

TEST_CASE("feed router: a series before any image makes the stream known, whatever its shape") {
  eit::view::ViewServer server(any_port());
  FeedRouter router(server, true);
  CHECK(router.text("icu.6", "series", R"({"type":"series","image":{"shape":[32,32]}})") ==
        FeedRouter::Outcome::kTaken);
  // A shape that is not made of counts neither throws nor stops the stream from being known.
  CHECK_NOTHROW(
      CHECK(router.text("icu.7", "series", R"({"type":"series","image":{"shape":["a",-1]}})") ==
            FeedRouter::Outcome::kTaken));
}

TEST_CASE("feed router: a stream or kind with bytes that are not UTF-8 is taken without throwing") {
  // Topics come from the network; the JSON passed on to pages once threw on such bytes, on the
  // feed's thread, and ended the viewer for every browser.
  eit::view::ViewServer server(any_port());
  FeedRouter router(server, true);
  CHECK(router.text("\xff", "breath", R"({"x":1})") == FeedRouter::Outcome::kTaken);
  CHECK(router.text("icu.5", "\xc3", R"({"x":1})") == FeedRouter::Outcome::kTaken);
  CHECK(router.text("\xe9", "series", R"({"type":"series"})") == FeedRouter::Outcome::kTaken);
}
