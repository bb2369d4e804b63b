#pragma once
// ZmqPublisher: the ImageSink that sends every image over ZeroMQ in the wire format of
// docs/protocol.md: multipart [topic "eit/<stream>/img", 112-byte ImageHeader, float32 payload],
// plus JSON series messages on "eit/<stream>/series" at begin(), every interval_s and a
// series-end at end().
//
// Patterns: kPub (PUB, binds; subscribers filter by topic prefix) or kPush (PUSH, binds; for
// lossless consumers such as recorders). Policies: live — non-blocking sends; a frame that finds
// the high-water mark reached (or, for PUSH, no peer) is dropped and counted (PUB uses
// ZMQ_XPUB_NODROP so that drops are visible instead of silent); lossless — publish() waits until
// the socket takes the frame or abort() is called. Never CONFLATE (multipart messages).
//
// Threads: construction anywhere (binds: throws std::runtime_error naming the endpoint);
// begin/publish/tick/end on the publish-stage thread; stats/abort/endpoint from any thread.
// publish() allocates nothing itself (libzmq copies the payload into its own message buffers).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::sinks {

enum class ZmqPattern { kPub, kPush };

struct ZmqPublisherOptions {
  std::string endpoint = "tcp://127.0.0.1:5555";  // "tcp://127.0.0.1:*" for an ephemeral port
  ZmqPattern pattern = ZmqPattern::kPub;
  bool lossless = false;
  int send_hwm = 1000;   // messages queued per peer before live sends drop
  int linger_ms = 1000;  // how long closing waits to flush queued messages
  SeriesInfo series;     // stream name, series id (0: random), description, interval
};

class ZmqPublisher final : public pipeline::ImageSink {
 public:
  ZmqPublisher(const recon::Model& model, ZmqPublisherOptions options,
               std::shared_ptr<zmq::context_t> context = nullptr);
  ~ZmqPublisher() override;

  // The endpoint actually bound (the ephemeral port resolved), e.g. "tcp://127.0.0.1:40123".
  const std::string& endpoint() const noexcept { return endpoint_; }
  uint64_t series_id() const noexcept { return options_.series.series_id; }

  std::string_view name() const noexcept override { return "zmq"; }
  void begin() noexcept override;
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void tick(int64_t now_ns) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  void abort() noexcept override { aborted_.store(true, std::memory_order_relaxed); }

 private:
  bool send_parts(const zmq::const_buffer* parts, size_t n) noexcept;
  void send_series(const std::string& json) noexcept;

  ZmqPublisherOptions options_;
  std::shared_ptr<zmq::context_t> context_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::string image_topic_, series_topic_, series_json_;
  ImageHeader header_template_;
  size_t payload_bytes_ = 0;
  int64_t next_series_ns_ = 0;
  std::atomic<bool> aborted_{false};
  std::atomic<uint64_t> sent_{0}, dropped_{0}, errors_{0};
};

}  // namespace eit::sinks
