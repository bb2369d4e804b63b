#pragma once
// `eitstream run --indices ENDPOINT`: the IndicesPublisher sink beside the image publisher.
#include <memory>
#include <string>
#include <vector>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/sinks/recording_annex.hpp"
#include "indices_options.hpp"

namespace eit::cli {

struct RunIndices {
  std::string endpoint;  // empty: no indices sink
  IndicesCliOptions options;
};

// nullptr when r.endpoint is empty. Throws CommandError without a frame rate (rate_hz ≤ 0).
// `curve_server` set: CURVE like the image publisher, admitting `curve_allowed` (docs/security.md).
std::unique_ptr<pipeline::ImageSink> make_indices_sink(
    const RunIndices& r, const recon::Model& model, const std::string& stream, double rate_hz,
    const sinks::CurveKeyPair& curve_server = {},
    const std::vector<std::string>& curve_allowed = {});

// With --indices and --record: the annex that writes the indices into the image file (/indices,
// docs/formats.md); nullptr without --indices.
std::unique_ptr<sinks::RecordingAnnex> make_indices_annex(const RunIndices& r,
                                                          const recon::Model& model,
                                                          double rate_hz);

}  // namespace eit::cli
