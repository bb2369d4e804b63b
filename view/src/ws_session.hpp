#pragma once
// WsSession: one browser's WebSocket. At most one write in flight; behind it a short queue of
// images (send_images appends each server wake-up's images, oldest first) bounded by count
// (kMaxWaitingImages) and by age: an image acquired more than kMaxWaitingLagNs before the newest
// waiting one is skipped (counted), so a page whose browser was held up for a moment still gets
// the frames of that moment, while a page that stays slow shows fewer frames, never older ones;
// and a short queue of text messages (series, status; the oldest is dropped when it is full). Reads the page's messages: "select"
// (which stream to show), "painted" (seq + paint time, for the display-latency measurement) and
// the flow control: after {"type": "flow", "window": W} at most W images are unacknowledged
// ({"type": "ack"} per image the page has taken), so that a page whose script falls behind cannot
// pile images up inside the browser either; the newest waits here instead, older ones are skipped.
// And the pace: after {"type": "pace", "max_rate_hz": R} images go out at most R per second
// (ImagePacer); when some may go, the newest waiting ones do and the older ones are thinned
// (counted apart from the skips: thinning to the display's rate is no loss the page could show).
//
// Threads: the server thread only (the io_context runs on one thread, so no strand is needed).
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>  // before Boost: 1.74's asio uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "eit/view/image_pacer.hpp"
#include "view_server_impl.hpp"

namespace eit::view {

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(boost::asio::ip::tcp::socket socket, std::weak_ptr<ViewServer::Impl> server);

  // Completes the WebSocket handshake for `request`, then starts reading.
  void accept(boost::beast::http::request<boost::beast::http::string_body> request);

  // The images of one server wake-up, oldest first.
  void send_images(std::span<const QueuedImage> images);
  // The stream's newest image, for a page that has just started showing the stream. It may be
  // minutes old (a paused device), so its paint report is not taken as a display latency.
  void send_latest(const QueuedImage& image);
  static constexpr size_t kMaxWaitingImages = 16;
  static constexpr int64_t kMaxWaitingLagNs = 200'000'000;
  void send_text(std::string text);
  void close();

  const std::string& stream() const noexcept { return stream_; }
  void set_stream(std::string name) { stream_ = std::move(name); }
  uint64_t id() const noexcept { return id_; }

  uint64_t images_sent = 0, images_skipped = 0, images_thinned = 0, texts_dropped = 0, painted = 0;
  uint32_t window = 0;     // most unacknowledged images; 0: no flow control (plain clients)
  uint32_t in_flight = 0;  // images sent and not yet acknowledged
  int64_t opened_ns = 0;
  double max_rate_hz() const noexcept { return pacer_.rate_hz(); }

 private:
  void read();
  void on_message(const std::string& text);
  void write_next();
  // Paced: drops all but the images that may go now (thinned); false when none may go yet (a
  // timer then calls write_next when one may).
  bool pace_images();
  void thin_to(size_t keep);  // drops the oldest waiting images beyond `keep`, counted as thinned

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  std::weak_ptr<ViewServer::Impl> server_;
  boost::beast::flat_buffer read_buffer_;
  std::string stream_;
  uint64_t id_;
  bool open_ = false, writing_ = false;
  std::deque<std::string> texts_;
  std::deque<QueuedImage> pending_images_;
  std::optional<uint64_t> latest_seq_;  // send_latest's image, until the page reports its paint
  std::shared_ptr<const ImageBuffer> writing_image_;
  std::string writing_text_;
  ImagePacer pacer_;
  boost::asio::steady_timer pace_timer_;
  bool pace_armed_ = false;
  static constexpr size_t kMaxTexts = 8;
};

}  // namespace eit::view
