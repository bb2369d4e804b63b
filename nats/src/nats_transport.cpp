// NatsTransport: a bed's raw frames from its durable pull consumer (see nats_transport.hpp), and
// what the bed's frames state at set-up.
#include "nats_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "raw_frame_headers.hpp"

namespace eit::nats {
namespace {

// The last frame stored on `subject` (the caller destroys it), nullptr when none.
natsMsg* last_stored_frame(jsCtx* js, const std::string& subject) {
  natsMsg* frame = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  if (js_GetLastMsg(&frame, js, kRawStream, subject.c_str(), nullptr, &err) != NATS_OK)
    return nullptr;
  return frame;
}

StatedAtSetUp stated_by(natsMsg* frame) noexcept {
  return {stated_rate_hz(frame), stated_integer_scale(frame, 0)};
}

}  // namespace

StatedAtSetUp stated_at_set_up(natsMsg* first, jsCtx* js, const std::string& subject) {
  if (first) return stated_by(first);
  natsMsg* last = last_stored_frame(js, subject);
  if (!last) return {};
  const StatedAtSetUp stated = stated_by(last);
  natsMsg_Destroy(last);
  return stated;
}

NatsTransport::NatsTransport(const NatsAddress& address, int64_t since_ns,
                             acquisition::IngestDecoder* decoder, double default_scale)
    : address_(address), gate_(since_ns), decoder_(decoder), default_scale_(default_scale) {
  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream source {}.{}", address.site, address.bed);
  link_ = std::make_unique<NatsLink>(address, lo);
  link_->ensure_streams({});
  subject_ = address.subject("raw");
  durable_ = fmt::format("eitstream-{}-{}", address.site, address.bed);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kRawStream;
  so.Config.AckPolicy = js_AckExplicit;
  if (since_ns > 0) {
    deliver_from_time(so.Config, since_ns);
  } else if (since_ns < 0) {
    so.Config.DeliverPolicy = js_DeliverNew;
  }
  jsErrCode err = static_cast<jsErrCode>(0);
  check(js_PullSubscribe(&sub_, link_->jetstream(), subject_.c_str(), durable_.c_str(), nullptr,
                         &so, &err),
        fmt::format("NATS {}: pull consumer {} on {} (JetStream error {})", address.server_url,
                    durable_, subject_, static_cast<int>(err)));
  // What the bed's frames state: the first frame this consumer delivers, fetched now and kept
  // for read() (given back with a negative acknowledgement instead, it was delivered again
  // after the next ones when read() followed at once), else the last one stored (a live
  // gateway's, for a consumer with nothing pending).
  fetch_first();
  stated_ =
      stated_at_set_up(list_.Count > 0 ? list_.Msgs[0] : nullptr, link_->jetstream(), subject_);
}

NatsTransport::~NatsTransport() {
  // Frames fetched but not read go back at once (negative ack), so the next consumer on this
  // bed gets them first instead of after the ack wait, out of order.
  for (int i = next_; i < list_.Count; ++i) natsMsg_Nak(list_.Msgs[i], nullptr);
  natsMsgList_Destroy(&list_);
  if (sub_) natsSubscription_Destroy(sub_);
}

std::string NatsTransport::describe() const {
  return fmt::format("NATS {} {} (consumer {})", address_.server_url, subject_, durable_);
}

acquisition::TransportRead NatsTransport::read(std::span<uint8_t> buffer,
                                               Clock::time_point deadline) {
  using acquisition::TransportStatus;
  while (!stopped_.load(std::memory_order_relaxed)) {
    if (next_ < list_.Count) {
      natsMsg* msg = list_.Msgs[next_++];
      const int len = natsMsg_GetDataLength(msg);
      natsMsg_Ack(msg, nullptr);
      if (!gate_.admits(msg)) continue;  // stored before since=T: acknowledged and skipped
      if (static_cast<size_t>(len) > buffer.size()) {
        count_truncated();
        continue;  // larger than any frame the decoder accepts: acknowledged and skipped
      }
      std::memcpy(buffer.data(), natsMsg_GetData(msg), static_cast<size_t>(len));
      decoder_->set_integer_scale(stated_integer_scale(msg, default_scale_));
      return {TransportStatus::kData, static_cast<size_t>(len), false};
    }
    natsMsgList_Destroy(&list_);
    next_ = 0;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return {TransportStatus::kTimeout, 0, false};
    // Short fetches so stop() is noticed promptly.
    const int64_t wait_ms = std::clamp<int64_t>(left.count(), 1, 100);
    jsErrCode err = static_cast<jsErrCode>(0);
    const natsStatus s = fetch_batch(&list_, sub_, kFetchBatch, wait_ms, &err);
    if (s == NATS_OK || s == NATS_TIMEOUT) continue;
    note_error(fmt::format("fetch from {}: {}", subject_, natsStatus_GetText(s)));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(wait_ms, 50)));
  }
  return {acquisition::TransportStatus::kStopped, 0, false};
}

// Into list_: the frame this consumer delivers first, if one is pending (no waiting).
void NatsTransport::fetch_first() {
  jsFetchRequest req;
  jsFetchRequest_Init(&req);
  req.Batch = 1;
  req.NoWait = true;
  req.Expires = 500'000'000;  // ns: the client's wait for the server's answer
  if (natsSubscription_FetchRequest(&list_, sub_, &req) != NATS_OK) natsMsgList_Destroy(&list_);
}

}  // namespace eit::nats
