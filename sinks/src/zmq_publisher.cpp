#include "eit/sinks/zmq_publisher.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/prefetch.hpp"
#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/image_header_fill.hpp"
#include "eit/sinks/zap_authenticator.hpp"
#include "eit/sinks/zmq_io_placement.hpp"
#include "frame_buffer_pool.hpp"
#include "peer_guard.hpp"

namespace eit::sinks {
namespace {

constexpr int64_t kGuardIntervalNs = 10'000'000;  // peers checked every 10 ms
constexpr size_t kPoolBytesMax = size_t{64} << 20;
constexpr int64_t kCurveHandshakeBytes = 512;

void bump(std::atomic<uint64_t>& c, uint64_t by = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace

ZmqPublisher::ZmqPublisher(const recon::Model& model, ZmqPublisherOptions options,
                           std::shared_ptr<zmq::context_t> context)
    : options_(std::move(options)),
      context_(context ? std::move(context) : std::make_shared<zmq::context_t>(1)) {
  const bool push = options_.pattern == ZmqPattern::kPush;
  const char* kind = push ? "PUSH" : "PUB";
  if (options_.series.series_id == 0) options_.series.series_id = random_series_id();
  options_.series.policy = options_.lossless ? "lossless" : "live";
  if (options_.publish_batch < 1 || options_.publish_batch > kMaxImageBatch)
    throw std::runtime_error(fmt::format("{} '{}': publish batch {}: expected 1 to {} images", kind,
                                         options_.endpoint, options_.publish_batch,
                                         kMaxImageBatch));
  if (options_.send_inline && (options_.lossless || options_.publish_batch != 1))
    throw std::runtime_error(fmt::format(
        "{} '{}': sending inline (on the producing thread) takes the live policy and a publish "
        "batch of 1; got {}, batch {}",
        kind, options_.endpoint, options_.lossless ? "lossless" : "live", options_.publish_batch));
  payload_bytes_ = model.n_out() * sizeof(float);
  options_.publish_batch = fitting_publish_batch(options_.publish_batch, model.n_out());
  options_.series.publish_batch = options_.publish_batch;
  // A slot: publish_batch headers, then publish_batch payloads (each part of a message is one
  // contiguous range).
  const size_t slot_bytes = options_.publish_batch * (sizeof(ImageHeader) + payload_bytes_);
  size_t slots = options_.pool_slots;
  if (slots == 0) {
    slots = 2 * static_cast<size_t>(std::max(options_.send_hwm, 1)) + 64;
    slots = std::max<size_t>(16, std::min(slots, kPoolBytesMax / slot_bytes));
  }
  pool_ = std::make_unique<FrameBufferPool>(slots, slot_bytes);
  try {
    if (options_.io_cpu >= 0)
      io_tag_ = place_io_threads(*context_, options_.io_cpu, options_.io_wake);
    socket_ = zmq::socket_t(*context_, push ? zmq::socket_type::push : zmq::socket_type::pub);
    socket_.set(zmq::sockopt::sndhwm, options_.send_hwm);
    socket_.set(zmq::sockopt::linger, options_.linger_ms);
    // Bounded blocking so a lossless send can notice abort() while its consumer is away.
    socket_.set(zmq::sockopt::sndtimeo, 100);
    // Peers send subscriptions (PUB) or nothing (PUSH): no message of theirs needs to be large.
    socket_.set(zmq::sockopt::maxmsgsize, options_.max_inbound_bytes);
    if (!options_.curve_server.secret_z85.empty()) {
      if (options_.curve_allowed.empty())
        throw std::runtime_error(fmt::format(
            "{} '{}': CURVE without client keys would admit anyone holding the server's public "
            "key; expected an allow list (--curve-allow)",
            kind, options_.endpoint));
      zap_ = std::make_unique<ZapAuthenticator>(*context_, options_.curve_allowed);
      apply_curve_server(socket_, options_.curve_server);
      // ZMQ_MAXMSGSIZE also bounds the handshake's commands: CURVE's INITIATE (vouch, metadata)
      // is about 300 bytes, above the plaintext bound for subscriptions.
      socket_.set(zmq::sockopt::maxmsgsize,
                  std::max<int64_t>(options_.max_inbound_bytes, kCurveHandshakeBytes));
    }
    PeerGuardOptions go;
    go.max_peers = options_.max_peers;
    go.inbound_budget_bytes = options_.peer_inbound_budget;
    guard_ = std::make_unique<PeerGuard>(*context_, socket_, go);
    socket_.bind(options_.endpoint);
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(
        fmt::format("cannot bind {} socket to '{}': {}", kind, options_.endpoint, e.what()));
  }
  image_topic_ = fmt::format("eit/{}{}", options_.series.stream, kImageTopicSuffix);
  batch_topic_ = fmt::format("eit/{}{}", options_.series.stream, kImageBatchTopicSuffix);
  series_topic_ = fmt::format("eit/{}/series", options_.series.stream);
  series_json_ = series_json(model, options_.series);
  header_template_ = image_header_template(model, options_.series.series_id);
}

ZmqPublisher::~ZmqPublisher() {
  // A batch still open (publish() without a later flush() or end()) was never lent to libzmq:
  // its slot is ours to hand back, or the wait below would take it for a message in flight.
  if (batch_slot_ >= 0) pool_->release(static_cast<uint32_t>(batch_slot_));
  guard_.reset();
  socket_.close();  // lingers (linger_ms) in libzmq's I/O thread
  zap_.reset();
  // Every message pointing into the pool must be gone before the pool is: wait for libzmq to
  // send or discard them; if a peer still holds some past the linger, leak the pool.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::max(options_.linger_ms, 0) + 500);
  while ((pool_->in_use() > 0 || pool_->text_lent()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (pool_->in_use() > 0 || pool_->text_lent())
    (void)pool_.release();  // deliberately leaked: libzmq may still read it
}

void ZmqPublisher::stop_waiting_at(int64_t deadline_ns) noexcept {
  int64_t none = INT64_MAX;
  give_up_ns_.compare_exchange_strong(none, deadline_ns, std::memory_order_relaxed);
}

bool ZmqPublisher::done_waiting() const noexcept {
  if (aborted_.load(std::memory_order_relaxed)) return true;
  // No clock read per send until the run is stopping (a deadline is set).
  const int64_t give_up = give_up_ns_.load(std::memory_order_relaxed);
  return give_up != INT64_MAX && pipeline::now_ns() >= give_up;
}

// Sends one multipart message; on any failure the parts not sent are closed (returning their
// pool slot). Lossless: waits on EAGAIN (every 100 ms: ZMQ_SNDTIMEO) until done_waiting().
bool ZmqPublisher::send_message(zmq::message_t* parts, size_t n, uint64_t images) noexcept {
  const bool wait = options_.lossless && !done_waiting();
  const auto base = wait ? zmq::send_flags::none : zmq::send_flags::dontwait;
  pipeline::Backoff backoff(std::chrono::microseconds(1000));
  for (size_t i = 0; i < n; ++i) {
    const auto flags = i + 1 < n ? base | zmq::send_flags::sndmore : base;
    while (true) {
      try {
        if (socket_.send(parts[i], flags)) break;
      } catch (const zmq::error_t&) {
        bump(errors_);
        for (size_t j = i; j < n; ++j) parts[j].rebuild();  // frees (returns the slot)
        return false;
      }
      // EAGAIN: the peer's queue is full (or, for PUSH, there is no peer yet). Multipart
      // messages are atomic, so this only happens on the first part.
      if (!options_.lossless || done_waiting()) {
        bump(dropped_, images);
        for (size_t j = i; j < n; ++j) parts[j].rebuild();
        return false;
      }
      backoff.pause();
    }
  }
  handed_off_ = io_defers();
  return true;
}

// Series messages are copied by libzmq (a few per minute), except the series-end, which is lent
// from the pool so that a lossless end() can tell when it has left.
bool ZmqPublisher::send_series(const std::string& json, bool lend) noexcept {
  try {
    zmq::message_t parts[2] = {zmq::message_t(series_topic_.data(), series_topic_.size()),
                               zmq::message_t()};
    if (lend) {
      pool_->text() = json;
      pool_->lend_text();
      parts[1] = zmq::message_t(pool_->text().data(), pool_->text().size(),
                                &FrameBufferPool::text_free_callback, pool_.get());
    } else {
      parts[1] = zmq::message_t(json.data(), json.size());
    }
    // A series message that does not go out is not an image: not in the drop count.
    return send_message(parts, 2, 0);
  } catch (const zmq::error_t&) {
    bump(errors_);
    return false;
  }
}

void ZmqPublisher::guard(int64_t now_ns) noexcept {
  if (now_ns < next_guard_ns_) return;
  next_guard_ns_ = now_ns + kGuardIntervalNs;
  guard_->poll(now_ns, sent_.load(std::memory_order_relaxed));
}

void ZmqPublisher::begin() noexcept {
  send_series(series_json_);
  next_series_ns_ = pipeline::now_ns() + static_cast<int64_t>(options_.series.interval_s * 1e9);
}

void ZmqPublisher::publish(const pipeline::FrameSlot& frame) noexcept {
  const ImageHeader h = image_header_for(header_template_, frame);
  guard(h.t_published_ns);  // stamped by the sink thread just before this call
  if (batch_slot_ < 0) batch_slot_ = pool_->acquire();
  if (batch_slot_ < 0) {
    send_copy(h, frame.image);
    return;
  }
  std::byte* buf = pool_->data(static_cast<uint32_t>(batch_slot_));
  std::memcpy(buf + batch_count_ * sizeof h, &h, sizeof h);
  std::memcpy(payload_place(buf, batch_count_), frame.image, payload_bytes_);
  if (++batch_count_ == options_.publish_batch) {
    flush();
  } else {  // the next image's place in the batch, while the sink thread does other work
    pipeline::prefetch_for_write(payload_place(buf, batch_count_), payload_bytes_);
  }
}

void ZmqPublisher::flush() noexcept {
  if (batch_count_ == 0) return;
  const auto slot = static_cast<uint32_t>(batch_slot_);
  const size_t n = batch_count_;
  batch_slot_ = -1;
  batch_count_ = 0;
  std::byte* buf = pool_->data(slot);
  if (n > 1) {
    // The batch leaves now: its images were handed to the socket at this time, not when each
    // one joined the batch.
    const int64_t t = pipeline::now_ns(), wall = pipeline::wall_ns();
    for (size_t i = 0; i < n; ++i) {
      std::byte* h = buf + i * sizeof(ImageHeader);
      std::memcpy(h + offsetof(ImageHeader, t_published_ns), &t, sizeof t);
      std::memcpy(h + offsetof(ImageHeader, t_published_wall_ns), &wall, sizeof wall);
    }
  }
  // Topic and headers are constant messages (no free callback, no allocation); the payloads'
  // free callback returns the slot once every copy (one per subscriber) is sent or dropped,
  // which libzmq does after the parts before it.
  std::string& topic = n > 1 ? batch_topic_ : image_topic_;
  zmq::message_t parts[3] = {zmq::message_t(topic.data(), topic.size(), nullptr, nullptr),
                             zmq::message_t(buf, n * sizeof(ImageHeader), nullptr, nullptr),
                             zmq::message_t(payload_place(buf, 0), n * payload_bytes_,
                                            &FrameBufferPool::free_callback, pool_->ticket(slot))};
  if (send_message(parts, 3, n)) bump(sent_, n);
}

// Every slot is lent out (so no batch is open): this frame goes by copy, on its own.
void ZmqPublisher::send_copy(const ImageHeader& h, const float* image) noexcept {
  bump(copied_);
  zmq::message_t parts[3] = {zmq::message_t(image_topic_.data(), image_topic_.size()),
                             zmq::message_t(&h, sizeof h), zmq::message_t(image, payload_bytes_)};
  if (send_message(parts, 3, 1)) bump(sent_);
}

void ZmqPublisher::tick(int64_t now_ns) noexcept {
  guard(now_ns);
  if (now_ns < next_series_ns_) return;
  send_series(series_json_);
  next_series_ns_ = now_ns + static_cast<int64_t>(options_.series.interval_s * 1e9);
}

// Lossless: waits until every frame slot is back, the series-end has left libzmq and every
// peer's kernel queue is acknowledged; then until the consumers close their connections (a
// consumer's libzmq can lose what its TCP stack acknowledged when the publisher closes first);
// each phase bounded by drain_timeout_s, both cut short by abort().
void ZmqPublisher::drain() noexcept {
  const auto budget = static_cast<int64_t>(options_.drain_timeout_s * 1e9);
  int64_t deadline = pipeline::now_ns() + budget;
  int quiet_polls = 0;
  bool flushed = false;
  while (!done_waiting() && pipeline::now_ns() < deadline) {
    guard_->poll(pipeline::now_ns(), sent_.load(std::memory_order_relaxed));
    if (!flushed) {
      const bool idle = pool_->in_use() == 0 && !pool_->text_lent() && guard_->drained();
      quiet_polls = idle ? quiet_polls + 1 : 0;
      if (quiet_polls >= 3) {
        flushed = true;
        deadline = pipeline::now_ns() + budget;
      }
    } else if (guard_->stats().peers == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const uint64_t left = pool_->in_use();
  end_delivered_.store(end_taken_ && !pool_->text_lent(), std::memory_order_relaxed);
  lingering_.store(flushed ? guard_->stats().peers : 0, std::memory_order_relaxed);
  if (left > 0) {
    // Those frames were counted as sent when libzmq took them; they never left the host.
    undelivered_.store(left, std::memory_order_relaxed);
    sent_.store(sent_.load(std::memory_order_relaxed) - left, std::memory_order_relaxed);
    bump(dropped_, left);
  }
}

void ZmqPublisher::end() noexcept {
  flush();
  try {
    const auto s = stats();
    end_taken_ = send_series(series_end_json(options_.series, s.sent, s.dropped), true);
  } catch (...) {
    bump(errors_);
  }
  if (options_.lossless) drain();
}

pipeline::SinkStats ZmqPublisher::stats() const noexcept {
  return {sent_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed),
          errors_.load(std::memory_order_relaxed)};
}

PublisherHealth ZmqPublisher::health() const noexcept {
  const PeerGuardStats g = guard_ ? guard_->stats() : PeerGuardStats{};
  PublisherHealth h;
  h.peers = g.peers;
  h.stalled = g.stalled;
  h.accepted = g.accepted;
  h.abusers = g.abusers;
  h.refused = g.refused;
  h.frames_while_stalled = g.frames_while_stalled;
  h.copied_sends = copied_.load(std::memory_order_relaxed);
  h.undelivered = undelivered_.load(std::memory_order_relaxed);
  h.series_end_delivered = end_delivered_.load(std::memory_order_relaxed);
  h.consumers_lingering = lingering_.load(std::memory_order_relaxed);
  if (zap_) {
    h.curve_accepted = zap_->accepted();
    h.curve_unknown_keys = zap_->refused();
    h.curve_refused = g.handshakes_failed;
  }
  return h;
}

std::string ZmqPublisher::health_line() const {
  const PublisherHealth h = health();
  std::string line = fmt::format(
      "{} {}", options_.pattern == ZmqPattern::kPush ? "consumers" : "subscribers", h.peers);
  if (h.frames_while_stalled > 0 || h.stalled > 0)
    line += fmt::format(" ({} stalled now; {} frames published while a peer was stalled, in all)",
                        h.stalled, h.frames_while_stalled);
  if (h.abusers) line += fmt::format(" | cut {} peers over their inbound budget", h.abusers);
  if (h.refused)
    line += fmt::format(" | refused {} connections over {} peers", h.refused, options_.max_peers);
  if (zap_)
    line += fmt::format(" | CURVE admitted {}, refused {} ({} unknown keys)", h.curve_accepted,
                        h.curve_refused, h.curve_unknown_keys);
  if (h.copied_sends) line += fmt::format(" | {} copied sends (pool full)", h.copied_sends);
  return line;
}

}  // namespace eit::sinks
