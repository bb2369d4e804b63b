#include "run_indices.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/indices/indices_publisher.hpp"

namespace eit::cli {

std::unique_ptr<pipeline::ImageSink> make_indices_sink(const RunIndices& r,
                                                       const recon::Model& model,
                                                       const std::string& stream, double rate_hz) {
  if (r.endpoint.empty()) return nullptr;
  if (!(rate_hz > 0))
    throw CommandError(
        "--indices: the source has no frame rate (give --fps): breath timing needs it");
  indices::IndicesEngine engine(make_layout(model.geometry, model.n_out(), r.options),
                                make_engine_options(rate_hz, r.options));
  indices::IndicesPublisherOptions o;
  o.endpoint = r.endpoint;
  o.stream = stream;
  auto sink = std::make_unique<indices::IndicesPublisher>(std::move(engine), o);
  fmt::print(stderr, "eitstream: indices on {} (eit/{}/global, eit/{}/breath)\n", sink->endpoint(),
             stream, stream);
  return sink;
}

}  // namespace eit::cli
