#include "eit/sinks/image_header_fill.hpp"

#include <algorithm>
#include <random>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::sinks {

ImageHeader image_header_template(const recon::Model& model, uint64_t series_id) {
  ImageHeader h;
  const ImageShape shape = image_shape(model);
  h.ndim = static_cast<uint8_t>(shape.ndim);
  h.shape[0] = shape.dims[0];
  h.shape[1] = shape.dims[1];
  h.count = shape.dims[0] * shape.dims[1];
  h.series_id = series_id;
  std::copy_n(model.id.data(), std::min(model.id.size(), sizeof h.model_id), h.model_id);
  return h;
}

ImageHeader image_header_for(const ImageHeader& templ, const pipeline::FrameSlot& frame) noexcept {
  ImageHeader h = templ;
  h.seq = frame.seq;
  h.dropped_before = frame.dropped_before;
  h.t_acquired_ns = frame.stamp(pipeline::Stage::kReceived);
  h.t_published_ns = frame.stamp(pipeline::Stage::kPublished);
  if (h.t_published_ns == 0) h.t_published_ns = pipeline::now_ns();
  h.t_published_wall_ns = pipeline::wall_ns();
  h.t_device_ns = frame.device_time_ns;
  h.flags = frame.flags;
  return h;
}

uint64_t random_series_id() {
  std::random_device rd;
  const uint64_t id = (uint64_t{rd()} << 32) ^ rd();
  return id ? id : 1;
}

}  // namespace eit::sinks
