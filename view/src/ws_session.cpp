#include "ws_session.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_header.hpp"

namespace eit::view {
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;

namespace {
std::atomic<uint64_t> g_next_session_id{1};
}

WsSession::WsSession(boost::asio::ip::tcp::socket socket, std::weak_ptr<ViewServer::Impl> server)
    : ws_(std::move(socket)),
      server_(std::move(server)),
      id_(g_next_session_id.fetch_add(1)),
      pace_timer_(ws_.get_executor()) {}

void WsSession::accept(beast::http::request<beast::http::string_body> request) {
  beast::get_lowest_layer(ws_).expires_never();
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
    res.set(beast::http::field::server, "eitstream view");
  }));
  ws_.auto_fragment(false);
  ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
    auto server = self->server_.lock();
    if (ec || !server) return;
    self->open_ = true;
    self->opened_ns = pipeline::now_ns();
    server->on_session_open(self);
    self->read();
  });
}

void WsSession::read() {
  ws_.async_read(read_buffer_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) {
      self->open_ = false;
      if (auto server = self->server_.lock()) server->on_session_close(self);
      return;
    }
    if (self->ws_.got_text()) self->on_message(beast::buffers_to_string(self->read_buffer_.data()));
    self->read_buffer_.consume(self->read_buffer_.size());
    self->read();
  });
}

void WsSession::on_message(const std::string& text) {
  auto server = server_.lock();
  if (!server) return;
  if (text == R"({"type":"ack"})") {  // one per image: the common message, without a JSON parse
    if (in_flight > 0) --in_flight;
    if (!writing_) write_next();
    return;
  }
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return;
  const std::string type = j["type"].get<std::string>();
  if (type == "painted" && j.contains("seq") && j.contains("paint_wall_ms") &&
      j["seq"].is_number_unsigned() && j["paint_wall_ms"].is_number()) {
    ++painted;
    const uint64_t seq = j["seq"].get<uint64_t>();
    if (latest_seq_ == seq) {  // the catch-up image: its age is not the display's latency
      latest_seq_.reset();
      return;
    }
    const auto optional_ms = [&j](const char* key) {
      return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
    };
    server->on_paint_report(stream_, seq, j["paint_wall_ms"].get<double>(),
                            optional_ms("recv_wall_ms"), optional_ms("raf_wall_ms"));
  } else if (type == "ack") {
    if (in_flight > 0) --in_flight;
    if (!writing_) write_next();
  } else if (type == "flow" && j.contains("window") && j["window"].is_number_unsigned()) {
    window = std::clamp<uint32_t>(j["window"].get<uint32_t>(), 1, 64);
    in_flight = 0;
    if (!writing_) write_next();
  } else if (type == "pace" && j.contains("max_rate_hz") && j["max_rate_hz"].is_number()) {
    pacer_.set_rate(j["max_rate_hz"].get<double>(), pipeline::now_ns());
    if (!writing_) write_next();
  } else if (type == "select" && j.contains("stream") && j["stream"].is_string()) {
    server->on_session_select(shared_from_this(), j["stream"].get<std::string>());
  }
}

void WsSession::send_images(std::span<const QueuedImage> images) {
  if (!open_ || images.empty()) return;
  pending_images_.insert(pending_images_.end(), images.begin(), images.end());
  // Paced: what cannot go before the newest does is thinned now rather than skipped later.
  if (pacer_.paced()) thin_to(std::max<size_t>(1, pacer_.allowed(pipeline::now_ns())));
  // Newest wins: drop what is too many or too old behind the newest image waiting.
  const int64_t newest = pending_images_.back().t_acquired_ns;
  uint64_t skipped = 0;
  while (pending_images_.size() > kMaxWaitingImages ||
         (pending_images_.size() > 1 &&
          newest - pending_images_.front().t_acquired_ns > kMaxWaitingLagNs)) {
    pending_images_.pop_front();
    ++skipped;
  }
  if (skipped) {
    images_skipped += skipped;
    if (auto server = server_.lock())
      server->counters.images_skipped.fetch_add(skipped, std::memory_order_relaxed);
  }
  if (!writing_) write_next();
}

void WsSession::send_latest(const QueuedImage& image) {
  // The server took it from its own channel, which only validated images reach.
  latest_seq_ = sinks::decode_image_header(*image.bytes)->seq;
  send_images({&image, 1});
}

void WsSession::send_text(std::string text) {
  if (!open_) return;
  if (texts_.size() >= kMaxTexts) {
    texts_.pop_front();
    ++texts_dropped;
  }
  texts_.push_back(std::move(text));
  if (!writing_) write_next();
}

void WsSession::write_next() {
  auto done = [self = shared_from_this()](beast::error_code ec, size_t) {
    self->writing_ = false;
    self->writing_image_.reset();
    if (ec) {
      self->open_ = false;
      return;  // the pending read fails too and reports the close
    }
    self->write_next();
  };
  if (!open_) return;
  if (!texts_.empty()) {
    writing_text_ = std::move(texts_.front());
    texts_.pop_front();
    writing_ = true;
    ws_.text(true);
    ws_.async_write(boost::asio::buffer(writing_text_), std::move(done));
  } else if (!pending_images_.empty() && (window == 0 || in_flight < window) && pace_images()) {
    pacer_.spend();
    writing_image_ = std::move(pending_images_.front().bytes);
    pending_images_.pop_front();
    writing_ = true;
    ++images_sent;
    if (window) ++in_flight;
    if (auto server = server_.lock())
      server->counters.images_sent.fetch_add(1, std::memory_order_relaxed);
    ws_.binary(true);
    ws_.async_write(boost::asio::buffer(writing_image_->data(), writing_image_->size()),
                    std::move(done));
  }
}

bool WsSession::pace_images() {
  if (!pacer_.paced()) return true;
  const int64_t now = pipeline::now_ns();
  const size_t allowed = pacer_.allowed(now);
  if (allowed >= 1) {
    thin_to(allowed);
    return true;
  }
  if (!pace_armed_) {
    pace_armed_ = true;
    pace_timer_.expires_after(std::chrono::nanoseconds(pacer_.due_ns(now) - now));
    pace_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      self->pace_armed_ = false;
      if (!ec && !self->writing_) self->write_next();
    });
  }
  return false;
}

void WsSession::thin_to(size_t keep) {
  uint64_t thinned = 0;
  for (; pending_images_.size() > keep; ++thinned) pending_images_.pop_front();
  if (!thinned) return;
  images_thinned += thinned;
  if (auto server = server_.lock())
    server->counters.images_thinned.fetch_add(thinned, std::memory_order_relaxed);
}

void WsSession::close() {
  pace_timer_.cancel();
  if (!open_) return;
  open_ = false;
  beast::error_code ec;
  beast::get_lowest_layer(ws_).socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  beast::get_lowest_layer(ws_).socket().close(ec);
}

}  // namespace eit::view
