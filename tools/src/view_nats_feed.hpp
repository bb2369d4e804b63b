#pragma once
// `eitstream view nats://HOST:4222?site=S&bed=B[&since=new|all|EPOCH_SECONDS&creds=…&tls-ca=…]`:
// a ViewFeed that follows one bed through NATS JetStream with eit/nats/nats_image_reader.hpp (the
// reader of `listen nats://…`, the same URI) and hands its images and series messages to the
// view's FeedRouter as the stream "<site>.<bed>".
//
// Live by default: it starts at the bed's newest image (with the series message in effect);
// since=all or since=T replay history only when asked. A server that is down or goes away is a
// status, never an error: the first connection is retried every second, a lost one is
// re-established by libnats, and a consumer that stays silent after a reconnection is made anew,
// live. State changes go to the page's status and to stderr (one line per change).
//
// Without libnats, open_nats_view_feed() throws CommandError saying so.
#include <memory>
#include <string>

#include "eit/view/view_feed.hpp"
#include "eit/view/view_server.hpp"

namespace eit::cli {

bool is_nats_view_uri(const std::string& endpoint) noexcept;

// Checks the URI at set-up (options, since=, the files it names) and throws CommandError naming
// what is wrong; the server need not be up yet.
std::unique_ptr<view::ViewFeed> open_nats_view_feed(view::ViewServer& server,
                                                    const std::string& uri);

}  // namespace eit::cli
