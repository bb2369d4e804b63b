#pragma once
// Settings of Gauss–Newton absolute imaging (gauss_newton.hpp), as stored in a "gn" Model.
// Plain data; no allocation beyond start_perm.
#include <string_view>

#include <Eigen/Core>

namespace eit::recon {

struct GnOptions {
  enum class Prior { kKotre, kTikhonov, kLm, kNoser, kLaplacian };
  enum class Start { kScalar, kPerElement, kFitted };
  Prior prior = Prior::kKotre;
  double p = 0.25;  // kotre exponent
  double lambda0 = 1.0;
  double lambda_decay = 0.1;
  double lambda_min = 1e-5;
  int max_iterations = 20;
  double tolerance = 1e-4;
  Start start = Start::kScalar;
  double start_value = 1.0;    // kScalar
  Eigen::VectorXd start_perm;  // kPerElement (n_elems, all > 0)
  bool pyeit_compat = false;
  int frame_iterations = 3;  // streaming: iterations per frame, warm-started from the last σ
  // Complex conductivity (admittivity σ + iωε per element) from complex frames: the model's
  // frames and images are then interleaved (re, im) pairs (GnReconstructor; docs/formats.md).
  bool complex_conductivity = false;
  // CPU threads for the normal matrix and its Cholesky (std::thread bands; 0 = every core the
  // machine has). A run-time setting: not stored in the Model file (loads as 0).
  int threads = 0;
};

std::string_view to_string(GnOptions::Start start) noexcept;
GnOptions::Start parse_gn_start(std::string_view text);  // scalar|element|fitted
// Throws std::invalid_argument naming the field when an option is out of range.
void validate_gn_options(const GnOptions& options, int n_elems);

std::string_view to_string(GnOptions::Prior prior) noexcept;
GnOptions::Prior parse_gn_prior(std::string_view text);  // kotre|tikhonov|dgn|lm|noser|laplacian
std::string_view to_string(GnOptions::Start start) noexcept;
GnOptions::Start parse_gn_start(std::string_view text);  // scalar|element|fitted
// Throws std::invalid_argument naming the field when an option is out of range.
void validate_gn_options(const GnOptions& options, int n_elems);

}  // namespace eit::recon
