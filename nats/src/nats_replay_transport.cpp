// NatsReplayTransport: a bed's raw frames replayed through an ordered consumer (see
// nats_replay_transport.hpp).
#include "nats_replay_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "nats_transport.hpp"
#include "raw_frame_headers.hpp"

namespace eit::nats {

NatsReplayTransport::NatsReplayTransport(const NatsAddress& address, int64_t since_ns,
                                         int64_t idle_ms, acquisition::IngestDecoder* decoder,
                                         double default_scale)
    : address_(address),
      idle_ms_(idle_ms),
      gate_(since_ns),
      decoder_(decoder),
      default_scale_(default_scale) {
  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream replay {}.{}", address.site, address.bed);
  lo.wait_for_server = false;
  link_ = std::make_unique<NatsLink>(address, lo);
  subject_ = address.subject("raw");
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kRawStream;
  so.Ordered = true;
  if (since_ns > 0) {
    deliver_from_time(so.Config, since_ns);
  } else {
    so.Config.DeliverPolicy = js_DeliverAll;
  }
  jsErrCode err = static_cast<jsErrCode>(0);
  check(js_SubscribeSync(&sub_, link_->jetstream(), subject_.c_str(), nullptr, &so, &err),
        fmt::format("NATS {}: ordered consumer on {} in {} (JetStream error {})",
                    address.server_url, subject_, kRawStream, static_cast<int>(err)));
  const auto t0 = std::chrono::steady_clock::now();
  if (natsSubscription_NextMsg(&first_, sub_, idle_ms_) != NATS_OK) first_ = nullptr;
  // The wait counts towards the idle time that ends an empty replay.
  idle_ms_left_ -=
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  stated_rate_hz_ = stated_at_set_up(first_, link_->jetstream(), subject_).rate_hz;
}

NatsReplayTransport::~NatsReplayTransport() {
  if (first_) natsMsg_Destroy(first_);
  if (sub_) natsSubscription_Destroy(sub_);
}

std::string NatsReplayTransport::describe() const {
  return fmt::format("NATS {} {} (replay)", address_.server_url, subject_);
}

acquisition::TransportRead NatsReplayTransport::read(std::span<uint8_t> buffer,
                                                     Clock::time_point deadline) {
  using acquisition::TransportStatus;
  while (!stopped_.load(std::memory_order_relaxed)) {
    if (caught_up_) return {TransportStatus::kEnd, 0, false};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return {TransportStatus::kTimeout, 0, false};
    natsMsg* msg = std::exchange(first_, nullptr);
    const int64_t wait_ms = std::clamp<int64_t>(left.count(), 1, 100);
    if (!msg && natsSubscription_NextMsg(&msg, sub_, static_cast<int>(wait_ms)) != NATS_OK) {
      idle_ms_left_ -= wait_ms;
      if (idle_ms_left_ <= 0) caught_up_ = true;
      continue;
    }
    idle_ms_left_ = idle_ms_;
    jsMsgMetaData* meta = nullptr;
    bool admitted = true;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
      caught_up_ = meta->NumPending == 0;
      admitted = gate_.admits(meta->Timestamp);
      jsMsgMetaData_Destroy(meta);
    }
    if (!admitted) {  // stored before since=T
      natsMsg_Destroy(msg);
      continue;
    }
    const int len = natsMsg_GetDataLength(msg);
    if (static_cast<size_t>(len) > buffer.size()) {
      count_truncated();
      natsMsg_Destroy(msg);
      continue;
    }
    std::memcpy(buffer.data(), natsMsg_GetData(msg), static_cast<size_t>(len));
    decoder_->set_integer_scale(stated_integer_scale(msg, default_scale_));
    natsMsg_Destroy(msg);
    return {TransportStatus::kData, static_cast<size_t>(len), false};
  }
  return {acquisition::TransportStatus::kStopped, 0, false};
}

}  // namespace eit::nats
