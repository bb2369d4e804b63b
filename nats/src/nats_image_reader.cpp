// An ordered JetStream consumer on one bed's images (see nats_image_reader.hpp).
#include "eit/nats/nats_image_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "eit/nats/nats_address.hpp"
#include "nats_link.hpp"
#include "start_time.hpp"

namespace eit::nats {

// One consumer's next message, held until it is handed out, with its place in the stream.
struct Held {
  natsMsg* msg = nullptr;
  uint64_t seq = 0;        // stream sequence
  int64_t time_ns = 0;     // when the stream stored it
  uint64_t pending = 0;    // messages after it the consumer still has to deliver
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { reset(); }
  void reset() {
    if (msg) natsMsg_Destroy(msg);
    msg = nullptr;
  }
  // Takes the next message the gate admits unless one is held; false when none came within
  // timeout_ms.
  bool fill(natsSubscription* sub, StartTimeGate& gate, int timeout_ms) {
    if (msg) return true;
    const int64_t until = nats_Now() + timeout_ms;
    while (true) {
      const int64_t left = std::max<int64_t>(until - nats_Now(), 0);
      if (natsSubscription_NextMsg(&msg, sub, static_cast<int>(left)) != NATS_OK) {
        msg = nullptr;
        return false;
      }
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        seq = meta->Sequence.Stream;
        time_ns = meta->Timestamp;
        pending = meta->NumPending;
        jsMsgMetaData_Destroy(meta);
        if (!gate.admits(time_ns)) {
          reset();
          continue;
        }
      }
      return true;
    }
  }
};

struct NatsImageReader::Impl {
  std::unique_ptr<NatsLink> link;
  natsSubscription* images = nullptr;
  natsSubscription* series = nullptr;
  std::string filter;
  Held image, next_series;
  Held in_effect;  // the series message in effect when the replay starts, handed out first
  StartTimeGate image_gate, series_gate;  // what a replay from a time delivers early
  bool images_caught_up = false;          // the last image handed out said none was pending
  ~Impl() {
    image.reset();
    next_series.reset();
    in_effect.reset();
    if (images) natsSubscription_Destroy(images);
    if (series) natsSubscription_Destroy(series);
  }
};

namespace {

void take(Held& h, ImageStreamMessage& out) {
  const std::string_view subject = natsMsg_GetSubject(h.msg);
  out.kind = std::string(subject.substr(subject.rfind('.') + 1));
  out.data.assign(natsMsg_GetData(h.msg), static_cast<size_t>(natsMsg_GetDataLength(h.msg)));
  h.reset();
}

natsSubscription* subscribe(NatsLink& link, const std::string& subject, jsSubOptions& so) {
  natsSubscription* sub = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  check(js_SubscribeSync(&sub, link.jetstream(), subject.c_str(), nullptr, &so, &err),
        fmt::format("NATS {}: ordered consumer on {} in {} (JetStream error {})",
                    link.address().server_url, subject, kImageStream, static_cast<int>(err)));
  return sub;
}

}  // namespace

NatsImageReader::NatsImageReader(std::string_view uri, double series_lookback_s)
    : impl_(std::make_unique<Impl>()) {
  const NatsAddress address = parse_nats_subscriber_address(uri);
  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream listen {}.{}", address.site, address.bed);
  lo.wait_for_server = false;
  impl_->link = std::make_unique<NatsLink>(address, lo);
  impl_->filter = fmt::format("eit.{}.{}.img", address.site, address.bed);
  jsSubOptions so, series;
  jsSubOptions_Init(&so);
  so.Stream = kImageStream;
  so.Ordered = true;
  series = so;
  // The series message in effect is the last stored before `start_ns` (0: none looked for).
  int64_t start_ns = 0;
  const Since since = parse_since(uri);
  if (since.kind == Since::Kind::kAbsent || since.kind == Since::Kind::kNew) {
    so.Config.DeliverPolicy = js_DeliverNew;
    series.Config.DeliverPolicy = js_DeliverLastPerSubject;
    start_ns = static_cast<int64_t>(nats_Now()) * 1'000'000;
  } else if (since.kind == Since::Kind::kAll) {
    so.Config.DeliverPolicy = js_DeliverAll;
    series.Config.DeliverPolicy = js_DeliverAll;
  } else {
    start_ns = since.epoch_ns;
    const int64_t series_from_ns = start_ns - static_cast<int64_t>(series_lookback_s * 1e9);
    deliver_from_time(so.Config, start_ns);
    deliver_from_time(series.Config, series_from_ns);
    impl_->image_gate = StartTimeGate(start_ns);
    impl_->series_gate = StartTimeGate(series_from_ns);
  }
  impl_->series = subscribe(*impl_->link, address.subject("series"), series);
  impl_->images = subscribe(*impl_->link, impl_->filter, so);
  if (start_ns == 0) return;
  // Read the series messages stored before the start; keep the last unless it ended its series.
  auto& next = impl_->next_series;
  while (next.fill(impl_->series, impl_->series_gate, 300)) {
    if (next.time_ns >= start_ns) break;  // after the start: handed out in stream order
    std::swap(impl_->in_effect.msg, next.msg);
    next.reset();
    if (next.pending == 0 && impl_->in_effect.msg) break;  // caught up
  }
  if (impl_->in_effect.msg &&
      std::string_view(natsMsg_GetData(impl_->in_effect.msg),
                       static_cast<size_t>(natsMsg_GetDataLength(impl_->in_effect.msg)))
              .find("\"series-end\"") != std::string_view::npos)
    impl_->in_effect.reset();
}

NatsImageReader::~NatsImageReader() = default;

const std::string& NatsImageReader::subject_filter() const noexcept { return impl_->filter; }

NatsReaderLink NatsImageReader::link_state() const {
  const NatsLink& l = *impl_->link;
  return {l.connected(), l.disconnects(), l.reconnects(), l.last_error()};
}

bool NatsImageReader::next(ImageStreamMessage& out, int timeout_ms) {
  if (impl_->in_effect.msg) {
    take(impl_->in_effect, out);
    return true;
  }
  auto& img = impl_->image;
  auto& ser = impl_->next_series;
  const int64_t until = nats_Now() + timeout_ms;
  while (true) {
    ser.fill(impl_->series, impl_->series_gate, 0);
    const int64_t left = until - nats_Now();
    // (A series message stored ahead of this image may just have arrived.)
    if (img.fill(impl_->images, impl_->image_gate,
                 static_cast<int>(std::clamp<int64_t>(left, 0, 20))) &&
        !ser.msg)
      ser.fill(impl_->series, impl_->series_gate, 0);
    if (img.msg && (!ser.msg || img.seq < ser.seq)) {
      impl_->images_caught_up = img.pending == 0;
      take(img, out);
      return true;
    }
    // A series message with no image beside it: images stored before it may still be on their
    // way (the image consumer starts separately), unless that consumer had caught up; at the
    // end of the wait it goes out anyway.
    if (ser.msg && (img.msg || impl_->images_caught_up || left <= 0)) {
      take(ser, out);
      return true;
    }
    if (left <= 0) return false;
  }
}

}  // namespace eit::nats
