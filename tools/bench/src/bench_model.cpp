#include "eit/bench/bench_model.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"

namespace eit::bench {

std::pair<size_t, size_t> parse_matrix_size(const std::string& text) {
  const auto x = text.find_first_of("xX×");
  size_t rows = 0, cols = 0;
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    size_t used = 0;
    rows = std::stoul(text.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("rows");
    const std::string rest = text.substr(text.find_first_of("0123456789", x));
    cols = std::stoul(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("cols");
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format(
        "--size '{}': expected ROWSxCOLS, e.g. 1024x208 (image values × measurements)", text));
  }
  if (rows == 0 || cols == 0)
    throw std::invalid_argument(fmt::format("--size '{}': both dimensions must be ≥ 1", text));
  return {rows, cols};
}

namespace {

recon::Protocol protocol_with(size_t n_meas) {
  for (int n = 4; n <= 256; ++n) {
    recon::ProtocolOptions o;
    o.n_electrodes = n;
    if (static_cast<size_t>(n) * static_cast<size_t>(n - 3) == n_meas)
      return recon::make_protocol(o);
    o.measure_on_driven = true;
    if (static_cast<size_t>(n) * static_cast<size_t>(n) == n_meas) return recon::make_protocol(o);
  }
  throw std::invalid_argument(fmt::format(
      "--size: {} measurements fit no electrode protocol; expected n·(n−3) (adjacent, e.g. 208 "
      "for 16 electrodes, 928 for 32) or n·n (all pairs, e.g. 256)",
      n_meas));
}

}  // namespace

recon::Model make_random_model(size_t n_out, size_t n_meas, uint64_t seed) {
  recon::Model m;
  m.algorithm = "random";
  m.parameters_json =
      fmt::format(R"({{"n_out": {}, "n_meas": {}, "seed": {}}})", n_out, n_meas, seed);
  m.protocol = protocol_with(n_meas);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(n_meas)));
  m.H.resize(static_cast<Eigen::Index>(n_out), static_cast<Eigen::Index>(n_meas));
  for (Eigen::Index i = 0; i < m.H.size(); ++i) m.H.data()[i] = normal(rng);
  std::uniform_real_distribution<double> level(0.5, 1.5);
  m.v_ref.resize(static_cast<Eigen::Index>(n_meas));
  for (Eigen::Index i = 0; i < m.v_ref.size(); ++i) m.v_ref[i] = level(rng);
  const auto side = static_cast<size_t>(std::lround(std::sqrt(static_cast<double>(n_out))));
  if (side * side == n_out) {
    recon::GridGeometry g;
    g.nx = g.ny = static_cast<int>(side);
    g.x0 = g.y0 = -1.0;
    g.dx = g.dy = 2.0 / static_cast<double>(side);
    g.mask.assign(n_out, 0);
    m.geometry = g;
  } else {
    m.geometry = recon::MeshGeometry{};  // per-value output; no mesh to describe
  }
  m.id = recon::model_content_hash(m);
  return m;
}

acquisition::PhantomTable make_frame_table(const recon::Model& model, int rows, uint64_t seed) {
  if (rows < 2) throw std::invalid_argument(fmt::format("frame table: {} rows, need ≥ 2", rows));
  const auto n = static_cast<Eigen::Index>(model.n_meas());
  acquisition::PhantomTable t;
  t.homogeneous = model.v_ref.size() == n ? model.v_ref : Eigen::VectorXd::Ones(n);
  t.frames.resize(rows, n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wobble(-0.01, 0.01);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < n; ++c) t.frames(r, c) = t.homogeneous[c] * (1.0 + wobble(rng));
  return t;
}

}  // namespace eit::bench
