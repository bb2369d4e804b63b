#include "model_summary.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace eit::cli {
namespace {

// 3-D meshes: extent and the electrode rings (electrodes grouped by height, within 1e-6 of the
// model's extent), e.g. "2 rings: z = 0.25 (16), z = 0.75 (16)".
void print_mesh_3d(std::FILE* out, const recon::MeshGeometry& g) {
  const Eigen::Index n = g.nodes.rows();
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int c = 0; c < 3; ++c)
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = g.nodes(i, c);
      lo[c] = i ? std::min(lo[c], v) : v;
      hi[c] = i ? std::max(hi[c], v) : v;
    }
  const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-300});
  std::vector<std::pair<double, int>> rings;  // height, electrode count
  for (int node : g.electrode_nodes) {
    const double z = g.nodes(node, 2);
    auto it = std::find_if(rings.begin(), rings.end(), [&](const auto& r) {
      return std::abs(r.first - z) <= 1e-6 * extent;
    });
    if (it == rings.end())
      rings.emplace_back(z, 1);
    else
      ++it->second;
  }
  std::sort(rings.begin(), rings.end());
  fmt::print(out,
             "geometry   mesh 3-D: {} nodes, {} tetrahedra, {} electrode nodes, output on {}\n",
             n, g.elements.rows(), g.electrode_nodes.size(),
             g.output_on == recon::MeshGeometry::OutputOn::kElements ? "elements" : "nodes");
  fmt::print(out, "extent     x {:.6g}..{:.6g}  y {:.6g}..{:.6g}  z {:.6g}..{:.6g}\n", lo[0], hi[0],
             lo[1], hi[1], lo[2], hi[2]);
  std::string list;
  for (const auto& [z, count] : rings)
    list += fmt::format("{}z = {:.6g} ({})", list.empty() ? "" : ", ", z, count);
  fmt::print(out, "rings      {} ring{}{}{}\n", rings.size(), rings.size() == 1 ? "" : "s",
             rings.empty() ? "" : ": ", list);
}

// H's shape, size and statistics (absent when the file stores none and H was not read).
void print_matrix(std::FILE* out, int64_t rows, int64_t cols,
                  const std::optional<recon::MatrixStats>& stats, const std::string& layout) {
  const double bytes = static_cast<double>(rows) * static_cast<double>(cols) * 4;
  fmt::print(out, "H          {} × {} float32 ({}){}\n", rows, cols,
             bytes >= 1 << 20 ? fmt::format("{:.1f} MiB", bytes / (1 << 20))
                              : fmt::format("{:.1f} KiB", bytes / 1024),
             layout.empty() ? "" : ", " + layout);
  if (stats)
    fmt::print(out,
               "H stats    min {:.6g}  max {:.6g}  mean|H| {:.6g}  ‖H‖F {:.6g}  zero rows {}\n",
               stats->min, stats->max, stats->mean_abs, stats->frobenius, stats->zero_rows);
  else
    fmt::print(out, "H stats    not stored in this file (model info --verify reads H)\n");
}

// Everything but H's values comes from m; H's shape, statistics and id line from the caller.
void print_summary(std::FILE* out, const recon::Model& m, const std::string& file, int64_t rows,
                   int64_t cols, const std::optional<recon::MatrixStats>& stats,
                   const std::string& id_line, const std::string& layout) {
  fmt::print(out, "model      {}\n", file);
  fmt::print(out, "id         {}\n", id_line);
  fmt::print(out, "algorithm  {}\n", m.algorithm);
  fmt::print(out, "parameters {}\n", m.parameters_json.empty() ? "{}" : m.parameters_json);
  fmt::print(out, "normalize  {}\n", m.normalize ? "yes (dv / |v_ref|)" : "no");
  if (m.gn) {
    fmt::print(out, "H          none: a gn model solves each frame by Gauss–Newton\n");
  } else {
    print_matrix(out, rows, cols, stats, layout);
  }
  const recon::Protocol& p = m.protocol;
  fmt::print(out,
             "protocol   {} electrodes, drive distance {}, measure step {}, order {}, "
             "{}measure on driven; {} drives, {} measurements\n",
             p.n_electrodes, p.options.drive_distance, p.options.measure_step,
             recon::to_string(p.options.order), p.options.measure_on_driven ? "" : "no ",
             p.drives.size(), p.measurements.size());
  if (!p.measurements.empty()) {
    const auto& first = p.measurements.front();
    const auto& d = p.drives[static_cast<size_t>(first.drive)];
    fmt::print(out, "           first: drive {}→{}, v = u{} − u{}\n", d.source, d.sink,
               first.positive, first.negative);
  }
  if (const auto* g = std::get_if<recon::MeshGeometry>(&m.geometry); g && g->nodes.cols() == 3) {
    print_mesh_3d(out, *g);
  } else if (g) {
    fmt::print(out, "geometry   mesh: {} nodes, {} triangles, {} electrode nodes, output on {}\n",
               g->nodes.rows(), g->elements.rows(), g->electrode_nodes.size(),
               g->output_on == recon::MeshGeometry::OutputOn::kElements ? "elements" : "nodes");
  } else {
    const auto& grid = std::get<recon::GridGeometry>(m.geometry);
    const auto masked = std::count(grid.mask.begin(), grid.mask.end(), uint8_t{1});
    if (grid.nz > 1) {
      fmt::print(out,
                 "geometry   voxel grid: {} × {} × {} (nx × ny × nz), first voxel ({:.6g}, {:.6g}, "
                 "{:.6g}), step ({:.6g}, {:.6g}, {:.6g}), {} of {} voxels masked\n",
                 grid.nx, grid.ny, grid.nz, grid.x0, grid.y0, grid.z0, grid.dx, grid.dy, grid.dz,
                 masked, grid.mask.size());
      return;
    }
    fmt::print(out,
               "geometry   grid: {} × {} (nx × ny), first pixel ({:.6g}, {:.6g}), step ({:.6g}, "
               "{:.6g}), {} of {} pixels masked\n",
               grid.nx, grid.ny, grid.x0, grid.y0, grid.dx, grid.dy, masked, grid.mask.size());
  }
}

}  // namespace

void print_model_summary(std::FILE* out, const recon::Model& m, const std::string& file) {
  print_summary(out, m, file, m.H.rows(), m.H.cols(), recon::matrix_stats(m.H),
                m.id.empty() ? "(not saved yet)" : m.id, "");
}

void print_model_header_summary(std::FILE* out, const recon::ModelHeader& h,
                                const std::string& file) {
  const std::string id =
      h.stored_id.empty()
          ? std::string("(none stored)")
          : fmt::format("{} (stored; not checked against H: model info --verify reads all of H)",
                        h.stored_id);
  print_summary(out, h.model, file, h.h_rows, h.h_cols, h.h_stats, id, h.h_layout);
}

}  // namespace eit::cli
