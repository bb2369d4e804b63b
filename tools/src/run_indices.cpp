#include "run_indices.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/indices/hdf5_indices_annex.hpp"
#include "eit/indices/indices_publisher.hpp"

namespace eit::cli {

std::unique_ptr<pipeline::ImageSink> make_indices_sink(
    const RunIndices& r, const recon::Model& model, const std::string& stream, double rate_hz,
    const sinks::CurveKeyPair& curve_server, const std::vector<std::string>& curve_allowed) {
  if (r.endpoint.empty()) return nullptr;
  if (!(rate_hz > 0))
    throw CommandError(
        "--indices: the source has no frame rate (give --fps): breath timing needs it");
  indices::IndicesEngine engine(make_layout(model.geometry, model.n_out(), r.options),
                                make_engine_options(rate_hz, r.options));
  indices::IndicesPublisherOptions o;
  o.endpoint = r.endpoint;
  o.stream = stream;
  o.curve_server = curve_server;
  o.curve_allowed = curve_allowed;
  auto sink = std::make_unique<indices::IndicesPublisher>(std::move(engine), o);
  fmt::print(stderr, "eitstream: indices on {} (eit/{}/global, eit/{}/breath){}\n",
             sink->endpoint(), stream, stream, sink->curve() ? ", CURVE on" : "");
  return sink;
}

std::unique_ptr<sinks::RecordingAnnex> make_indices_annex(const RunIndices& r,
                                                          const recon::Model& model,
                                                          double rate_hz) {
  if (r.endpoint.empty() || !(rate_hz > 0)) return nullptr;  // make_indices_sink names the error
  return std::make_unique<indices::Hdf5IndicesAnnex>(
      indices::IndicesEngine(make_layout(model.geometry, model.n_out(), r.options),
                             make_engine_options(rate_hz, r.options)));
}

}  // namespace eit::cli
