#include "eit/indices/body_layout.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::indices {

BodyLayout BodyLayout::from_grid(const recon::GridGeometry& g, LayoutOptions options) {
  if (g.nz > 1)
    throw std::invalid_argument(fmt::format(
        "indices: the model's output is a voxel grid of {} planes; the indices need one 2-D image "
        "(a 2-D grid or mesh)",
        g.nz));
  const size_t n = static_cast<size_t>(g.nx) * static_cast<size_t>(g.ny);
  if (n == 0) throw std::invalid_argument("indices: grid geometry has nx·ny = 0");
  if (!g.mask.empty() && g.mask.size() != n)
    throw std::invalid_argument(
        fmt::format("indices: grid mask has {} values, nx·ny = {}", g.mask.size(), n));
  std::vector<double> x(n), y(n);
  std::vector<uint8_t> inside(n, 1);
  for (int r = 0; r < g.ny; ++r)
    for (int c = 0; c < g.nx; ++c) {
      const size_t i = static_cast<size_t>(r) * static_cast<size_t>(g.nx) + static_cast<size_t>(c);
      x[i] = g.x0 + c * g.dx;
      y[i] = g.y0 + r * g.dy;
      if (!g.mask.empty()) inside[i] = g.mask[i] == 0;
    }
  return BodyLayout(std::move(x), std::move(y), std::move(inside), options, g.nx, g.ny);
}

BodyLayout BodyLayout::from_model(const recon::Model& model, LayoutOptions options) {
  if (const auto* g = std::get_if<recon::GridGeometry>(&model.geometry))
    return from_grid(*g, options);
  const auto& m = std::get<recon::MeshGeometry>(model.geometry);
  std::vector<double> x, y;
  if (m.output_on == recon::MeshGeometry::OutputOn::kNodes) {
    for (Eigen::Index i = 0; i < m.nodes.rows(); ++i) {
      x.push_back(m.nodes(i, 0));
      y.push_back(m.nodes(i, 1));
    }
  } else {
    for (Eigen::Index e = 0; e < m.elements.rows(); ++e) {
      double cx = 0, cy = 0;
      for (Eigen::Index k = 0; k < m.elements.cols(); ++k) {
        cx += m.nodes(m.elements(e, k), 0);
        cy += m.nodes(m.elements(e, k), 1);
      }
      x.push_back(cx / static_cast<double>(m.elements.cols()));
      y.push_back(cy / static_cast<double>(m.elements.cols()));
    }
  }
  if (x.size() != model.n_out())
    throw std::invalid_argument(fmt::format("indices: model {} has {} outputs, geometry gives {}",
                                            model.id, model.n_out(), x.size()));
  std::vector<uint8_t> inside(x.size(), 1);
  return BodyLayout(std::move(x), std::move(y), std::move(inside), options);
}

BodyLayout::BodyLayout(std::vector<double> x, std::vector<double> y, std::vector<uint8_t> inside,
                       LayoutOptions options, int nx, int ny)
    : options_(options), nx_(nx), ny_(ny), inside_(std::move(inside)) {
  if (options_.layers < 1 || options_.layers > 64)
    throw std::invalid_argument(
        fmt::format("indices: {} layers, expected 1 to 64", options_.layers));
  if (x.size() != inside_.size() || y.size() != inside_.size())
    throw std::invalid_argument("indices: positions and inside flags differ in size");
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (size_t i = 0; i < inside_.size(); ++i) {
    if (!inside_[i]) continue;
    inside_index_.push_back(static_cast<uint32_t>(i));
    x_min = std::min(x_min, x[i]);
    x_max = std::max(x_max, x[i]);
    y_min = std::min(y_min, y[i]);
    y_max = std::max(y_max, y[i]);
  }
  if (inside_index_.empty()) throw std::invalid_argument("indices: no image value inside the body");
  const double w = x_max > x_min ? x_max - x_min : 1.0, h = y_max > y_min ? y_max - y_min : 1.0;
  depth_.assign(inside_.size(), 0.5);
  lateral_.assign(inside_.size(), 0.5);
  for (uint32_t i : inside_index_) {
    depth_[i] = options_.ventral_positive_y ? (y_max - y[i]) / h : (y[i] - y_min) / h;
    lateral_[i] = options_.right_negative_x ? (x[i] - x_min) / w : (x_max - x[i]) / w;
    const int layer = std::min(options_.layers - 1, static_cast<int>(depth_[i] * options_.layers));
    const int half = depth_[i] < 0.5 ? 0 : 1;
    const int side = lateral_[i] < 0.5 ? 0 : 1;
    cell_.push_back(static_cast<uint16_t>(layer * 4 + half * 2 + side));
  }
  region_names_.push_back("global");
  for (int l = 1; l <= options_.layers; ++l) region_names_.push_back(fmt::format("layer_{}", l));
  for (const char* n :
       {"right", "left", "ventral_right", "ventral_left", "dorsal_right", "dorsal_left"})
    region_names_.push_back(n);
}

void BodyLayout::add_roi(std::string name, const std::vector<uint8_t>& mask) {
  if (mask.size() != n_out())
    throw std::invalid_argument(fmt::format("indices: ROI '{}' has {} values, the image has {}",
                                            name, mask.size(), n_out()));
  std::vector<uint32_t> members;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i] && inside_[i]) members.push_back(static_cast<uint32_t>(i));
  rois_.push_back(std::move(members));
  region_names_.push_back(std::move(name));
}

std::vector<uint8_t> read_roi_mask(const std::filesystem::path& path, size_t n_out) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open ROI mask", path.string()));
  std::vector<uint8_t> mask;
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::replace(line.begin(), line.end(), ',', ' ');
    std::string token;
    for (size_t p = 0; p <= line.size(); ++p) {
      if (p < line.size() && !std::isspace(static_cast<unsigned char>(line[p]))) {
        token += line[p];
        continue;
      }
      if (token.empty()) continue;
      if (token != "0" && token != "1")
        throw std::runtime_error(fmt::format("{}: value {} is '{}', expected 0 or 1", path.string(),
                                             mask.size() + 1, token));
      mask.push_back(token == "1");
      token.clear();
    }
  }
  if (mask.size() != n_out)
    throw std::runtime_error(fmt::format("{}: {} mask values, the model's image has {}",
                                         path.string(), mask.size(), n_out));
  return mask;
}

}  // namespace eit::indices
