// Raw frames over JetStream: the device-side link (publish) and the transport a StreamSource reads
// (a durable pull consumer). See nats_frames.hpp.
#include "eit/nats/nats_frames.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/stream_source.hpp"
#include "nats_link.hpp"
#include "ordered_publisher.hpp"
#include "raw_frame_headers.hpp"
#include "start_time.hpp"

namespace eit::nats {
namespace {

// Device side: each frame is copied into the ordered publisher's slots and returns; JetStream
// stores the frames in order, each once, retried across a server restart or a leader election.
class NatsDeviceLink final : public acquisition::DeviceLink {
 public:
  NatsDeviceLink(const NatsAddress& address, const NatsDeviceLinkOptions& options)
      : subject_(address.subject("raw")), url_(address.server_url) {
    NatsLinkOptions lo;
    lo.client_name = fmt::format("eitstream device {}.{}", address.site, address.bed);
    OrderedPublisherOptions po;
    po.subject = subject_;
    // A random run id: frames resent within this run are stored once, the next run's are new.
    po.msg_id_prefix = fmt::format("{}.{}.{:x}", address.site, address.bed, random_run_id());
    po.slots = options.slots;
    po.max_message_bytes = options.max_message_bytes;
    po.ack_wait_ms = options.ack_wait_ms;
    // With model=NAME every frame carries the header Eit-Model: NAME (workers pick the model),
    // with a rate Eit-Rate: HZ (workers state it in the bed's series message), with integer
    // samples Eit-Scale: X (what the readers multiply them by).
    if (!address.model.empty()) po.headers.emplace_back(kModelHeader, address.model);
    if (options.rate_hz > 0)
      po.headers.emplace_back(kRateHeader, fmt::format("{}", options.rate_hz));
    if (options.integer_scale > 0)
      po.headers.emplace_back(kScaleHeader, fmt::format("{}", options.integer_scale));
    publisher_ = std::make_unique<OrderedPublisher>(address, po, lo);
    publisher_->link().ensure_streams({});
  }
  std::string describe() const override { return fmt::format("NATS {} {}", url_, subject_); }
  std::string endpoint() const override { return url_; }
  std::string receiver_uri() const override {
    const auto& a = publisher_->link().address();
    return fmt::format("{}?site={}&bed={}", a.server_url, a.site, a.bed);
  }
  bool wait_for_receiver(std::chrono::milliseconds) override { return true; }  // JetStream keeps it
  bool send(std::span<const uint8_t> bytes) override {
    if (publisher_->offer(std::as_bytes(bytes))) return true;
    count_dropped();
    return false;
  }
  uint64_t messages_unread() const override { return publisher_->stats(false).abandoned; }
  OrderedPublisherStats publisher_stats() const { return publisher_->stats(false); }
  uint64_t reconnects() const { return publisher_->link().reconnects(); }

 protected:
  // Waits until JetStream stored every frame (then the link sends no more); what it did not
  // store in time counts as dropped. The wait is JetStream's: give_up is not looked at.
  bool wait_drained(std::chrono::milliseconds timeout,
                    const std::function<bool()>& give_up) override {
    const bool all = publisher_->finish(timeout.count(), give_up);
    for (uint64_t i = 0; i < publisher_->stats(false).abandoned; ++i) count_dropped();
    return all;
  }

 private:
  static uint64_t random_run_id() {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }
  std::string subject_, url_;
  std::unique_ptr<OrderedPublisher> publisher_;
};

// The last frame stored on `subject` (the caller destroys it), nullptr when none.
natsMsg* last_stored_frame(jsCtx* js, const std::string& subject) {
  natsMsg* frame = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  if (js_GetLastMsg(&frame, js, kRawStream, subject.c_str(), nullptr, &err) != NATS_OK)
    return nullptr;
  return frame;
}

// Receiving side: fetches batches from a durable pull consumer; each message is one frame. Before
// handing a message over it sets `decoder`'s integer scale to the frame's Eit-Scale, else
// `default_scale`: the decoder (owned by the same StreamSource, used on the same thread) decodes
// each message as soon as read() returns it.
class NatsTransport final : public acquisition::ByteTransport {
 public:
  static constexpr int kFetchBatch = 32;  // frames asked per round trip (more when some are queued)

