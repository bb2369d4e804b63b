#pragma once
// Model: everything the streaming path needs to turn frames into images, computed once by recon/
// (or imported) and stored in the Model file (see model_file.hpp and docs/formats.md).
//
//   image = H · w ⊙ (v − v_ref),  w = 1/|v_ref| if normalize else 1
//
// H already carries pyEIT's sign (ds = −H_pyeit · dv), so the streaming path only multiplies.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_options.hpp"
#include "eit/recon/mesh.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::recon {

using MatrixRowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Output on the mesh: one value per element (JAC) or per node (back-projection).
struct MeshGeometry {
  NodeMatrix nodes;
  ElementMatrix elements;
  std::vector<int> electrode_nodes;
  enum class OutputOn { kElements, kNodes } output_on = OutputOn::kElements;
};

// Output on a regular grid: row-major ny × nx image (GREIT), row index = y ascending; or, with
// nz > 1, a voxel grid of nz such planes, z ascending (3-D models, voxel_grid.hpp): value i =
// (s·ny + r)·nx + c. Pixel (plane s, row r, col c) sits at (x0 + c·dx, y0 + r·dy, z0 + s·dz).
// mask[i] = 1 where outside the body. A 2-D grid has nz = 1 (z0, dz unused).
struct GridGeometry {
  int nx = 0, ny = 0;
  double x0 = 0, y0 = 0, dx = 0, dy = 0;
  std::vector<uint8_t> mask;
  int nz = 1;
  double z0 = 0, dz = 0;

  size_t n_pixels() const noexcept {
    return static_cast<size_t>(nx) * static_cast<size_t>(ny) * static_cast<size_t>(nz);
  }
};

// Algorithm "gn" (absolute imaging): no H; the reconstructor runs Gauss–Newton on every frame
// with this forward model and these settings. The output is σ per element of `mesh`.
struct GnSetup {
  Mesh mesh;  // with ref_node and (CEM) electrode patches
  ForwardOptions forward;
  GnOptions options;
};

struct Model {
  std::string algorithm;        // "jac", "bp", "greit", "imported", …
  std::string parameters_json;  // the algorithm's parameters, as given
  MatrixRowMajorF H;            // n_out × n_meas, sign folded in (image = H · dv)
  Eigen::VectorXd v_ref;        // n_meas reference frame (may be empty: capture from the stream)
  bool normalize = false;       // divide dv by |v_ref| element-wise
  Protocol protocol;            // fixes the measurement order
  std::variant<MeshGeometry, GridGeometry> geometry;
  std::string id;  // content hash of H, v_ref, protocol and geometry
  std::optional<GnSetup> gn;  // algorithm "gn" only (then H is empty)

  // A gn model with complex conductivity: frames are (re, im) per measurement and images
  // (Re σ, Im σ) per element, interleaved; n_meas() and n_out() count floats, so both double.
  bool complex_interleaved() const noexcept { return gn && gn->options.complex_conductivity; }
  size_t n_out() const noexcept {
    return gn ? static_cast<size_t>(gn->mesh.n_elems()) * (complex_interleaved() ? 2 : 1)
              : static_cast<size_t>(H.rows());
  }
  size_t n_meas() const noexcept {
    return gn ? protocol.n_meas() * (complex_interleaved() ? 2 : 1)
              : static_cast<size_t>(H.cols());
  }
};

}  // namespace eit::recon
