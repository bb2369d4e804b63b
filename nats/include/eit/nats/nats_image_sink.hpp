#pragma once
// NatsImageSink: publishes every image to JetStream on eit.<site>.<bed>.img in the same bytes as
// the ZeroMQ wire format (docs/protocol.md: the 112-byte ImageHeader then the float32 payload, here
// in one message since the subject replaces the topic), and the series JSON on …series at
// begin(), every interval_s and at end().
//
// NATS being slow or down never stalls the pipeline: publish() copies the image into one of
// `buffer_frames` preallocated slots and returns. An OrderedPublisher (nats/src) of its own
// publishes them in order, each with the message id <site>.<bed>.<series id>.<n>, and frees a
// slot only once JetStream acknowledged it: an image refused or not acknowledged (the server
// restarting, a cluster's stream leader lost and re-elected) is sent again, in order, and the
// stream's duplicate window stores it once. When every slot is taken (the server is down longer
// than they last: at 50 frames/s of 32×32 images, 1024 slots are ~20 s) the newest frame is
// dropped and counted. libnats reconnects by itself.
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
#include "eit/nats/server_wait.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::nats {

class OrderedPublisher;

struct NatsSinkOptions {
  sinks::SeriesInfo series;     // stream name is ignored: the subject carries site and bed
  size_t buffer_frames = 1024;  // images kept here while NATS is slow or down…
  int reconnect_buffer_bytes = 8 << 20;  // libnats' own, while disconnected
  int64_t ack_wait_ms = 2000;   // an image not acknowledged this long is sent again
  StreamLimits limits;          // retention of the streams it creates
  bool create_streams = true;
  int64_t end_timeout_ms = 5000;  // end() waits this long for the buffer to drain and be acked
  // While set-up waits for a server (server_wait.hpp): unset parts are the process default's.
  ServerWait wait;
};

struct NatsSinkStats {
  uint64_t acked = 0;          // images JetStream stored (acknowledged)
  uint64_t ack_failures = 0;   // publishes JetStream refused or never acknowledged (sent again)
  uint64_t resent = 0;         // publishes of an image sent before
  uint64_t duplicates = 0;     // resent images JetStream had already stored (kept once)
  uint64_t reordered = 0;      // images stored after a later one
  uint64_t dropped_full = 0;   // images dropped because every buffer was taken
  uint64_t abandoned = 0;      // images still buffered when end() gave up waiting
  uint64_t retries = 0;        // publish calls libnats refused (tried again), series not sent
  size_t backlog = 0;          // images buffered now, not yet stored
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
  // How long end() waits for the buffered images to be stored.
  int64_t end_timeout_ms() const noexcept { return options_.end_timeout_ms; }

  NatsSinkStats nats_stats() const;
  const std::string& image_subject() const noexcept { return image_subject_; }

 private:
  void series_loop() noexcept;
  void publish_series(const std::string& json) noexcept;
  void wake() noexcept;

  NatsSinkOptions options_;
  std::string image_subject_, series_subject_, series_json_;
  sinks::ImageHeader header_template_;
  size_t payload_bytes_ = 0;
  std::unique_ptr<OrderedPublisher> publisher_;
  std::atomic<uint32_t> work_{0};  // bumped to wake the series thread
  std::atomic<bool> series_due_{false}, stop_{false}, aborted_{false};
  std::atomic<uint64_t> series_failures_{0};
  bool ended_ = false;
  int64_t next_series_ns_ = 0;
  std::thread series_thread_;
};

}  // namespace eit::nats
