#include "eit/view/view_sink.hpp"

#include <algorithm>

#include "eit/pipeline/clock.hpp"

namespace eit::view {

ViewSink::ViewSink(const recon::Model& model, ViewServer& server, sinks::SeriesInfo series)
    : server_(server), series_(std::move(series)) {
  series_json_ = sinks::series_json(model, series_);
  const auto shape = sinks::image_shape(model);
  header_template_.ndim = static_cast<uint8_t>(shape.ndim);
  header_template_.shape[0] = shape.dims[0];
  header_template_.shape[1] = shape.dims[1];
  header_template_.count = shape.dims[0] * shape.dims[1];
  header_template_.series_id = series_.series_id;
  std::copy_n(model.id.data(), std::min(model.id.size(), sizeof header_template_.model_id),
              header_template_.model_id);
  payload_bytes_ = model.n_out() * sizeof(float);
  channel_ = server_.add_stream(series_.stream, sizeof(sinks::ImageHeader) + payload_bytes_);
}

void ViewSink::begin() noexcept {
  try {
    server_.set_series(series_.stream, series_json_);
  } catch (...) {
    errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void ViewSink::publish(const pipeline::FrameSlot& frame) noexcept {
  sinks::ImageHeader h = header_template_;
  h.seq = frame.seq;
  h.dropped_before = frame.dropped_before;
  h.t_acquired_ns = frame.stamp(pipeline::Stage::kReceived);
  h.t_published_ns = pipeline::now_ns();
  h.t_published_wall_ns = pipeline::wall_ns();
  h.t_device_ns = frame.device_time_ns;
  h.flags = frame.flags;
  const auto head = std::as_bytes(std::span(&h, 1));
  const auto body = std::as_bytes(std::span(frame.image, payload_bytes_ / sizeof(float)));
  if (channel_->publish(head, body))
    sent_.store(sent_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  else
    errors_.store(errors_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void ViewSink::end() noexcept {
  try {
    const auto s = stats();
    server_.post_json(series_.stream, sinks::series_end_json(series_, s.sent, s.dropped));
  } catch (...) {
    errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

pipeline::SinkStats ViewSink::stats() const noexcept {
  return {sent_.load(std::memory_order_relaxed), channel_->ring().overwritten(),
          errors_.load(std::memory_order_relaxed)};
}

}  // namespace eit::view
