#include "eit/sinks/series_message.hpp"

#include "eit/sinks/json_text.hpp"

#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace eit::sinks {

ImageShape image_shape(const recon::Model& model) {
  ImageShape s;
  if (const auto* grid = std::get_if<recon::GridGeometry>(&model.geometry);
      grid && grid->n_pixels() == model.n_out()) {
    s.ndim = 2;
    s.dims[0] = static_cast<uint32_t>(grid->ny) * static_cast<uint32_t>(grid->nz);
    s.dims[1] = static_cast<uint32_t>(grid->nx);
    s.planes = static_cast<uint32_t>(grid->nz);
  } else {
    s.ndim = 1;
    s.dims[0] = static_cast<uint32_t>(model.n_out());
    s.dims[1] = 1;
  }
  return s;
}

std::string series_json(const recon::Model& model, const SeriesInfo& info) {
  using nlohmann::json;
  const ImageShape shape = image_shape(model);
  json image = {{"dtype", "float32"}, {"byte_order", "little"}};
  if (shape.ndim == 2 && shape.planes > 1)  // voxel grid: the header says {nz·ny, nx}
    image["shape"] = {shape.planes, shape.dims[0] / shape.planes, shape.dims[1]};
  else if (shape.ndim == 2)
    image["shape"] = {shape.dims[0], shape.dims[1]};
  else
    image["shape"] = {shape.dims[0]};
  // A complex gn model: shape counts floats, (Re σ, Im σ) per element; absent means real.
  if (model.complex_interleaved()) image["complex"] = "interleaved";
  json geometry;
  std::visit(
      [&](const auto& g) {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, recon::GridGeometry>) {
          geometry = {{"kind", "grid"}, {"nx", g.nx},
                      {"ny", g.ny},     {"x0", g.x0},
                      {"y0", g.y0},     {"dx", g.dx},
                      {"dy", g.dy},     {"row_order", "y ascending"},
                      {"mask", g.mask}, {"mask_meaning", "1 = outside the body"}};
          if (g.nz > 1) {  // voxel grid: mask and images are nz planes of ny × nx, z ascending
            geometry["nz"] = g.nz;
            geometry["z0"] = g.z0;
            geometry["dz"] = g.dz;
            geometry["plane_order"] = "z ascending";
          }
        } else {
          // 2-D: [x, y] and triangles; 3-D: [x, y, z] and tetrahedra (4 nodes).
          json nodes = json::array(), elements = json::array();
          for (Eigen::Index i = 0; i < g.nodes.rows(); ++i) {
            json row = json::array();
            for (Eigen::Index k = 0; k < g.nodes.cols(); ++k) row.push_back(g.nodes(i, k));
            nodes.push_back(std::move(row));
          }
          for (Eigen::Index i = 0; i < g.elements.rows(); ++i) {
            json row = json::array();
            for (Eigen::Index k = 0; k < g.elements.cols(); ++k) row.push_back(g.elements(i, k));
            elements.push_back(std::move(row));
          }
          geometry = {{"kind", "mesh"},
                      {"dim", g.nodes.cols() == 3 ? 3 : 2},
                      {"output_on",
                       g.output_on == recon::MeshGeometry::OutputOn::kNodes ? "nodes" : "elements"},
                      {"nodes", nodes},
                      {"elements", elements},
                      {"electrode_nodes", g.electrode_nodes}};
        }
      },
      model.geometry);
  const auto& p = model.protocol;
  json protocol = {{"n_electrodes", p.n_electrodes},
                   {"drive_distance", p.options.drive_distance},
                   {"measure_step", p.options.measure_step},
                   {"order", std::string(recon::to_string(p.options.order))},
                   {"measure_on_driven", p.options.measure_on_driven},
                   {"n_meas", p.n_meas()}};
  json msg = {
      {"type", "series"},
      {"version", 1},
      {"stream", info.stream},
      {"series_id", fmt::format("{:016x}", info.series_id)},
      {"model_id", model.id},
      {"algorithm", model.algorithm},
      {"electrodes", p.n_electrodes},
      {"protocol", protocol},
      {"image", image},
      {"geometry", geometry},
      {"normalized", info.normalized},
      {"units", info.normalized ? "relative conductivity change (dv/|v_ref|, arbitrary scale)"
                                : "conductivity change (arbitrary scale)"},
      {"clock", "CLOCK_MONOTONIC ns (t_acquired_ns, t_published_ns); same host only"},
      {"source", info.source},
      {"rate_hz", info.rate_hz},
      {"policy", info.policy},
      {"repeat_interval_s", info.interval_s},
      {"publish_batch", info.publish_batch}};
  return json_text(msg);
}

std::string series_end_json(const SeriesInfo& info, uint64_t frames_sent, uint64_t frames_dropped) {
  nlohmann::json msg = {
      {"type", "series-end"},       {"version", 1},
      {"stream", info.stream},      {"series_id", fmt::format("{:016x}", info.series_id)},
      {"frames_sent", frames_sent}, {"frames_dropped", frames_dropped}};
  return json_text(msg);
}

}  // namespace eit::sinks
