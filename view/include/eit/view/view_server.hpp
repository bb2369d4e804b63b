#pragma once
// ViewServer: the live view's HTTP + WebSocket server (Boost.Beast on Asio). It serves the page
// (view/web, compiled in), streams every image of the stream a browser chose as one binary
// WebSocket message (the 112-byte ImageHeader then the float32 payload, docs/protocol.md), and
// forwards the stream's JSON messages (series, series-end, …) as text messages.
//
// Never behind: each browser has at most one image being written and, waiting behind it, at most
// 16 images acquired no more than 200 ms before the newest waiting one (a wake-up takes every image
// that arrived since the last one, at most RecentFrameRing::kDefaultSlots); older or surplus ones
// are skipped (counted for that browser). So a slow browser shows fewer frames, never older ones, and
// a browser that stops reading holds up nobody else, while a server thread the machine delayed
// catches up without losing the frames of the delay. The kernel's send buffer per connection is
// kept small (64 KiB) so it cannot hide a backlog either. A page that asks for a pace (about twice
// its display's refresh) is sent at most that many images per second, always the newest; the rest
// are thinned (counted apart from skips), so 1,000 frames/s costs a 60 Hz page 120 messages/s.
//
// Feeding it: add_stream() returns a StreamChannel; one producer thread per channel calls
// publish(), which copies into the channel's RecentFrameRing and wakes the server (an eventfd):
// no allocation, no lock, no blocking. The server thread takes every image still in the ring.
//
// Threads: one server thread (start()/stop()). add_stream, set_series, post_json and the
// set_* callbacks may be called from any thread; they allocate (set-up, not per frame). The
// callbacks run on the server thread. Construction binds and throws std::runtime_error naming the
// address when it cannot.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "eit/view/recent_frame_ring.hpp"

namespace eit::view {

struct ViewServerOptions {
  std::string address = "127.0.0.1";  // loopback by default
  uint16_t port = 8080;               // 0: an ephemeral port (see ViewServer::port())
  int status_interval_ms = 500;       // how often each browser gets a status message
  int send_buffer_bytes = 64 * 1024;  // SO_SNDBUF of every connection
  // Told, on the server thread, when the server itself runs into trouble and when it is over
  // (accepting fails, e.g. out of file descriptors: one line when it starts, one when it ends);
  // the CLI prints it on stderr. May be empty.
  std::function<void(const std::string&)> report;
};

// Parses "HOST:PORT", ":PORT" or "PORT" (host defaults to 127.0.0.1); throws
// std::invalid_argument naming the text when it is not one of those.
ViewServerOptions parse_http_address(const std::string& text);

// Where one stream's images enter the server. One producer thread calls publish().
class StreamChannel {
 public:
  StreamChannel(size_t capacity, int wake_fd);
  // Copies head + body as one message and wakes the server. Never blocks, allocates or locks.
  // False when the message exceeds the capacity (counted by the ring).
  bool publish(std::span<const std::byte> head, std::span<const std::byte> body) noexcept;
  RecentFrameRing& ring() noexcept { return ring_; }

 private:
  RecentFrameRing ring_;
  int wake_fd_;
};

// What the server reports about itself (GET /api/stats gives the same and more, as JSON).
struct ViewStats {
  uint64_t browsers = 0;        // WebSocket clients now connected
  uint64_t images_sent = 0;     // binary messages written, all browsers
  uint64_t images_skipped = 0;  // images replaced before a browser could take them, all browsers
  uint64_t images_thinned = 0;  // images not sent to paced pages (more than their display shows)
  uint64_t paint_reports = 0;   // "painted" reports received from pages
  uint64_t accept_failures = 0;  // connections the server could not accept (out of descriptors…)
};

class ViewServer {
 public:
  explicit ViewServer(ViewServerOptions options);
  ~ViewServer();  // stop()
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  uint16_t port() const noexcept;  // the bound port (the ephemeral one resolved)
  std::string url() const;         // "http://127.0.0.1:PORT/"

  void start();          // starts the server thread (once)
  void stop() noexcept;  // closes every connection and joins the thread

  // A stream the page can show; `capacity` bytes bound one image message (header + payload).
  // Calling it again for the same name replaces the channel (e.g. a larger model); the old one
  // keeps working but is no longer read.
  std::shared_ptr<StreamChannel> add_stream(const std::string& name, size_t capacity);
  // The stream's current series message (JSON text): sent to its browsers now and to every
  // browser that selects the stream later.
  void set_series(const std::string& stream, std::string json);
  // Any other JSON message of the stream (series-end, breath, global…): forwarded to its browsers.
  void post_json(const std::string& stream, std::string json);

  // POST /api/recapture?frames=N calls this; it returns "" on success or why it could not.
  // Without it the page hides the button and the POST answers 409.
  void set_recapture(std::function<std::string(size_t frames)> recapture);
  // A JSON object describing the source side (pipeline counters, publisher connections), put
  // into every status message as "source".
  void set_status_provider(std::function<std::string()> provider);

  ViewStats stats() const noexcept;

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace eit::view
