#pragma once
// NatsReplayTransport: the ByteTransport of `reconstruct nats://…` (open_nats_replay_source,
// nats_frames.hpp), a bed's raw frames through an ordered consumer (no acknowledgements, nothing
// left on the server) from `since`, ending when it has caught up: the last message delivered says
// none is pending, or nothing came for idle_ms (an empty history). Sets the decoder's integer
// scale as NatsTransport does, and states the frames' Eit-Rate as NatsTransport does: the first
// frame the replay delivers (waited for at set-up, up to idle_ms, and kept for the first read),
// else the last one stored.
//
// Threads: constructed at set-up (it asks the server, and throws naming it); read() on the
// source's thread; stop() from any.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <nats/nats.h>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/nats/nats_address.hpp"
#include "nats_link.hpp"
#include "start_time.hpp"

namespace eit::nats {

class NatsReplayTransport final : public acquisition::ByteTransport {
 public:
  // since_ns > 0: from that time, else from the bed's first frame. `decoder` is borrowed.
  NatsReplayTransport(const NatsAddress& address, int64_t since_ns, int64_t idle_ms,
                      acquisition::IngestDecoder* decoder, double default_scale);
  ~NatsReplayTransport() override;

  // The Eit-Rate of the bed's frames at set-up (0: none stated, or no frame).
  double stated_rate_hz() const noexcept { return stated_rate_hz_; }
  std::string describe() const override;
  std::string endpoint() const override { return address_.server_url; }
  bool datagrams() const noexcept override { return true; }
  acquisition::TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override;
  void stop() noexcept override { stopped_.store(true, std::memory_order_relaxed); }

 private:
  NatsAddress address_;
  int64_t idle_ms_, idle_ms_left_ = idle_ms_;
  natsMsg* first_ = nullptr;  // delivered at set-up, not read yet
  double stated_rate_hz_ = 0;
  StartTimeGate gate_;
  acquisition::IngestDecoder* decoder_;  // borrowed: the StreamSource owns it
  double default_scale_;
  std::unique_ptr<NatsLink> link_;
  std::string subject_;
  natsSubscription* sub_ = nullptr;
  bool caught_up_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace eit::nats
