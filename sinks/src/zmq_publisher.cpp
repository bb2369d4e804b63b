#include "eit/sinks/zmq_publisher.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"

namespace eit::sinks {
namespace {

void bump(std::atomic<uint64_t>& c) noexcept {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

uint64_t random_series_id() {
  std::random_device rd;
  const uint64_t id = (uint64_t{rd()} << 32) ^ rd();
  return id ? id : 1;
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
  try {
    socket_ = zmq::socket_t(*context_, push ? zmq::socket_type::push : zmq::socket_type::pub);
    socket_.set(zmq::sockopt::sndhwm, options_.send_hwm);
    socket_.set(zmq::sockopt::linger, options_.linger_ms);
    // Bounded blocking so a lossless send can notice abort() while its consumer is away.
    socket_.set(zmq::sockopt::sndtimeo, 100);
    if (!push) socket_.set(zmq::sockopt::xpub_nodrop, 1);
    socket_.bind(options_.endpoint);
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(
        fmt::format("cannot bind {} socket to '{}': {}", kind, options_.endpoint, e.what()));
  }
  image_topic_ = fmt::format("eit/{}/img", options_.series.stream);
  series_topic_ = fmt::format("eit/{}/series", options_.series.stream);
  series_json_ = series_json(model, options_.series);
  const ImageShape shape = image_shape(model);
  header_template_.ndim = static_cast<uint8_t>(shape.ndim);
  header_template_.shape[0] = shape.dims[0];
  header_template_.shape[1] = shape.dims[1];
  header_template_.count = shape.dims[0] * shape.dims[1];
  header_template_.series_id = options_.series.series_id;
  std::copy_n(model.id.data(), std::min(model.id.size(), sizeof header_template_.model_id),
              header_template_.model_id);
  payload_bytes_ = model.n_out() * sizeof(float);
}

ZmqPublisher::~ZmqPublisher() = default;

bool ZmqPublisher::send_parts(const zmq::const_buffer* parts, size_t n) noexcept {
  const auto base = options_.lossless ? zmq::send_flags::none : zmq::send_flags::dontwait;
  pipeline::Backoff backoff(std::chrono::microseconds(1000));
  for (size_t i = 0; i < n; ++i) {
    const auto flags = i + 1 < n ? base | zmq::send_flags::sndmore : base;
    while (true) {
      try {
        if (socket_.send(parts[i], flags)) break;
      } catch (const zmq::error_t&) {
        bump(errors_);
        return false;
      }
      // EAGAIN: the peer's queue is full (or, for PUSH, there is no peer yet). Multipart
      // messages are atomic, so this only happens on the first part.
      if (!options_.lossless || aborted_.load(std::memory_order_relaxed)) {
        bump(dropped_);
        return false;
      }
      backoff.pause();
    }
  }
  return true;
}

void ZmqPublisher::send_series(const std::string& json) noexcept {
  const zmq::const_buffer parts[] = {zmq::buffer(series_topic_), zmq::buffer(json)};
  const auto before = dropped_.load(std::memory_order_relaxed);
  send_parts(parts, 2);
  // A series message that does not go out is not an image: keep it out of the drop count.
  dropped_.store(before, std::memory_order_relaxed);
}

void ZmqPublisher::begin() noexcept {
  send_series(series_json_);
  next_series_ns_ = pipeline::now_ns() + static_cast<int64_t>(options_.series.interval_s * 1e9);
}

void ZmqPublisher::publish(const pipeline::FrameSlot& frame) noexcept {
  ImageHeader h = header_template_;
  h.seq = frame.seq;
  h.dropped_before = frame.dropped_before;
  h.t_acquired_ns = frame.stamp(pipeline::Stage::kReceived);
  h.t_published_ns = frame.stamp(pipeline::Stage::kPublished);
  if (h.t_published_ns == 0) h.t_published_ns = pipeline::now_ns();
  h.t_published_wall_ns = pipeline::wall_ns();
  h.t_device_ns = frame.device_time_ns;
  h.flags = frame.flags;
  const zmq::const_buffer parts[] = {zmq::buffer(image_topic_), zmq::const_buffer(&h, sizeof h),
                                     zmq::const_buffer(frame.image, payload_bytes_)};
  if (send_parts(parts, 3)) bump(sent_);
}

void ZmqPublisher::tick(int64_t now_ns) noexcept {
  if (now_ns < next_series_ns_) return;
  send_series(series_json_);
  next_series_ns_ = now_ns + static_cast<int64_t>(options_.series.interval_s * 1e9);
}

void ZmqPublisher::end() noexcept {
  try {
    const auto s = stats();
    send_series(series_end_json(options_.series, s.sent, s.dropped));
  } catch (...) {
    bump(errors_);
  }
}

pipeline::SinkStats ZmqPublisher::stats() const noexcept {
  return {sent_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed),
          errors_.load(std::memory_order_relaxed)};
}

}  // namespace eit::sinks
