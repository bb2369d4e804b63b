#include "http_session.hpp"

#include <charconv>
#include <chrono>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "eit/sinks/json_text.hpp"
#include "host_check.hpp"
#include "web_assets.hpp"
#include "ws_session.hpp"

namespace eit::view {
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

// The host:port part of an Origin header ("http://127.0.0.1:8080" → "127.0.0.1:8080").
std::string_view origin_host(std::string_view origin) {
  if (const auto p = origin.find("://"); p != std::string_view::npos) origin.remove_prefix(p + 3);
  if (const auto p = origin.find('/'); p != std::string_view::npos) origin = origin.substr(0, p);
  return origin;
}

// The value of `key` in the query as a whole number; `fallback` when the key is absent, nullopt
// when its value is not all digits ("-5", "5abc", "").
std::optional<size_t> query_number(std::string_view target, std::string_view key, size_t fallback) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return fallback;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') {
      size_t v = 0;
      const auto digits = pair.substr(key.size() + 1);
      const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return std::nullopt;
      return v;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return fallback;
}

}  // namespace

HttpSession::HttpSession(boost::asio::ip::tcp::socket socket,
                         std::weak_ptr<ViewServer::Impl> server)
    : stream_(std::move(socket)), server_(std::move(server)) {}

void HttpSession::read() {
  request_ = {};
  stream_.expires_after(std::chrono::seconds(30));
  http::async_read(
      stream_, buffer_, request_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) {
          beast::error_code ignored;
          self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
          return;
        }
        self->handle(std::move(self->request_));
      });
}

void HttpSession::handle(Request request) {
  auto server = server_.lock();
  if (!server) return;
  const std::string_view origin = request[http::field::origin];
  const std::string_view host = request[http::field::host];
  const bool foreign = !origin.empty() && origin_host(origin) != host;
  beast::error_code ec;
  const bool rebound = !host_header_allowed(host, server->acceptor.local_endpoint(ec).address());
  if (!foreign && !rebound && beast::websocket::is_upgrade(request) &&
      request.target().starts_with("/ws")) {
    auto ws = std::make_shared<WsSession>(stream_.release_socket(), server_);
    ws->accept(std::move(request));
    return;
  }
  Response res;
  if (foreign || rebound) {
    res = Response(http::status::forbidden, request.version());
    res.set(http::field::content_type, "text/plain");
    res.body() = foreign ? fmt::format("origin {} may not use this view\n", origin)
                         : fmt::format(
                               "host '{}' may not use this view: it listens on loopback, "
                               "open it as http://127.0.0.1:PORT or http://localhost:PORT\n",
                               host);
  } else {
    try {
      res = respond(request, *server);
    } catch (const std::exception& e) {
      // A request must never end the process that runs the pipeline: answer and go on.
      res = Response(http::status::internal_server_error, request.version());
      res.set(http::field::content_type, "text/plain");
      res.body() = fmt::format("internal error: {}\n", e.what());
    }
  }
  res.keep_alive(request.keep_alive());
  res.prepare_payload();
  write(std::move(res));
}

HttpSession::Response HttpSession::respond(const Request& req, ViewServer::Impl& server) {
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  auto json = [&](http::status status, std::string body) {
    Response r(status, req.version());
    r.set(http::field::content_type, "application/json");
    r.set(http::field::cache_control, "no-store");
    r.body() = std::move(body);
    return r;
  };
  if (req.method() == http::verb::get || req.method() == http::verb::head) {
    if (path == "/ws")  // reached only without a WebSocket upgrade
      return json(
          http::status::upgrade_required,
          R"j({"error": "/ws is the WebSocket of the live view: open it with a WebSocket client"})j");
    if (path == "/api/recapture" || path == "/api/stats/reset") {
      Response r = json(http::status::method_not_allowed,
                        fmt::format(R"j({{"error": "{} takes POST"}})j", path));
      r.set(http::field::allow, "POST");
      return r;
    }
    if (path == "/api/state") return json(http::status::ok, server.state_json());
    if (path == "/api/stats") return json(http::status::ok, server.stats_json());
    if (const WebAsset* asset = find_web_asset(target)) {
      Response r(http::status::ok, req.version());
      r.set(http::field::content_type, asset->content_type);
      r.set(http::field::cache_control, "no-cache");
      if (req.method() == http::verb::get) r.body().assign(asset->bytes);
      return r;
    }
    return json(http::status::not_found,
                sinks::json_text(nlohmann::json{{"error", fmt::format("no such page: {}", path)}}));
  }
  if (req.method() == http::verb::post) {
    if (path == "/api/recapture") {
      if (!server.recapture)
        return json(http::status::conflict,
                    R"j({"error": "this server does not run the pipeline: recapture the )j"
                    R"j(reference in the eitstream run process (eitstream run --http)"})j");
      const std::optional<size_t> given = query_number(target, "frames", 50);
      const size_t frames = given.value_or(0);
      if (frames == 0 || frames > 100000)
        return json(http::status::bad_request,
                    R"j({"error": "frames: expected a whole number in 1..100000"})j");
      const std::string why = server.recapture(frames);
      if (!why.empty())
        return json(http::status::conflict, sinks::json_text(nlohmann::json{{"error", why}}));
      return json(http::status::ok, fmt::format(R"({{"ok": true, "frames": {}}})", frames));
    }
    if (path == "/api/stats/reset") {
      server.reset_stats();
      return json(http::status::ok, R"({"ok": true})");
    }
  }
  return json(http::status::method_not_allowed,
              sinks::json_text(nlohmann::json{
                  {"error", fmt::format("{} {} is not supported", req.method_string(), path)}}));
}

void HttpSession::write(Response response) {
  auto res = std::make_shared<Response>(std::move(response));
  http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
    if (ec || !res->keep_alive()) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
      return;
    }
    self->read();
  });
}

}  // namespace eit::view
