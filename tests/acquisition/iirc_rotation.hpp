#pragma once
// Shared by the two IIRC tank tests (test_eidors_greit_replay, test_replay_iirc): EIDORS' GREIT
// v1.0 matrix as a model on the 32 × 32 centred disc grid, where the target lies in an image, and
// how far it turns from frame to frame.
#include <cmath>
#include <filesystem>
#include <numbers>
#include <vector>

#include "eit/recon/array_file.hpp"
#include "eit/recon/matrix_import.hpp"

namespace eit::test {

inline recon::Model greit_v10_model(const std::filesystem::path& matrix_file) {
  recon::MatrixImportOptions o;
  o.file = matrix_file;
  o.geometry = recon::centred_disc_grid(32);
  return recon::import_matrix(o);
}

// Polar angle (degrees) of the image's dominant blob: |value|⁴-weighted centroid of the pixels
// inside the disc that share the sign of the extreme one.
inline double target_angle(const std::vector<double>& img, const recon::GridGeometry& g) {
  size_t k = 0;
  for (size_t i = 0; i < img.size(); ++i)
    if (!g.mask[i] && std::abs(img[i]) > std::abs(img[k])) k = i;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < img.size(); ++i) {
    if (g.mask[i] || img[i] * img[k] <= 0) continue;
    const double w = std::pow(std::abs(img[i]), 4);
    sx += w * (g.x0 + static_cast<double>(i % static_cast<size_t>(g.nx)) * g.dx);
    sy += w * (g.y0 + static_cast<double>(i / static_cast<size_t>(g.nx)) * g.dy);
  }
  return std::atan2(sy, sx) * 180 / std::numbers::pi;
}

struct Rotation {
  double mean_step = 0;  // degrees per frame
  int clockwise = 0;     // steps with a negative angle
};

// The steps between consecutive angles, each wrapped into (−180°, 180°].
inline Rotation rotation(const std::vector<double>& angles) {
  Rotation r;
  double sum = 0;
  for (size_t f = 1; f < angles.size(); ++f) {
    const double step = std::remainder(angles[f] - angles[f - 1], 360.0);
    sum += step;
    r.clockwise += step < 0;
  }
  r.mean_step = sum / static_cast<double>(angles.size() - 1);
  return r;
}

}  // namespace eit::test
