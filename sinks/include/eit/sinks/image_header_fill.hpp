#pragma once
// Filling the published-image header (image_header.hpp) from a model and a frame, shared by every
// sink that sends the wire format (ZeroMQ, NATS, the web view): the per-model part once at set-up,
// the per-frame part without allocation on any thread.
#include <cstdint>

#include "eit/pipeline/frame.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"

namespace eit::sinks {

// Shape, count, series id and model id of every image of this model.
ImageHeader image_header_template(const recon::Model& model, uint64_t series_id);

// The template with this frame's seq, times, drops and flags; a frame not yet stamped
// kPublished gets the current time.
ImageHeader image_header_for(const ImageHeader& templ, const pipeline::FrameSlot& frame) noexcept;

// A non-zero random series id (changes when a publisher restarts).
uint64_t random_series_id();

}  // namespace eit::sinks
