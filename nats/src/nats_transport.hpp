#pragma once
// NatsTransport: the ByteTransport of `run --source nats://…` (nats_frames.hpp), a bed's raw frames
// fetched in batches from its durable pull consumer, each message one frame, acknowledged as read()
// hands it over. Before handing a message over it sets `decoder`'s integer scale to the frame's
// Eit-Scale, else `default_scale`: the decoder (owned by the same StreamSource, used on the same
// thread) decodes each message as soon as read() returns it.
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

// What a bed's raw frames state at set-up (0: not stated): those `first` states (the first frame
// a consumer delivers; may be nullptr), else those of the last frame stored on `subject`, asked of
// the server.
struct StatedAtSetUp {
  double rate_hz = 0;        // Eit-Rate
  double integer_scale = 0;  // Eit-Scale
};
StatedAtSetUp stated_at_set_up(natsMsg* first, jsCtx* js, const std::string& subject);

class NatsTransport final : public acquisition::ByteTransport {
 public:
  static constexpr int kFetchBatch = 32;  // frames asked per round trip (more when some are queued)

  // since_ns > 0: from that time (a new consumer); < 0: only new frames; 0: where the consumer
  // stopped (or all, for a new one). `decoder` is borrowed.
  NatsTransport(const NatsAddress& address, int64_t since_ns, acquisition::IngestDecoder* decoder,
                double default_scale);
  ~NatsTransport() override;

  std::string describe() const override;
  std::string endpoint() const override { return address_.server_url; }
  bool datagrams() const noexcept override { return true; }
  acquisition::TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override;
  void stop() noexcept override { stopped_.store(true, std::memory_order_relaxed); }

  // The Eit-Rate and Eit-Scale of the bed's frames at set-up (0: none stated, or no frame yet).
  double stated_rate_hz() const noexcept { return stated_.rate_hz; }
  double stated_scale() const noexcept { return stated_.integer_scale; }

 private:
  void fetch_first();

  NatsAddress address_;
  std::unique_ptr<NatsLink> link_;
  std::string subject_, durable_;
  StatedAtSetUp stated_;
  natsSubscription* sub_ = nullptr;
  StartTimeGate gate_;
  acquisition::IngestDecoder* decoder_;  // borrowed: the StreamSource owns it
  double default_scale_;
  natsMsgList list_{};
  int next_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace eit::nats