  NatsTransport(const NatsAddress& address, int64_t since_ns, acquisition::IngestDecoder* decoder,
                double default_scale)
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
    if (list_.Count > 0) {
      note_stated(list_.Msgs[0]);
    } else if (natsMsg* last = last_stored_frame(link_->jetstream(), subject_)) {
      note_stated(last);
      natsMsg_Destroy(last);
    }
  }
  ~NatsTransport() override {
    // Frames fetched but not read go back at once (negative ack), so the next consumer on this
    // bed gets them first instead of after the ack wait, out of order.
    for (int i = next_; i < list_.Count; ++i) natsMsg_Nak(list_.Msgs[i], nullptr);
    natsMsgList_Destroy(&list_);
    if (sub_) natsSubscription_Destroy(sub_);
  }
  std::string describe() const override {
    return fmt::format("NATS {} {} (consumer {})", address_.server_url, subject_, durable_);
  }
  std::string endpoint() const override { return address_.server_url; }
  bool datagrams() const noexcept override { return true; }

  acquisition::TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
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
  void stop() noexcept override { stopped_.store(true, std::memory_order_relaxed); }

  // The Eit-Rate and Eit-Scale of the bed's frames at set-up (0: none stated, or no frame yet).
  double stated_rate_hz() const noexcept { return stated_rate_hz_; }
  double stated_scale() const noexcept { return stated_scale_; }

 private:
  void note_stated(natsMsg* frame) noexcept {
    stated_rate_hz_ = nats::stated_rate_hz(frame);
    stated_scale_ = stated_integer_scale(frame, 0);
  }
  // Into list_: the frame this consumer delivers first, if one is pending (no waiting).
  void fetch_first() {
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = 1;
    req.NoWait = true;
    req.Expires = 500'000'000;  // ns: the client's wait for the server's answer
    if (natsSubscription_FetchRequest(&list_, sub_, &req) != NATS_OK) natsMsgList_Destroy(&list_);
  }

  NatsAddress address_;
  std::unique_ptr<NatsLink> link_;
  std::string subject_, durable_;
  double stated_rate_hz_ = 0, stated_scale_ = 0;
  natsSubscription* sub_ = nullptr;
  StartTimeGate gate_;
  acquisition::IngestDecoder* decoder_;  // borrowed: the StreamSource owns it
  double default_scale_;
  natsMsgList list_{};
  int next_ = 0;
  std::atomic<bool> stopped_{false};
};

// Replay: an ordered consumer (no acknowledgements, nothing left on the server) from `since`,
// ending when it has caught up: the last message delivered says none is pending, or nothing came
// for idle_ms (an empty history). Sets the decoder's integer scale as NatsTransport does, and
// states the frames' Eit-Rate as NatsTransport does: the first frame the replay delivers (waited
// for at set-up, up to idle_ms, and kept for the first read), else the last one stored.
class NatsReplayTransport final : public acquisition::ByteTransport {
 public:
  NatsReplayTransport(const NatsAddress& address, int64_t since_ns, int64_t idle_ms,
                      acquisition::IngestDecoder* decoder, double default_scale)
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
    if (first_) {
      stated_rate_hz_ = nats::stated_rate_hz(first_);
    } else if (natsMsg* last = last_stored_frame(link_->jetstream(), subject_)) {
      stated_rate_hz_ = nats::stated_rate_hz(last);
      natsMsg_Destroy(last);
    }
  }
  ~NatsReplayTransport() override {
    if (first_) natsMsg_Destroy(first_);
    if (sub_) natsSubscription_Destroy(sub_);
  }
  // The Eit-Rate of the bed's frames at set-up (0: none stated, or no frame).
  double stated_rate_hz() const noexcept { return stated_rate_hz_; }
  std::string describe() const override {
    return fmt::format("NATS {} {} (replay)", address_.server_url, subject_);
  }
  std::string endpoint() const override { return address_.server_url; }
  bool datagrams() const noexcept override { return true; }

  acquisition::TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
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

// since=: absent → resume (or all, for a new consumer) and all → 0; new → -1 (only new frames); a
// time → its ns since the epoch.
int64_t start_ns_of(std::string_view uri) {
  const Since since = parse_since(uri);
  if (since.kind == Since::Kind::kNew) return -1;
  return since.kind == Since::Kind::kTime ? since.epoch_ns : 0;
}

// A raw-frame reader's URI: scale= (integer samples are multiplied by it, as the live sources'
// scale=, docs/protocol.md) is its option alone, taken out before parse_nats_address so that
// every other NATS URI refuses it as unknown.
struct RawReaderUri {
  std::string uri;  // without scale=
  acquisition::IngestDecoderOptions ingest;
  bool scale_given = false;
};

RawReaderUri raw_reader_uri(std::string_view uri, const acquisition::LiveSourceOptions& options) {
  RawReaderUri r{std::string(uri), options.ingest};
  const auto q = uri.find('?');
  if (q == std::string_view::npos) return r;
  r.uri = std::string(uri.substr(0, q + 1));
  bool scaled = false;
  for (std::string_view query = uri.substr(q + 1); !query.empty();) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (!item.starts_with("scale=")) {
      r.uri += std::string(item) + "&";
      continue;
    }
    const std::string_view v = item.substr(6);
    double scale = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), scale);
    if (scaled || v.empty() || ec != std::errc{} || end != v.data() + v.size() ||
        !std::isfinite(scale) || scale == 0)
      throw std::invalid_argument(
          fmt::format("'{}': scale={} {}; expected one finite number other than 0", uri, v,
                      scaled ? "given twice" : "is not a number for integer samples"));
    r.ingest.integer_scale = scale;
    r.scale_given = scaled = true;
  }
  r.uri.pop_back();  // the last '&', or the '?' of an emptied query
  return r;
}

