#pragma once
// ViewServer's private state. Everything here is touched on the server thread only, except the
// atomics in `counters` and what the public methods post to the io_context.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>  // before Boost: 1.74's asio uses std::exchange
#include <vector>

#include <boost/asio.hpp>

#include "eit/pipeline/latency_histogram.hpp"
#include "eit/view/view_server.hpp"

namespace eit::view {

class WsSession;
using ImageBuffer = std::vector<std::byte>;
// One image message as the sessions queue it: its bytes (shared by all pages of the stream) and
// its acquisition time (the header's t_acquired_ns), which bounds how far behind a page may be.
struct QueuedImage {
  std::shared_ptr<const ImageBuffer> bytes;
  int64_t t_acquired_ns = 0;
};

// One stream as the server thread sees it.
struct StreamState {
  std::string name;
  std::shared_ptr<StreamChannel> channel;
  std::string series;  // latest series JSON, empty until one arrives
  // Image buffers shared by the sessions writing them; one whose only owner is this pool is free.
  std::vector<std::shared_ptr<ImageBuffer>> pool;
  uint64_t images = 0;
  int64_t last_image_wall_ns = 0;
  // The newest image taken from the channel: a page that opens or selects this stream between
  // images (a paused device, a finished replay) shows it instead of nothing.
  QueuedImage latest;
  // seq → acquisition and publication times (CLOCK_REALTIME ns) of recent images, to turn a
  // page's paint report into a display latency measured on this host's clock.
  struct WallTimes {
    uint64_t seq = 0;
    int64_t acquired_ns = 0, published_ns = 0;
  };
  static constexpr size_t kSeqRing = 8192;
  std::vector<WallTimes> wall_times = std::vector<WallTimes>(kSeqRing);

  std::shared_ptr<ImageBuffer> acquire_buffer();
};

class ViewServer::Impl : public std::enable_shared_from_this<ViewServer::Impl> {
 public:
  explicit Impl(ViewServerOptions options);

  ViewServerOptions options;
  boost::asio::io_context io{1};
  boost::asio::ip::tcp::acceptor acceptor{io};
  boost::asio::posix::stream_descriptor wake{io};
  int wake_fd = -1;
  uint64_t wake_value = 0;
  boost::asio::steady_timer status_timer{io};
  // After a failed accept (out of descriptors, say) the listen socket stays readable: without a
  // pause before the next try the server thread would spin a core until a descriptor frees up.
  // (The tcp/tls-listen sources pause as long: acquisition/src/reconnect_wait.hpp.)
  static constexpr std::chrono::milliseconds kAcceptRetryPause{100};
  boost::asio::steady_timer accept_pause{io};
  std::string last_accept_error;  // server thread
  uint64_t failures_in_a_row = 0;  // accept failures since the last accepted connection
  std::thread thread;
  bool started = false;

  std::map<std::string, StreamState> streams;  // by name
  std::string first_stream;                    // the default choice
  std::set<std::shared_ptr<WsSession>> sessions;
  std::vector<QueuedImage> batch;  // drain_channels' images of one wake-up
  std::function<std::string(size_t)> recapture;
  std::function<std::string()> status_provider;

  // Display latency, all pages: acquired → painted, and its parts: acquired → published (the
  // pipeline), published → received by the page's script (this server, the socket, the browser's
  // network process), received → the start of the display frame that draws it (waiting for the
  // frame), that start → drawn (the page's drawing code). Parts need the page's recv/raf times.
  enum LatencyPart : size_t { kTotal, kPipeline, kToPage, kToFrame, kDraw, kLatencyParts };
  static constexpr std::array<const char*, kLatencyParts> kLatencyPartNames = {
      "total", "acquired_to_published", "published_to_received", "received_to_frame",
      "frame_to_drawn"};
  std::array<pipeline::LatencyHistogram, kLatencyParts> display_latency;
  std::array<pipeline::HistogramSnapshot, kLatencyParts> latency_baseline;  // stats/reset
  struct Counters {
    std::atomic<uint64_t> browsers{0}, images_sent{0}, images_skipped{0}, images_thinned{0},
        paint_reports{0}, accept_failures{0};
  } counters;

  // Server thread.
  void accept();
  void arm_wake();
  void drain_channels();
  void arm_status();
  void on_session_open(const std::shared_ptr<WsSession>& s);
  void on_session_close(const std::shared_ptr<WsSession>& s);
  void on_session_select(const std::shared_ptr<WsSession>& s, const std::string& stream);
  // To a page that starts showing `st`: its latest series, and with `with_latest` its newest image.
  void send_stream_start(WsSession& s, const StreamState& st, bool with_latest);
  // recv_wall_ms / raf_wall_ms: NaN when the page did not report them.
  void on_paint_report(const std::string& stream, uint64_t seq, double paint_wall_ms,
                       double recv_wall_ms, double raf_wall_ms);
  std::string hello_json() const;
  std::string state_json() const;
  std::string stats_json() const;
  void reset_stats();
  StreamState* find_stream(const std::string& name);
};

}  // namespace eit::view
