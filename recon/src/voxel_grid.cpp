// Voxel grids for 3-D models: point location in tetrahedra and the sparse map P (voxel_grid.hpp).
#include "eit/recon/voxel_grid.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Dense>

namespace eit::recon {
namespace {

using Points = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

// Points binned into a uniform cell grid over their bounding box, so that each tetrahedron
// tests only the points in the cells its own bounding box overlaps.
struct PointBins {
  Eigen::Vector3d lo, step;
  std::array<int, 3> n{1, 1, 1};
  std::vector<int> start, order;  // CSR: points of cell c are order[start[c] .. start[c+1])

  explicit PointBins(const Points& p) {
    lo = p.colwise().minCoeff().transpose();
    const Eigen::Vector3d hi = p.colwise().maxCoeff().transpose();
    const int per_axis =
        std::clamp(static_cast<int>(std::cbrt(static_cast<double>(p.rows()) / 2.0)), 1, 256);
    for (int k = 0; k < 3; ++k) {
      const double span = hi[k] - lo[k];
      n[static_cast<size_t>(k)] = span > 0 ? per_axis : 1;
      step[k] = span > 0 ? span / per_axis : 1.0;
    }
    const size_t cells = static_cast<size_t>(n[0]) * n[1] * n[2];
    std::vector<int> cell_of(static_cast<size_t>(p.rows()));
    start.assign(cells + 1, 0);
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
      std::array<int, 3> c{};
      for (int k = 0; k < 3; ++k) c[static_cast<size_t>(k)] = clamp_cell(k, p(i, k));
      cell_of[static_cast<size_t>(i)] = (c[2] * n[1] + c[1]) * n[0] + c[0];
      ++start[static_cast<size_t>(cell_of[static_cast<size_t>(i)]) + 1];
    }
    for (size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
    order.resize(static_cast<size_t>(p.rows()));
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (Eigen::Index i = 0; i < p.rows(); ++i)
      order[static_cast<size_t>(fill[static_cast<size_t>(cell_of[static_cast<size_t>(i)])]++)] =
          static_cast<int>(i);
  }
  int clamp_cell(int axis, double x) const {
    const int c = static_cast<int>(std::floor((x - lo[axis]) / step[axis]));
    return std::clamp(c, 0, n[static_cast<size_t>(axis)] - 1);
  }
};

int parse_count(std::string_view part, std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (ec != std::errc() || end != part.data() + part.size() || v < 1 || v > 1024)
    throw std::invalid_argument(fmt::format(
        "voxel grid '{}': expected NXxNYxNZ with each count in 1..1024 (e.g. 32x32x4)", text));
  return v;
}

}  // namespace

VoxelGridOptions parse_voxel_spec(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t from = 0;
  for (size_t x = text.find('x'); x != std::string_view::npos; x = text.find('x', from)) {
    parts.push_back(text.substr(from, x - from));
    from = x + 1;
  }
  parts.push_back(text.substr(from));
  if (parts.size() != 3)
    throw std::invalid_argument(
        fmt::format("voxel grid '{}': expected NXxNYxNZ (e.g. 32x32x4)", text));
  VoxelGridOptions o;
  o.nx = parse_count(parts[0], text);
  o.ny = parse_count(parts[1], text);
  o.nz = parse_count(parts[2], text);
  return o;
}

GridGeometry voxel_grid_over(const NodeMatrix& nodes, const VoxelGridOptions& o) {
  if (nodes.cols() != 3 || nodes.rows() == 0)
    throw std::invalid_argument(
        fmt::format("voxel grid: the mesh has {} × {} nodes, expected 3-D nodes (n × 3)",
                    nodes.rows(), nodes.cols()));
  if (o.nx < 1 || o.ny < 1 || o.nz < 1)
    throw std::invalid_argument(
        fmt::format("voxel grid {} × {} × {}: expected positive sizes", o.nx, o.ny, o.nz));
  const Eigen::RowVector3d lo = nodes.colwise().minCoeff(), hi = nodes.colwise().maxCoeff();
  GridGeometry g;
  g.nx = o.nx;
  g.ny = o.ny;
  g.nz = o.nz;
  g.dx = (hi[0] - lo[0]) / o.nx;
  g.dy = (hi[1] - lo[1]) / o.ny;
  g.dz = (hi[2] - lo[2]) / o.nz;
  g.x0 = lo[0] + g.dx / 2;  // first voxel centre
  g.y0 = lo[1] + g.dy / 2;
  g.z0 = lo[2] + g.dz / 2;
  return g;
}

PointLocation locate_points(const NodeMatrix& nodes, const ElementMatrix& tets, const Points& p) {
  PointLocation out;
  out.element.assign(static_cast<size_t>(p.rows()), -1);
  out.weights.assign(static_cast<size_t>(p.rows()) * 4, 0.0);
  if (p.rows() == 0) return out;
  const PointBins bins(p);
  constexpr double kTol = 1e-10;  // points on a face or edge count as inside
  for (Eigen::Index e = 0; e < tets.rows(); ++e) {
    Eigen::Vector3d v[4];
    for (int k = 0; k < 4; ++k) v[k] = nodes.row(tets(e, k)).transpose();
    Eigen::Matrix3d T;
    T << v[1] - v[0], v[2] - v[0], v[3] - v[0];
    const double det = T.determinant();
    if (std::abs(det) < 1e-300) continue;  // degenerate: no volume to hold a point
    const Eigen::Matrix3d inv = T.inverse();
    Eigen::Vector3d lo = v[0], hi = v[0];
    for (int k = 1; k < 4; ++k) {
      lo = lo.cwiseMin(v[k]);
      hi = hi.cwiseMax(v[k]);
    }
    std::array<int, 3> c0{}, c1{};
    for (int k = 0; k < 3; ++k) {
      c0[static_cast<size_t>(k)] = bins.clamp_cell(k, lo[k]);
      c1[static_cast<size_t>(k)] = bins.clamp_cell(k, hi[k]);
    }
    for (int cz = c0[2]; cz <= c1[2]; ++cz)
      for (int cy = c0[1]; cy <= c1[1]; ++cy)
        for (int cx = c0[0]; cx <= c1[0]; ++cx) {
          const size_t cell = static_cast<size_t>((cz * bins.n[1] + cy) * bins.n[0] + cx);
          for (int s = bins.start[cell]; s < bins.start[cell + 1]; ++s) {
            const auto i = static_cast<size_t>(bins.order[static_cast<size_t>(s)]);
            if (out.element[i] >= 0) continue;  // first tetrahedron wins on shared faces
            const Eigen::Vector3d l =
                inv * (p.row(static_cast<Eigen::Index>(i)).transpose() - v[0]);
            const double l0 = 1.0 - l.sum();
            if (l0 < -kTol || l.minCoeff() < -kTol) continue;
            out.element[i] = static_cast<int>(e);
            const double w[4] = {l0, l[0], l[1], l[2]};
            std::copy(w, w + 4, out.weights.begin() + static_cast<std::ptrdiff_t>(4 * i));
          }
        }
  }
  return out;
}

VoxelMap make_voxel_map(const MeshGeometry& mesh, const VoxelGridOptions& o) {
  if (mesh.elements.cols() != 4)
    throw std::invalid_argument(fmt::format(
        "voxel grid: the model's mesh has {} nodes per element, expected tetrahedra (4)",
        mesh.elements.cols()));
  if (o.samples < 1 || o.samples > 8)
    throw std::invalid_argument(
        fmt::format("voxel grid: samples {} per axis, expected 1..8", o.samples));
  VoxelMap out;
  GridGeometry& g = out.grid;
  g = voxel_grid_over(mesh.nodes, o);
  const int S = o.samples;
  const size_t n_vox = g.n_pixels();
  const auto per_voxel = static_cast<size_t>(S) * S * S;

  // Voxel centres (for the mask) and the S³ samples of each voxel, voxel-major.
  Points centres(static_cast<Eigen::Index>(n_vox), 3);
  Points samples(static_cast<Eigen::Index>(n_vox * per_voxel), 3);
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const size_t v = (static_cast<size_t>(z) * g.ny + y) * g.nx + x;
        const Eigen::RowVector3d c(g.x0 + x * g.dx, g.y0 + y * g.dy, g.z0 + z * g.dz);
        centres.row(static_cast<Eigen::Index>(v)) = c;
        size_t k = v * per_voxel;
        for (int a = 0; a < S; ++a)
          for (int b = 0; b < S; ++b)
            for (int d = 0; d < S; ++d, ++k) {
              const Eigen::RowVector3d f((d + 0.5) / S - 0.5, (b + 0.5) / S - 0.5,
                                         (a + 0.5) / S - 0.5);
              samples.row(static_cast<Eigen::Index>(k)) =
                  c + f.cwiseProduct(Eigen::RowVector3d(g.dx, g.dy, g.dz));
            }
      }
  const PointLocation at_centre = locate_points(mesh.nodes, mesh.elements, centres);
  const PointLocation at_sample = locate_points(mesh.nodes, mesh.elements, samples);

