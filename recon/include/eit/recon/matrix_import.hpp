#pragma once
// A reconstruction matrix made elsewhere (NumPy .npy, MATLAB .mat; e.g. EIDORS' GREIT v1.0)
// turned into a Model, with the protocol and output geometry the caller states.
// Set-up only: allocates and throws (std::runtime_error / std::invalid_argument naming the file,
// the shape found and the shape expected).
#include <filesystem>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::recon {

struct MatrixImportOptions {
  std::filesystem::path file;  // .npy or .mat
  std::string variable;        // .mat variable; empty = the file's only numeric variable
  // EIDORS symmetry packing (eidors_unpack.hpp): kAuto unpacks a 104 × 120 matrix.
  enum class Unpack { kAuto, kYes, kNo } unpack = Unpack::kAuto;
  ProtocolOptions protocol;  // the measurement order of the matrix's columns
  std::variant<MeshGeometry, GridGeometry> geometry = GridGeometry{};  // what its rows are
  bool normalize = false;  // images from (v − v_ref)/|v_ref|
  double scale = 1.0;      // H = scale · matrix (−1 turns pyEIT's H into image = H·dv)
};

// The matrix must be n_out × n_meas, or n_meas × n_out (then it is transposed). The Model's
// algorithm is "imported"; its parameters record the source file name, variable, unpacking and
// scale.
Model import_matrix(const MatrixImportOptions& options);

// An n × n grid of pixel centres covering [−r, r]² (x0 = −r + r/n, dx = 2r/n), masked outside
// the disc of radius r: the grid of EIDORS' 32 × 32 GREIT images.
GridGeometry centred_disc_grid(int n, double radius = 1.0);

}  // namespace eit::recon
