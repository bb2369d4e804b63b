#pragma once
// NatsImageSink: publishes every image to JetStream on eit.<site>.<bed>.img in the same bytes as
// the ZeroMQ wire format (docs/protocol.md: the 112-byte ImageHeader then the float32 payload, here
// in one message since the subject replaces the topic), and the series JSON on …series at
// begin(), every interval_s and at end().
//
// NATS being slow or down never stalls the pipeline: publish() copies the image into one of
// `buffer_frames` preallocated message buffers and returns; a sender thread of its own hands them
// to libnats (async publish, acknowledged by JetStream), which keeps up to
// reconnect_buffer_bytes while disconnected. When both are full (the server is down longer than
// they last: at 50 frames/s of 32×32 images, 1024 buffers + 8 MB are ~60 s) the newest frame is
// dropped and counted. Every ack is
// checked: failures counted, the last one kept in words. libnats reconnects by itself; the
// sender retries a message until it is accepted, so nothing is lost within the buffer's bound.
//
// Threads: construction (connects, creates the streams: throws naming the server) at set-up;
// begin/publish/tick/end on one thread (the sink's); stats()/nats_stats()/abort() from any.
// publish() never blocks, allocates or logs.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_streams.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/spsc_queue.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::nats {

class NatsLink;

struct NatsSinkOptions {
  sinks::SeriesInfo series;     // stream name is ignored: the subject carries site and bed
  size_t buffer_frames = 1024;  // images kept here while NATS is slow or down…
  int reconnect_buffer_bytes = 8 << 20;  // …and by libnats while disconnected
  StreamLimits limits;          // retention of the streams it creates
  bool create_streams = true;
  int64_t end_timeout_ms = 5000;  // end() waits this long for the buffer to drain and be acked
};

struct NatsSinkStats {
  uint64_t acked = 0;          // images JetStream stored (acknowledged)
  uint64_t ack_failures = 0;   // publishes JetStream refused or never acknowledged
  uint64_t dropped_full = 0;   // images dropped because every buffer was taken
  uint64_t abandoned = 0;      // images still buffered when end() gave up waiting
  uint64_t retries = 0;        // publish attempts refused locally (not connected, stalled)
  size_t backlog = 0;          // images buffered now, not yet handed to libnats
  uint64_t disconnects = 0, reconnects = 0;
  bool connected = false;
  std::string last_error;
};

class NatsImageSink final : public pipeline::ImageSink {
 public:
  NatsImageSink(const recon::Model& model, const NatsAddress& address,
                NatsSinkOptions options = {});
  ~NatsImageSink() override;

  std::string_view name() const noexcept override { return "nats"; }
  void begin() noexcept override;
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void tick(int64_t now_ns) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  void abort() noexcept override { aborted_.store(true, std::memory_order_relaxed); }

  NatsSinkStats nats_stats() const;
  const std::string& image_subject() const noexcept { return image_subject_; }

 private:
  struct AckCounters;
  void sender_loop() noexcept;
  bool publish_buffer(uint32_t index) noexcept;
  void publish_series(const std::string& json) noexcept;
  void wake() noexcept;

  NatsSinkOptions options_;
  std::unique_ptr<AckCounters> acks_;  // before link_: the link's ack callback points here
  std::unique_ptr<NatsLink> link_;
  std::string image_subject_, series_subject_, series_json_;
  sinks::ImageHeader header_template_;
  size_t payload_bytes_ = 0, message_bytes_ = 0;
  std::vector<std::byte> buffers_;                // buffer_frames × message_bytes_
  pipeline::SpscQueue<uint32_t> free_, filled_;   // buffer indices
  std::atomic<uint32_t> work_{0};                 // bumped to wake the sender
  std::atomic<bool> series_due_{false}, ending_{false}, stop_{false}, aborted_{false};
  // published_: images libnats accepted (acks then count what JetStream stored).
  std::atomic<uint64_t> published_{0}, dropped_full_{0}, abandoned_{0}, retries_{0};
  int64_t next_series_ns_ = 0;
  std::thread sender_;
};

}  // namespace eit::nats
