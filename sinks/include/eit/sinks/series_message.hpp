#pragma once
// The JSON messages on `eit/<stream>/series` (docs/protocol.md): what a subscriber needs to
// interpret images — image shape and geometry (grid + mask, or mesh), electrodes, protocol,
// model id, units — and the series-end message sent on stop. Built once, off the per-frame path.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::sinks {

struct SeriesInfo {
  std::string stream = "default";
  uint64_t series_id = 0;
  std::string source;       // the source's description
  double rate_hz = 0;       // nominal frame rate, 0 when unknown
  std::string policy;       // "live" | "lossless"
  double interval_s = 2.0;  // how often the series message is repeated
  bool normalized = false;  // images are H·(dv / |v_ref|)
  // Most images one message may carry (image_batch.hpp); 1: every image is its own "img" message.
  size_t publish_batch = 1;
};

// The image shape a model produces, as the binary image header carries it: {ny, nx} for a grid,
// {n_out, 1} for mesh values, and {nz·ny, nx} for a voxel grid (its planes stacked along the rows,
// z ascending; planes = nz, and the series message gives the shape [nz, ny, nx]).
struct ImageShape {
  uint32_t ndim = 1;
  uint32_t dims[2] = {0, 1};
  uint32_t planes = 1;
};
ImageShape image_shape(const recon::Model& model);

std::string series_json(const recon::Model& model, const SeriesInfo& info);
std::string series_end_json(const SeriesInfo& info, uint64_t frames_sent, uint64_t frames_dropped);

}  // namespace eit::sinks