// A raw-frame reader's nominal rate: --fps (options.nominal_rate_hz) when given, else what the
// frames state; a warning (if `warnings`) when both are known and differ.
double nominal_rate_hz(const acquisition::LiveSourceOptions& options, double stated,
                       const NatsAddress& address, std::vector<std::string>* warnings) {
  if (warnings && options.nominal_rate_hz > 0 && stated > 0 && stated != options.nominal_rate_hz)
    warnings->push_back(fmt::format(
        "--fps {} wins over the {} frames/s the raw frames on {} state (Eit-Rate): the series "
        "message's rate_hz, recordings and indices use {}",
        options.nominal_rate_hz, stated, address.subject("raw"), options.nominal_rate_hz));
  return options.nominal_rate_hz > 0 ? options.nominal_rate_hz : stated;
}

}  // namespace

NatsAddress raw_reader_address(std::string_view uri) {
  return parse_nats_subscriber_address(raw_reader_uri(uri, {}).uri);
}

std::unique_ptr<acquisition::DeviceLink> open_nats_device_link(std::string_view uri,
                                                               NatsDeviceLinkOptions options) {
  return std::make_unique<NatsDeviceLink>(parse_nats_publisher_address(uri), options);
}

std::unique_ptr<pipeline::Source> open_nats_replay_source(
    std::string_view uri, const acquisition::LiveSourceOptions& options,
    const recon::Protocol& protocol, int64_t idle_ms, std::vector<std::string>* warnings) {
  const RawReaderUri raw = raw_reader_uri(uri, options);
  const NatsAddress address = parse_nats_subscriber_address(raw.uri);
  const int64_t since = start_ns_of(uri);
  if (since < 0)
    throw std::invalid_argument(fmt::format("'{}': a replay needs since=all or a time", uri));
  auto decoder = std::make_unique<acquisition::IngestDecoder>(protocol.n_meas(), raw.ingest);
  auto transport = std::make_unique<NatsReplayTransport>(address, since, idle_ms, decoder.get(),
                                                         raw.ingest.integer_scale);
  acquisition::StreamSourceOptions so;
  so.nominal_rate_hz = nominal_rate_hz(options, transport->stated_rate_hz(), address, warnings);
  return std::make_unique<acquisition::StreamSource>(std::move(transport), std::move(decoder), so);
}

std::optional<NatsGatewayStats> nats_gateway_stats(const acquisition::DeviceLink& link) {
  const auto* gateway = dynamic_cast<const NatsDeviceLink*>(&link);
  if (!gateway) return std::nullopt;
  const auto p = gateway->publisher_stats();
  return NatsGatewayStats{p.acked,      p.failures,  p.resent,
                          p.duplicates, p.reordered, gateway->reconnects()};
}

std::unique_ptr<pipeline::Source> open_nats_source(std::string_view uri,
                                                   const acquisition::LiveSourceOptions& options,
                                                   const recon::Protocol& protocol,
                                                   std::vector<std::string>* warnings) {
  const RawReaderUri raw = raw_reader_uri(uri, options);
  const NatsAddress address = parse_nats_subscriber_address(raw.uri);
  auto decoder = std::make_unique<acquisition::IngestDecoder>(protocol.n_meas(), raw.ingest);
  auto transport = std::make_unique<NatsTransport>(address, start_ns_of(uri), decoder.get(),
                                                   raw.ingest.integer_scale);
  const double stated_scale = transport->stated_scale();
  acquisition::StreamSourceOptions so;
  so.nominal_rate_hz = nominal_rate_hz(options, transport->stated_rate_hz(), address, warnings);
  if (warnings && raw.scale_given && stated_scale > 0 && stated_scale != raw.ingest.integer_scale)
    warnings->push_back(fmt::format(
        "the raw frames on {} state their integer scale (Eit-Scale {}): frames that state one are "
        "decoded with it, the URI's scale={} applies only to frames that state none",
        address.subject("raw"), stated_scale, raw.ingest.integer_scale));
  return std::make_unique<acquisition::StreamSource>(std::move(transport), std::move(decoder), so);
}

}  // namespace eit::nats
