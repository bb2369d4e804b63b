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
#include "ordered_publisher.hpp"

namespace eit::nats {

NatsImageSink::NatsImageSink(const recon::Model& model, const NatsAddress& address,
                             NatsSinkOptions options)
    : options_(std::move(options)) {
  if (options_.buffer_frames == 0)
    throw std::invalid_argument("NATS sink: buffer_frames 0; expected at least 1");
  if (options_.series.series_id == 0) options_.series.series_id = sinks::random_series_id();
  options_.series.policy = "live";
  options_.series.stream = fmt::format("{}.{}", address.site, address.bed);
  image_subject_ = address.subject("img");
  series_subject_ = address.subject("series");
  series_json_ = sinks::series_json(model, options_.series);
  header_template_ = sinks::image_header_template(model, options_.series.series_id);
  payload_bytes_ = model.n_out() * sizeof(float);

  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream images {}.{}", address.site, address.bed);
  lo.reconnect_buffer_bytes = options_.reconnect_buffer_bytes;
  lo.wait = options_.wait;
  OrderedPublisherOptions po;
  po.subject = image_subject_;
  // Unique per run (the series id is random): a retried image is stored once, a new run's are new.
  po.msg_id_prefix = fmt::format("{}.{}.{:x}", address.site, address.bed,
                                 options_.series.series_id);
  po.slots = options_.buffer_frames;
  po.max_message_bytes = sizeof(sinks::ImageHeader) + payload_bytes_;
  po.ack_wait_ms = options_.ack_wait_ms;
  publisher_ = std::make_unique<OrderedPublisher>(address, po, lo);
  if (options_.create_streams) publisher_->link().ensure_streams(options_.limits);
  series_thread_ = std::thread([this] { series_loop(); });
}

NatsImageSink::~NatsImageSink() {
  stop_.store(true, std::memory_order_release);
  wake();
  if (series_thread_.joinable()) series_thread_.join();
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
  std::byte* message = publisher_->claim();
  if (!message) return;  // every buffer taken: dropped and counted by the publisher
  const sinks::ImageHeader h = sinks::image_header_for(header_template_, frame);
  std::memcpy(message, &h, sizeof h);
  std::memcpy(message + sizeof h, frame.image, payload_bytes_);
  publisher_->commit(sizeof h + payload_bytes_);
}

void NatsImageSink::tick(int64_t now_ns) noexcept {
  if (now_ns < next_series_ns_) return;
  next_series_ns_ = now_ns + static_cast<int64_t>(options_.series.interval_s * 1e9);
  series_due_.store(true, std::memory_order_release);
  wake();
}

void NatsImageSink::publish_series(const std::string& json) noexcept {
  // Series messages go through JetStream too, so a replay from a time finds its geometry. The
  // next one repeats it, so a failed one is counted, not retried.
  if (js_PublishAsync(publisher_->link().jetstream(), series_subject_.c_str(), json.data(),
                      static_cast<int>(json.size()), nullptr) != NATS_OK)
    series_failures_.fetch_add(1, std::memory_order_relaxed);
}

// The series JSON at begin() and every interval_s, off the pipeline's thread (it is a few KB).
void NatsImageSink::series_loop() noexcept {
  while (!stop_.load(std::memory_order_acquire)) {
    const uint32_t seen = work_.load(std::memory_order_acquire);
    if (series_due_.exchange(false, std::memory_order_acq_rel)) publish_series(series_json_);
    if (stop_.load(std::memory_order_acquire)) return;
    work_.wait(seen, std::memory_order_acquire);
  }
}

void NatsImageSink::end() noexcept {
  if (ended_) return;
  ended_ = true;
  // A second Ctrl-C (abort()), before or during the wait, ends it at once.
  publisher_->finish(options_.end_timeout_ms,
                     [this] { return aborted_.load(std::memory_order_relaxed); });
  stop_.store(true, std::memory_order_release);
  wake();
  if (series_thread_.joinable()) series_thread_.join();
  // The series-end message with the final counts, then wait for its acknowledgement.
  const auto p = publisher_->stats(false);
  try {
    publish_series(sinks::series_end_json(options_.series, p.acked,
                                          p.dropped_full + p.abandoned));
  } catch (...) {
    publisher_->link().note_error("end: could not build the series-end message");
  }
  if (aborted_.load(std::memory_order_relaxed) || !publisher_->link().connected()) {
    publisher_->link().note_error("end: the series end was not confirmed (no server, or stopped)");
    return;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 2000;
  if (js_PublishAsyncComplete(publisher_->link().jetstream(), &po) != NATS_OK)
    publisher_->link().note_error("end: JetStream did not acknowledge the series end in time");
}

pipeline::SinkStats NatsImageSink::stats() const noexcept {
  const auto p = publisher_->stats(false);
  pipeline::SinkStats s;
  s.sent = p.acked;
  s.dropped = p.dropped_full + p.abandoned;
  s.errors = p.reordered;  // failures are retried; one stored out of order is the harm left
  return s;
}

NatsSinkStats NatsImageSink::nats_stats() const {
  const auto p = publisher_->stats();
  NatsSinkStats s;
  s.acked = p.acked;
  s.ack_failures = p.failures;
  s.resent = p.resent;
  s.duplicates = p.duplicates;
  s.reordered = p.reordered;
  s.dropped_full = p.dropped_full;
  s.abandoned = p.abandoned;
  s.retries = p.refused_locally + series_failures_.load(std::memory_order_relaxed);
  s.backlog = p.backlog;
  s.disconnects = publisher_->link().disconnects();
  s.reconnects = publisher_->link().reconnects();
  s.connected = publisher_->link().connected();
  s.last_error = p.last_error;
  return s;
}

}  // namespace eit::nats