  const bool on_nodes = mesh.output_on == MeshGeometry::OutputOn::kNodes;
  const Eigen::Index n_cols = on_nodes ? mesh.nodes.rows() : mesh.elements.rows();
  std::vector<Eigen::Triplet<double>> entries;
  g.mask.assign(n_vox, 1);
  for (size_t v = 0; v < n_vox; ++v) {
    if (at_centre.element[v] < 0) continue;  // centre outside the body: masked, zero row
    std::vector<std::pair<int, double>> row;
    int inside = 0;
    for (size_t k = v * per_voxel; k < (v + 1) * per_voxel; ++k) {
      const int e = at_sample.element[k];
      if (e < 0) continue;
      ++inside;
      if (!on_nodes) {
        row.emplace_back(e, 1.0);
      } else {
        for (int j = 0; j < 4; ++j)
          row.emplace_back(mesh.elements(e, j), at_sample.weights[4 * k + static_cast<size_t>(j)]);
      }
    }
    if (inside == 0) {  // every sample fell outside (a sliver of body): use the centre alone
      const int e = at_centre.element[v];
      if (!on_nodes)
        row.emplace_back(e, 1.0);
      else
        for (int j = 0; j < 4; ++j)
          row.emplace_back(mesh.elements(e, j), at_centre.weights[4 * v + static_cast<size_t>(j)]);
      inside = 1;
    }
    g.mask[v] = 0;
    for (const auto& [col, w] : row)
      entries.emplace_back(static_cast<int>(v), col, w / inside);  // duplicates are summed
  }
  out.P.resize(static_cast<Eigen::Index>(n_vox), n_cols);
  out.P.setFromTriplets(entries.begin(), entries.end());
  return out;
}

