#pragma once
// IndicesPublisher: the ImageSink that computes the clinical indices of every image (IndicesEngine)
// and publishes them on its own ZeroMQ PUB socket (docs/protocol.md, "Indices"):
//   eit/<stream>/global          per frame, binary: 40-byte GlobalHeader + float64 region sums
//   eit/<stream>/breath          per breath, JSON (breath_json.hpp), with the tidal image
//   eit/<stream>/indices_series  JSON at begin(), every interval_s and at end(): region names,
//                                frame rate, sign, detection parameters, image shape
// Its own socket because ZeroMQ sockets are not thread-safe and the image publisher owns its
// own; both live on the publish-stage thread, so they may share one zmq context.
//
// Policy kDropNewest: sends never block; a message that meets the high-water mark is dropped and
// counted. The indices themselves are computed for every frame handed in, dropped or not.
// Security (docs/security.md): with curve_server set the socket is a CURVE server and a
// ZapAuthenticator on its context admits only the client keys in curve_allowed (as the image
// publisher, zmq_publisher.hpp); refused handshakes are counted (curve_refused()).
// Threads: construction anywhere (binds: throws std::runtime_error naming the endpoint); begin,
// publish, tick, end on the publish-stage thread; stats from any thread. publish() allocates
// nothing itself (libzmq copies the message into its own buffers).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "eit/indices/indices_engine.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/sinks/zap_authenticator.hpp"

namespace eit::indices {

// Little-endian, packed, 40 bytes; numpy: dtype([("magic","S4"),("version","<u2"),
// ("n_values","<u2"),("seq","<u8"),("t_acquired_ns","<i8"),("flags","<u4"),
// ("dropped_before","<u4"),("frame","<u8")]) then n_values "<f8" (global first).
struct GlobalHeader {
  char magic[4] = {'E', 'I', 'X', 'G'};
  uint16_t version = 1;
  uint16_t n_values = 0;  // region sums that follow (global first)
  uint64_t seq = 0;
  int64_t t_acquired_ns = 0;  // Stage::kReceived
  uint32_t flags = 0;         // the frame's FrameFlag bits
  uint32_t dropped_before = 0;
  uint64_t frame = 0;  // frame number in this series (the breath message's "frames" count these)
};
static_assert(sizeof(GlobalHeader) == 40);

struct IndicesPublisherOptions {
  std::string endpoint = "tcp://127.0.0.1:5556";
  std::string stream = "default";
  int send_hwm = 1000;
  int linger_ms = 500;
  double interval_s = 2.0;    // indices_series repeat
  bool breath_images = true;  // tidal, mean tidal, RVD and lung-space images in breath messages
  // CURVE server keys (secret_z85 empty: plaintext) and the client public keys (z85) admitted.
  sinks::CurveKeyPair curve_server;
  std::vector<std::string> curve_allowed;
};

class IndicesPublisher final : public pipeline::ImageSink {
 public:
  IndicesPublisher(IndicesEngine engine, IndicesPublisherOptions options,
                   std::shared_ptr<zmq::context_t> context = nullptr);
  ~IndicesPublisher() override;

  const std::string& endpoint() const noexcept { return endpoint_; }
  std::string_view name() const noexcept override { return "indices"; }
  void begin() noexcept override;
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void tick(int64_t now_ns) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  pipeline::SinkPolicy policy() const noexcept override {
    return pipeline::SinkPolicy::kDropNewest;
  }
  uint64_t breaths() const noexcept { return breaths_.load(std::memory_order_relaxed); }
  bool curve() const noexcept { return zap_ != nullptr; }
  const std::string& curve_public_z85() const noexcept { return options_.curve_server.public_z85; }
  // CURVE clients admitted and refused (unknown keys) so far; 0 without CURVE.
  uint64_t curve_admitted() const noexcept;
  uint64_t curve_refused() const noexcept;

 private:
  bool send(const std::string& topic, const void* data, size_t size) noexcept;
  void send_breath(const BreathIndices& b) noexcept;

  IndicesEngine engine_;
  IndicesPublisherOptions options_;
  std::shared_ptr<zmq::context_t> context_;
  std::unique_ptr<sinks::ZapAuthenticator> zap_;  // before socket_: it outlives the socket
  zmq::socket_t socket_;
  std::string endpoint_, global_topic_, breath_topic_, series_topic_, series_json_;
  std::vector<unsigned char> global_msg_;
  std::vector<char> breath_msg_;
  int64_t next_series_ns_ = 0;
  std::atomic<uint64_t> sent_{0}, dropped_{0}, errors_{0}, breaths_{0};
};

}  // namespace eit::indices
