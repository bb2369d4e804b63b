// NatsImageSink: the per-frame copy into preallocated buffers, the sender thread that hands them to
// JetStream, and ack accounting (see nats_image_sink.hpp).
#include "eit/nats/nats_image_sink.hpp"

#include <chrono>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_header_fill.hpp"
#include "nats_link.hpp"

namespace eit::nats {

// Filled by libnats' ack thread for every async publish.
struct NatsImageSink::AckCounters {
  std::string image_subject;  // acks of series messages are not counted as images
  std::atomic<uint64_t> acked{0}, failed{0};
  std::mutex error_mutex;  // failures only
  std::string last_error;

  static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* self) {
    auto* c = static_cast<AckCounters*>(self);
    if (c->image_subject != natsMsg_GetSubject(msg)) {
      natsMsg_Destroy(msg);
      return;
    }
    if (ack) {
      c->acked.fetch_add(1, std::memory_order_relaxed);
    } else {
      c->failed.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard lock(c->error_mutex);
      c->last_error = fmt::format("JetStream did not store an image: {}",
                                  err && err->ErrText ? err->ErrText : "no acknowledgement");
    }
    natsMsg_Destroy(msg);
  }
};

NatsImageSink::NatsImageSink(const recon::Model& model, const NatsAddress& address,
                             NatsSinkOptions options)
    : options_(std::move(options)),
      acks_(std::make_unique<AckCounters>()),
      free_(options_.buffer_frames),
      filled_(options_.buffer_frames) {
  if (options_.buffer_frames == 0)
    throw std::invalid_argument("NATS sink: buffer_frames 0; expected at least 1");
  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream images {}.{}", address.site, address.bed);
  lo.ack_handler = &AckCounters::on_ack;
  lo.ack_closure = acks_.get();
  lo.reconnect_buffer_bytes = options_.reconnect_buffer_bytes;
  acks_->image_subject = address.subject("img");
  link_ = std::make_unique<NatsLink>(address, lo);
  if (options_.create_streams) link_->ensure_streams(options_.limits);

  if (options_.series.series_id == 0) options_.series.series_id = sinks::random_series_id();
  options_.series.policy = "live";
  options_.series.stream = fmt::format("{}.{}", address.site, address.bed);
  image_subject_ = address.subject("img");
  series_subject_ = address.subject("series");
  series_json_ = sinks::series_json(model, options_.series);
  header_template_ = sinks::image_header_template(model, options_.series.series_id);
  payload_bytes_ = model.n_out() * sizeof(float);
  message_bytes_ = sizeof(sinks::ImageHeader) + payload_bytes_;
  buffers_.resize(options_.buffer_frames * message_bytes_);
  for (uint32_t i = 0; i < options_.buffer_frames; ++i) free_.try_push(i);
  sender_ = std::thread([this] { sender_loop(); });
}

NatsImageSink::~NatsImageSink() {
  stop_.store(true, std::memory_order_release);
  wake();
  if (sender_.joinable()) sender_.join();
}

void NatsImageSink::wake() noexcept {
  work_.fetch_add(1, std::memory_order_release);
  work_.notify_one();
}

void NatsImageSink::begin() noexcept {
  series_due_.store(true, std::memory_order_release);
  next_series_ns_ = pipeline::now_ns() + static_cast<int64_t>(options_.series.interval_s * 1e9);
  wake();
}

