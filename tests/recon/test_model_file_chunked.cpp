// Large Model files: H of 1 MiB or more is stored in chunks of whole rows, read back bit for bit
// with the same id; its statistics are stored beside it; read_model_header gives everything but
// H's values without reading them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"
#include "eit/recon/model_header.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

fs::path temp_h5(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("eit_chunked_{}_{}.h5", ::getpid(), name);
}

// A GREIT-shaped model on an n × n grid, 16 electrodes (208 measurements), random H.
Model grid_model(int n) {
  Model m;
  m.algorithm = "greit";
  m.parameters_json = R"({"n": 128})";
  m.protocol = make_protocol({});
  GridGeometry g;
  g.nx = g.ny = n;
  g.x0 = g.y0 = -1;
  g.dx = g.dy = 2.0 / n;
  g.mask.assign(static_cast<size_t>(n) * n, 0);
  g.mask[0] = 1;
  m.geometry = g;
  m.H = MatrixRowMajorF::Random(n * n, static_cast<Eigen::Index>(m.protocol.n_meas()));
  m.H.row(5).setZero();
  m.v_ref = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(m.protocol.n_meas()), 0.5, 1.5);
  return m;
}

}  // namespace

TEST_CASE(
    "save_model stores a large H in chunks of whole rows and load_model reads it bit for bit") {
  Model m = grid_model(128);  // 16384 × 208 float32 = 13.0 MiB
  const fs::path path = temp_h5("large");
  save_model(path, m);
  const ModelHeader h = read_model_header(path);
  // 4 MiB chunks of 832-byte rows: 5041 rows each.
  CHECK(h.h_layout == "chunked 5041 × 208");
  CHECK(h.h_rows == 16384);
  CHECK(h.h_cols == 208);
  const Model back = load_model(path);
  CHECK(back.id == m.id);
  REQUIRE(back.H.rows() == m.H.rows());
  REQUIRE(back.H.cols() == m.H.cols());
  CHECK(std::memcmp(back.H.data(), m.H.data(), sizeof(float) * m.H.size()) == 0);
  fs::remove(path);
}

TEST_CASE("a small H stays contiguous") {
  Model m = grid_model(16);  // 256 × 208 float32 = 208 KiB
  const fs::path path = temp_h5("small");
  save_model(path, m);
  CHECK(read_model_header(path).h_layout == "contiguous");
  CHECK(load_model(path).id == m.id);
  fs::remove(path);
}

TEST_CASE("read_model_header gives protocol, geometry, stored id and H's statistics without H") {
  Model m = grid_model(64);
  const fs::path path = temp_h5("header");
  save_model(path, m);
  const ModelHeader h = read_model_header(path);
  CHECK(h.model.H.size() == 0);
  CHECK(h.stored_id == m.id);
  CHECK(h.model.algorithm == "greit");
  CHECK(h.model.parameters_json == m.parameters_json);
  CHECK(h.model.protocol.n_meas() == 208);
  CHECK(h.model.v_ref.isApprox(m.v_ref));
  const auto* g = std::get_if<GridGeometry>(&h.model.geometry);
  REQUIRE(g != nullptr);
  CHECK(g->nx == 64);
  CHECK(g->mask == std::get<GridGeometry>(m.geometry).mask);
  REQUIRE(h.h_stats.has_value());
  const MatrixStats expected = matrix_stats(m.H);
  CHECK(h.h_stats->min == expected.min);
  CHECK(h.h_stats->max == expected.max);
  CHECK(h.h_stats->frobenius == doctest::Approx(expected.frobenius).epsilon(1e-12));
  CHECK(h.h_stats->zero_rows == 1);
  CHECK(h.h_bytes() == size_t{4096} * 208 * 4);
  fs::remove(path);
}

TEST_CASE("matrix_stats counts zero rows and takes extremes and norms over all of H") {
  MatrixRowMajorF H(3, 2);
  H << 1, -2, 0, 0, 3, 0.5f;
  const MatrixStats s = matrix_stats(H);
  CHECK(s.min == -2);
  CHECK(s.max == 3);
  CHECK(s.zero_rows == 1);
  CHECK(s.mean_abs == doctest::Approx(6.5 / 6));
  CHECK(s.frobenius == doctest::Approx(std::sqrt(1 + 4 + 9 + 0.25)));
}