void map_to_voxels(ReconstructionMatrix& rm, const VoxelGridOptions& o) {
  const auto* mesh = std::get_if<MeshGeometry>(&rm.model.geometry);
  if (!mesh || mesh->elements.cols() != 4)
    throw std::invalid_argument(
        "voxel grid: the model's output is not on a tetrahedral mesh (--voxels needs --dim 3 or a "
        "3-D mesh, and the jac or bp algorithm)");
  const bool from_nodes = mesh->output_on == MeshGeometry::OutputOn::kNodes;
  const VoxelMap map = make_voxel_map(*mesh, o);
  if (map.P.cols() != rm.H.rows())
    throw std::invalid_argument(fmt::format("voxel grid: H has {} rows, the mesh gives {} outputs",
                                            rm.H.rows(), map.P.cols()));
  rm.H = map.P * rm.H;
  rm.model.H = (-rm.H).cast<float>();  // the streaming sign, as make_model folds it
  rm.model.geometry = map.grid;
  std::string& params = rm.model.parameters_json;
  const std::string voxels =
      fmt::format(R"("voxels": {{"nx": {}, "ny": {}, "nz": {}, "samples": {}, "from": "{}"}})",
                  o.nx, o.ny, o.nz, o.samples, from_nodes ? "nodes" : "elements");
  const auto close = params.rfind('}');
  if (close == std::string::npos)
    params = "{" + voxels + "}";
  else
    params.insert(close, (params.find(':') == std::string::npos ? "" : ", ") + voxels);
}

}  // namespace eit::recon
