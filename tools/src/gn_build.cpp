#include "gn_build.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/gn_model.hpp"
#include "eit/recon/model_file.hpp"
#include "model_summary.hpp"

namespace eit::cli {

void GnBuildArgs::add(CLI::App* b) {
  b->add_option("--lambda-decay", lambda_decay, "gn: λ ← max(λ·decay, λ_min) after each iteration")
      ->capture_default_str();
  b->add_option("--lambda-min", lambda_min,
                "gn: floor of λ (default 1e-2; 1e-5, pyEIT's, with --pyeit-compat)");
  b->add_option("--iterations", iterations, "gn: iterations per solve (cold start)")
      ->capture_default_str();
  b->add_option("--tolerance", tolerance, "gn: stop when ‖d‖/‖σ‖ < tolerance")
      ->capture_default_str();
  b->add_option("--start", start,
                "gn: start σ: scalar (--start-value), element (--start-file, one σ per line) or "
                "fitted (best homogeneous σ for each frame, which also sets the problem's scale); "
                "default fitted, scalar with --pyeit-compat or --start-value")
      ->check(CLI::IsMember({"scalar", "element", "fitted"}));
  b->add_option("--start-value", start_value, "gn: scalar start σ (default 1)");
  b->add_option("--start-file", start_file, "gn: start σ per element (text, one value a line)");
  b->add_flag("--pyeit-compat", pyeit_compat,
              "gn: reproduce pyEIT JAC.gn exactly (absolute stop test, last step dropped, "
              "negative σ allowed)");
  b->add_flag("--complex", complex,
              "gn: complex conductivity (σ + iωε) from complex frames, interleaved (re, im): "
              "run and reconstruct take them with --complex interleaved");
  b->add_option("--frame-iterations", frame_iterations,
                "gn: iterations per streamed frame, warm-started from the previous σ")
      ->capture_default_str();
}

recon::GnOptions GnBuildArgs::options(const std::string& prior, const double* p,
                                      const double* lambda) const {
  recon::GnOptions o;
  o.prior = recon::parse_gn_prior(prior);
  if (p) o.p = *p;
  if (lambda) o.lambda0 = *lambda;
  o.lambda_decay = lambda_decay;
  o.lambda_min = std::isnan(lambda_min) ? (pyeit_compat ? 1e-5 : 1e-2) : lambda_min;
  o.max_iterations = iterations;
  o.tolerance = tolerance;
  o.start = recon::parse_gn_start(
      !start.empty() ? start : (pyeit_compat || !std::isnan(start_value) ? "scalar" : "fitted"));
  o.start_value = std::isnan(start_value) ? 1.0 : start_value;
  o.pyeit_compat = pyeit_compat;
  o.frame_iterations = frame_iterations;
  o.complex_conductivity = complex;
  if (o.start == recon::GnOptions::Start::kPerElement) {
    if (start_file.empty()) throw std::invalid_argument("--start element needs --start-file");
    std::ifstream in(start_file);
    if (!in) throw std::invalid_argument(fmt::format("--start-file {}: cannot open", start_file));
    std::vector<double> values;
    for (double x; in >> x;) values.push_back(x);
    o.start_perm =
        Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
  }
  return o;
}

void build_gn_model(const recon::Mesh& mesh, const recon::Protocol& protocol,
                    const recon::ForwardOptions& forward, const recon::GnOptions& options,
                    const std::string& output) {
  const auto t = std::chrono::steady_clock::now();
  recon::Model model = recon::make_gn_model(mesh, protocol, forward, options);
  recon::save_model(output, model);
  fmt::print(
      "gn model    {:9.2f} ms  {} elements, {} measurements → {}\n\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count(),
      mesh.n_elems(), protocol.n_meas(), output);
  print_model_summary(stdout, model, output);
}

}  // namespace eit::cli
