#include "eit/indices/indices_publisher.hpp"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/indices/breath_json.hpp"
#include "eit/pipeline/clock.hpp"

namespace eit::indices {

IndicesPublisher::IndicesPublisher(IndicesEngine engine, IndicesPublisherOptions options,
                                   std::shared_ptr<zmq::context_t> context)
    : engine_(std::move(engine)),
      options_(std::move(options)),
      context_(context ? std::move(context) : std::make_shared<zmq::context_t>(1)) {
  try {
    socket_ = zmq::socket_t(*context_, zmq::socket_type::pub);
    socket_.set(zmq::sockopt::sndhwm, options_.send_hwm);
    socket_.set(zmq::sockopt::linger, options_.linger_ms);
    // Subscribers send only short topic prefixes; CURVE's handshake commands need ~300 bytes.
    socket_.set(zmq::sockopt::maxmsgsize, int64_t{512});
    if (!options_.curve_server.secret_z85.empty()) {
      if (options_.curve_allowed.empty())
        throw std::runtime_error(fmt::format(
            "indices '{}': CURVE without client keys would admit anyone holding the server's "
            "public key; expected an allow list (--curve-allow)",
            options_.endpoint));
      zap_ = std::make_unique<sinks::ZapAuthenticator>(*context_, options_.curve_allowed);
      sinks::apply_curve_server(socket_, options_.curve_server);
    }
    socket_.bind(options_.endpoint);
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(
        fmt::format("indices: cannot bind PUB socket to '{}': {}", options_.endpoint, e.what()));
  }
  global_topic_ = fmt::format("eit/{}/global", options_.stream);
  breath_topic_ = fmt::format("eit/{}/breath", options_.stream);
  series_topic_ = fmt::format("eit/{}/indices_series", options_.stream);
  const auto& lay = engine_.layout();
  const auto& o = engine_.options();
  std::string names;
  for (size_t r = 0; r < lay.region_names().size(); ++r)
    names += fmt::format("{}\"{}\"", r ? "," : "", lay.region_names()[r]);
  series_json_ = fmt::format(
      "{{\"type\":\"indices_series\",\"version\":1,\"stream\":\"{}\",\"frame_rate_hz\":{},"
      "\"sign\":{},\"regions\":[{}],\"image\":{{\"nx\":{},\"ny\":{},\"n_out\":{}}},"
      "\"ventral\":\"{}\",\"patient_right\":\"{}\",\"breath_detection\":{{\"minimum_duration_s\":"
      "{},\"averaging_window_s\":{},\"amplitude_cutoff_fraction\":{},\"invalid_window_s\":{},"
      "\"invalid_percentile\":{},\"invalid_multiplier\":{}}},\"lungspace_fraction\":{},"
      "\"silent_fraction\":{},\"rvd_threshold\":{}}}",
      options_.stream, o.rate_hz, o.sign, names, lay.nx(), lay.ny(), lay.n_out(),
      lay.options().ventral_positive_y ? "+y" : "-y", lay.options().right_negative_x ? "-x" : "+x",
      o.breath.minimum_duration_s, o.breath.averaging_window_s, o.breath.amplitude_cutoff_fraction,
      o.breath.invalid_window_s, o.breath.invalid_percentile, o.breath.invalid_multiplier,
      o.per_breath.lungspace_fraction, o.per_breath.silent_fraction, o.per_breath.rvd_threshold);
  global_msg_.assign(sizeof(GlobalHeader) + lay.n_regions() * sizeof(double), 0);
  breath_msg_.assign(breath_json_capacity(lay), 0);
}

IndicesPublisher::~IndicesPublisher() {
  socket_.close();  // before the ZAP handler it may still consult
  zap_.reset();
}

uint64_t IndicesPublisher::curve_admitted() const noexcept { return zap_ ? zap_->accepted() : 0; }
uint64_t IndicesPublisher::curve_refused() const noexcept { return zap_ ? zap_->refused() : 0; }

bool IndicesPublisher::send(const std::string& topic, const void* data, size_t size) noexcept {
  try {
    if (!socket_.send(zmq::buffer(topic), zmq::send_flags::dontwait | zmq::send_flags::sndmore)) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    socket_.send(zmq::const_buffer(data, size), zmq::send_flags::dontwait);
    return true;
  } catch (const zmq::error_t&) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
}

void IndicesPublisher::begin() noexcept {
  send(series_topic_, series_json_.data(), series_json_.size());
  next_series_ns_ = pipeline::now_ns() + static_cast<int64_t>(options_.interval_s * 1e9);
}

void IndicesPublisher::publish(const pipeline::FrameSlot& frame) noexcept {
  const size_t n_out = engine_.layout().n_out();
  const bool valid = (frame.flags & pipeline::kFlagNonFinite) == 0;
  const BreathIndices* b =
      engine_.push({frame.image, n_out}, frame.seq, frame.stamp(pipeline::Stage::kReceived), valid);
  GlobalHeader h;
  h.n_values = static_cast<uint16_t>(engine_.regions().size());
  h.seq = frame.seq;
  h.t_acquired_ns = frame.stamp(pipeline::Stage::kReceived);
  h.flags = frame.flags;
  h.dropped_before = frame.dropped_before;
  h.frame = engine_.frames() - 1;
  std::memcpy(global_msg_.data(), &h, sizeof h);
  std::memcpy(global_msg_.data() + sizeof h, engine_.regions().data(),
              engine_.regions().size() * sizeof(double));
  if (send(global_topic_, global_msg_.data(), global_msg_.size()))
    sent_.fetch_add(1, std::memory_order_relaxed);
  if (b) send_breath(*b);
}

void IndicesPublisher::send_breath(const BreathIndices& b) noexcept {
  breaths_.fetch_add(1, std::memory_order_relaxed);
  const size_t n =
      write_breath_json(b, engine_.layout(), options_.stream, options_.breath_images, breath_msg_);
  if (n == 0) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  send(breath_topic_, breath_msg_.data(), n);
}

void IndicesPublisher::tick(int64_t now_ns) noexcept {
  if (now_ns < next_series_ns_) return;
  send(series_topic_, series_json_.data(), series_json_.size());
  next_series_ns_ = now_ns + static_cast<int64_t>(options_.interval_s * 1e9);
}

void IndicesPublisher::end() noexcept {
  while (const BreathIndices* b = engine_.finish()) send_breath(*b);
}

pipeline::SinkStats IndicesPublisher::stats() const noexcept {
  return {sent_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed),
          errors_.load(std::memory_order_relaxed)};
}

}  // namespace eit::indices