void NatsImageSink::publish(const pipeline::FrameSlot& frame) noexcept {
  uint32_t index;
  if (!free_.try_pop(index)) {
    dropped_full_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::byte* message = buffers_.data() + size_t{index} * message_bytes_;
  const sinks::ImageHeader h = sinks::image_header_for(header_template_, frame);
  std::memcpy(message, &h, sizeof h);
  std::memcpy(message + sizeof h, frame.image, payload_bytes_);
  filled_.try_push(index);  // never full: it holds at most buffer_frames indices
  wake();
}

void NatsImageSink::tick(int64_t now_ns) noexcept {
  if (now_ns < next_series_ns_) return;
  next_series_ns_ = now_ns + static_cast<int64_t>(options_.series.interval_s * 1e9);
  series_due_.store(true, std::memory_order_release);
  wake();
}

bool NatsImageSink::publish_buffer(uint32_t index) noexcept {
  const std::byte* message = buffers_.data() + size_t{index} * message_bytes_;
  return js_PublishAsync(link_->jetstream(), image_subject_.c_str(), message,
                         static_cast<int>(message_bytes_), nullptr) == NATS_OK;
}

void NatsImageSink::publish_series(const std::string& json) noexcept {
  // Series messages go through JetStream too, so a replay from a time finds its geometry.
  if (js_PublishAsync(link_->jetstream(), series_subject_.c_str(), json.data(),
                      static_cast<int>(json.size()), nullptr) != NATS_OK)
    retries_.fetch_add(1, std::memory_order_relaxed);
}

void NatsImageSink::sender_loop() noexcept {
  using namespace std::chrono;
  int64_t deadline_ns = 0;  // set once ending
  while (true) {
    const uint32_t seen = work_.load(std::memory_order_acquire);
    if (series_due_.exchange(false, std::memory_order_acq_rel)) publish_series(series_json_);
    uint32_t index;
    bool any = false;
    while (filled_.try_pop(index)) {
      any = true;
      // Not connected or too many acks pending: keep this image and try again (the buffer in
      // front absorbs the outage; publish() drops the newest once it is full).
      bool sent = true;
      while (!(sent = publish_buffer(index))) {
        retries_.fetch_add(1, std::memory_order_relaxed);
        const bool give_up = aborted_.load(std::memory_order_relaxed) ||
                             stop_.load(std::memory_order_relaxed) ||
                             (deadline_ns && pipeline::now_ns() > deadline_ns);
        if (give_up) {
          abandoned_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        std::this_thread::sleep_for(milliseconds(5));
      }
      if (sent) published_.fetch_add(1, std::memory_order_relaxed);
      free_.try_push(index);
    }
    if (ending_.load(std::memory_order_acquire) && !any) {
      if (!deadline_ns) deadline_ns = pipeline::now_ns() + options_.end_timeout_ms * 1'000'000;
      if (filled_.size_approx() == 0) break;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    if (!any) work_.wait(seen, std::memory_order_acquire);
  }
  // Ending: the series-end message with the final counts, then wait for every outstanding
  // acknowledgement.
  try {
    publish_series(
        sinks::series_end_json(options_.series, published_.load(),
                               dropped_full_.load() + abandoned_.load() + filled_.size_approx()));
  } catch (...) {
    link_->note_error("end: could not build the series-end message");
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = std::max<int64_t>(1, (deadline_ns - pipeline::now_ns()) / 1'000'000);
  if (js_PublishAsyncComplete(link_->jetstream(), &po) != NATS_OK)
    link_->note_error("end: JetStream did not acknowledge every image in time");
}

void NatsImageSink::end() noexcept {
  ending_.store(true, std::memory_order_release);
  wake();
  if (sender_.joinable()) sender_.join();
}

pipeline::SinkStats NatsImageSink::stats() const noexcept {
  pipeline::SinkStats s;
  s.sent = acks_->acked.load(std::memory_order_relaxed);
  s.dropped =
      dropped_full_.load(std::memory_order_relaxed) + abandoned_.load(std::memory_order_relaxed);
  s.errors = acks_->failed.load(std::memory_order_relaxed);
  return s;
}

NatsSinkStats NatsImageSink::nats_stats() const {
  NatsSinkStats s;
  s.acked = acks_->acked.load(std::memory_order_relaxed);
  s.ack_failures = acks_->failed.load(std::memory_order_relaxed);
  s.dropped_full = dropped_full_.load(std::memory_order_relaxed);
  s.abandoned = abandoned_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  s.backlog = filled_.size_approx();
  s.disconnects = link_->disconnects();
  s.reconnects = link_->reconnects();
  s.connected = link_->connected();
  {
    std::lock_guard lock(acks_->error_mutex);
    s.last_error = acks_->last_error;
  }
  if (s.last_error.empty()) s.last_error = link_->last_error();
  return s;
}

}  // namespace eit::nats
