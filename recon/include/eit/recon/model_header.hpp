#pragma once
// What a Model file says about itself without reading H, for `eitstream model info` on models of
// up to 200,000 × 928 (0.7 GB): the protocol, geometry, algorithm and parameters as load_model
// reads them, H's shape, HDF5 layout and statistics (attributes save_model writes on /H; files
// saved before have none), and the stored model_id — not checked against the content, which
// needs all of H (load_model does that).
//
// Set-up only: allocates, reads the file, throws std::runtime_error naming the file and dataset
// (as load_model). HDF5 is not assumed thread-safe: one thread at a time.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::recon {

// Summary of H: extremes, mean |value|, Frobenius norm and the number of all-zero rows.
struct MatrixStats {
  double min = 0, max = 0, mean_abs = 0, frobenius = 0;
  int64_t zero_rows = 0;
};
MatrixStats matrix_stats(const MatrixRowMajorF& H);

struct ModelHeader {
  Model model;                         // everything but H (left empty); gn models are complete
  int64_t h_rows = 0, h_cols = 0;      // H's shape (gn: 0 × n_meas)
  std::optional<MatrixStats> h_stats;  // stored at save; none in older files and for gn
  std::string stored_id;               // the file's model_id ("" when none), unverified
  std::string h_layout;                // "contiguous", "chunked 1129 × 928", … ("" for gn)
  size_t h_bytes() const noexcept { return static_cast<size_t>(h_rows * h_cols) * sizeof(float); }
};

ModelHeader read_model_header(const std::filesystem::path& path);

}  // namespace eit::recon
