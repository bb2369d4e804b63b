#pragma once
// BodyLayout: where each image value sits on the chest, and the regions the indices sum over.
// Built once from the model's geometry (grid pixels, or mesh element centroids / nodes).
//
// Orientation (docs/indices.md): depth runs from ventral (0) to dorsal (1) across the extent of
// the body's values, lateral from the patient's right (0) to left (1). By default ventral is +y
// (the top of an image drawn with y up) and the patient's right is −x (radiological view, as
// EIT monitors show it); both can be flipped.
//
// Regions, in the order RegionSums writes them: "global", "layer_1" … "layer_L" (ventral →
// dorsal), "right", "left", "ventral_right", "ventral_left", "dorsal_right", "dorsal_left", then
// the user ROIs in the order added.
//
// Threads: immutable after set-up; any number of readers. Allocates only while being built.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eit/recon/model.hpp"

namespace eit::indices {

struct LayoutOptions {
  int layers = 4;                  // ventral → dorsal layers of equal height
  bool ventral_positive_y = true;  // false: ventral is −y
  bool right_negative_x = true;    // false: the patient's right is +x
};

class BodyLayout {
 public:
  // Grid: pixels with mask 0; mesh: element centroids (or nodes, as the model outputs).
  // Throws std::invalid_argument naming the field for an empty geometry or a bad layer count.
  static BodyLayout from_model(const recon::Model& model, LayoutOptions options = {});
  static BodyLayout from_grid(const recon::GridGeometry& grid, LayoutOptions options = {});
  // Positions of each output value and whether it lies in the body.
  BodyLayout(std::vector<double> x, std::vector<double> y, std::vector<uint8_t> inside,
             LayoutOptions options = {}, int nx = 0, int ny = 0);

  // A user region: mask[i] != 0 for the values in it (size n_out). Throws on a size mismatch.
  void add_roi(std::string name, const std::vector<uint8_t>& mask);

  size_t n_out() const noexcept { return inside_.size(); }
  size_t n_inside() const noexcept { return inside_index_.size(); }
  bool inside(size_t i) const noexcept { return inside_[i] != 0; }
  const std::vector<uint32_t>& inside_index() const noexcept { return inside_index_; }
  double depth(size_t i) const noexcept { return depth_[i]; }      // 0 ventral … 1 dorsal
  double lateral(size_t i) const noexcept { return lateral_[i]; }  // 0 right … 1 left
  int layers() const noexcept { return options_.layers; }
  int nx() const noexcept { return nx_; }  // 0 for a mesh
  int ny() const noexcept { return ny_; }
  const LayoutOptions& options() const noexcept { return options_; }

  // Fixed cell of each inside value: layer · 4 + half (0 ventral, 1 dorsal) · 2 + side (0 right).
  uint16_t cell(size_t k) const noexcept { return cell_[k]; }  // k indexes inside_index()
  size_t n_regions() const noexcept { return region_names_.size(); }
  const std::vector<std::string>& region_names() const noexcept { return region_names_; }
  size_t n_rois() const noexcept { return rois_.size(); }
  const std::vector<uint32_t>& roi(size_t r) const noexcept { return rois_[r]; }
  // Index of the first ROI region in the region list.
  size_t roi_offset() const noexcept { return 1 + static_cast<size_t>(options_.layers) + 6; }

 private:
  LayoutOptions options_;
  int nx_ = 0, ny_ = 0;
  std::vector<uint8_t> inside_;
  std::vector<uint32_t> inside_index_;
  std::vector<double> depth_, lateral_;
  std::vector<uint16_t> cell_;
  std::vector<std::vector<uint32_t>> rois_;
  std::vector<std::string> region_names_;
};

// Reads a region mask: whitespace- or comma-separated 0/1 values, n_out of them in image order
// (row-major for a grid), '#' starts a comment. Throws std::runtime_error naming the file, the
// value count found and expected, or the bad token.
std::vector<uint8_t> read_roi_mask(const std::filesystem::path& path, size_t n_out);

}  // namespace eit::indices
