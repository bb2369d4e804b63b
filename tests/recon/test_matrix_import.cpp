#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/eidors_unpack.hpp"
#include "eit/recon/matrix_import.hpp"
#include "adjacent_index.hpp"
#include "test_data.hpp"

using namespace eit::recon;
using eit::test::adjacent_meas_index;
namespace fs = std::filesystem;

namespace {

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("eit_imp_{}_{}", ::getpid(), name);
}

// Writes a version 1.0 .npy file with the given header dict and raw bytes.
fs::path write_npy(const std::string& name, const std::string& dict, const void* data,
                   size_t bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const fs::path p = temp_path(name);
  std::ofstream out(p, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  return p;
}

// An import onto 40 measurements (8 electrodes) and a 2 × 3 grid, every pixel inside: H is 6 × 40.
MatrixImportOptions small_import() {
  MatrixImportOptions o;
  o.protocol = {.n_electrodes = 8};
  GridGeometry g;
  g.nx = 2;
  g.ny = 3;
  g.dx = g.dy = 1;
  g.mask.assign(6, 0);
  o.geometry = g;
  return o;
}

// Polar angle (degrees) of the image's dominant blob: centroid of |value|^4 over the pixels that
// share the sign of the extreme pixel, inside the disc.
double target_angle(const Eigen::VectorXd& img, const GridGeometry& g) {
  Eigen::Index k = 0;
  for (Eigen::Index i = 0; i < img.size(); ++i)
    if (!g.mask[i] && std::abs(img[i]) > std::abs(img[k])) k = i;
  double sx = 0, sy = 0;
  for (Eigen::Index i = 0; i < img.size(); ++i) {
    if (g.mask[i] || img[i] * img[k] <= 0) continue;
    const double w = std::pow(std::abs(img[i]), 4);
    sx += w * (g.x0 + static_cast<double>(i % g.nx) * g.dx);
    sy += w * (g.y0 + static_cast<double>(i / g.nx) * g.dy);
  }
  return std::atan2(sy, sx) * 180 / std::numbers::pi;
}

double wrap180(double a) { return std::remainder(a, 360.0); }

// H·v with plain loops (GCC 12 warns inside Eigen's AVX-512 GEMV kernels under -march=native).
Eigen::VectorXd apply(const Eigen::MatrixXd& H, const Eigen::VectorXd& v) {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(H.rows());
  for (Eigen::Index j = 0; j < H.cols(); ++j)
    for (Eigen::Index i = 0; i < H.rows(); ++i) out[i] += H(i, j) * v[j];
  return out;
}

}  // namespace

TEST_CASE(".npy reader handles dtypes, byte order and Fortran order") {
  const double d[6] = {1, 2, 3, 4, 5, 6};
  auto f = write_npy("c.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d,
                     sizeof d);
  DenseArray a = read_npy(f);
  CHECK(a.shape == std::vector<size_t>{2, 3});
  CHECK(a.real == std::vector<double>{1, 2, 3, 4, 5, 6});
  // Fortran order: the same bytes are the columns.
  const float ff[6] = {1, 2, 3, 4, 5, 6};
  f = write_npy("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", ff,
                sizeof ff);
  a = read_npy(f);
  CHECK(a.real == std::vector<double>{1, 3, 5, 2, 4, 6});
  // Big-endian int32.
  const unsigned char be[8] = {0, 0, 0, 7, 0xff, 0xff, 0xff, 0xfe};
  f = write_npy("be.npy", "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be, 8);
  a = read_npy(f);
  CHECK(a.real == std::vector<double>{7, -2});
  f = write_npy("short.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4), }", d,
                sizeof d);
  CHECK_THROWS_WITH_AS(read_npy(f), doctest::Contains("data truncated"), std::runtime_error);
  f = write_npy("str.npy", "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", d, 12);
  CHECK_THROWS_WITH_AS(read_npy(f), doctest::Contains("dtype '<U3'"), std::runtime_error);
  std::ofstream(f) << "plain text";
  CHECK_THROWS_WITH_AS(read_npy(f), doctest::Contains("not a .npy file"), std::runtime_error);
  fs::remove(f);
}

TEST_CASE("imported .npy matrix stored measurements × outputs is transposed, wrong shape named") {
  MatrixImportOptions o = small_import();
  std::vector<double> m(40 * 6);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<double>(i);
  o.file = write_npy("t.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (40, 6), }",
                     m.data(), m.size() * 8);
  o.scale = -1;
  const Model model = import_matrix(o);
  REQUIRE(model.H.rows() == 6);
  REQUIRE(model.H.cols() == 40);
  CHECK(model.H(1, 2) == -static_cast<float>(2 * 6 + 1));
  CHECK(model.parameters_json.find("\"transposed\":true") != std::string::npos);
  o.geometry = centred_disc_grid(4);
  CHECK_THROWS_WITH_AS(import_matrix(o), doctest::Contains("matrix is 40 × 6, expected 16 × 40"),
                       std::runtime_error);
  fs::remove(o.file);
}

TEST_CASE(
    "an imported matrix holding NaN or infinity (or overflowing float) is refused by position") {
  MatrixImportOptions o = small_import();
  std::vector<double> m(6 * 40, 0.5);
  m[1 * 40 + 7] = std::nan("");
  o.file = write_npy("nan.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (6, 40), }",
                     m.data(), m.size() * 8);
  CHECK_THROWS_WITH_AS(import_matrix(o), doctest::Contains("H[1, 7] is nan"), std::runtime_error);
  m[1 * 40 + 7] = 1e300;  // finite double, infinite as float
  o.file = write_npy("nan.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (6, 40), }",
                     m.data(), m.size() * 8);
  CHECK_THROWS_WITH_AS(import_matrix(o), doctest::Contains("H[1, 7] is inf"), std::runtime_error);
  fs::remove(o.file);
}

TEST_CASE("EIDORS GREIT v1.0 unpacks to 1024 × 208 with the 16-fold symmetry") {
  const auto file = eit::test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  if (!file) return;
  if (!mat_reader_available()) {
    eit::test::report_skip("EIDORS unpack", "built without libmatio");
    return;
  }
  const DenseArray packed = read_mat_variable(*file);
  REQUIRE(packed.shape == std::vector<size_t>{104, 120});
  CHECK_THROWS_WITH_AS(read_mat_variable(*file, "nope"), doctest::Contains("no variable 'nope'"),
                       std::runtime_error);
  MatrixImportOptions o;
  o.file = *file;
  o.geometry = centred_disc_grid(32);
  // The packed columns are the adjacent std protocol: another one of 208 measurements would
  // relabel them.
  MatrixImportOptions other = o;
  other.protocol.order = MeasurementOrder::kRotateMeas;
  CHECK_THROWS_WITH_AS(import_matrix(other), doctest::Contains("rotate_meas order"),
                       std::invalid_argument);
  other = o;
  other.protocol.drive_distance = 15;
  other.protocol.measure_step = 15;
  CHECK_THROWS_WITH_AS(import_matrix(other), doctest::Contains("drive distance 15"),
                       std::invalid_argument);
  const Model model = import_matrix(o);
  REQUIRE(model.H.rows() == 1024);
  REQUIRE(model.H.cols() == 208);
  CHECK(model.parameters_json.find("\"unpacked_eidors_symmetry\":true") != std::string::npos);
  const Eigen::MatrixXd H = model.H.cast<double>();
  const auto& g = std::get<GridGeometry>(model.geometry);

  // A single measurement (drive 0→1, pair 2–3) images near electrodes 0..3, which sit at polar
  // angles 180°..112.5° (pyEIT placement): orientation check.
  const double a0 = target_angle(H.col(adjacent_meas_index(0, 2)), g);
  MESSAGE("drive 0, pair 2-3 images at ", a0, " degrees");
  CHECK(a0 > 125);
  CHECK(a0 < 165);

  // Rotating the input by one electrode turns the image 22.5° clockwise; by four, exactly 90°.
  Eigen::VectorXd dv = Eigen::VectorXd::Zero(208);
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i)
      if (adjacent_meas_index(j, i) >= 0)
        dv[adjacent_meas_index(j, i)] = std::exp(-std::pow(i - 5.0, 2) / 4) * (j < 3);
  auto rotate = [](const Eigen::VectorXd& v, int by) {
    Eigen::VectorXd out(208);
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 16; ++i)
        if (adjacent_meas_index(j, i) >= 0)
          out[adjacent_meas_index((j + by) % 16, (i + by) % 16)] = v[adjacent_meas_index(j, i)];
    return out;
  };
  const Eigen::VectorXd img = apply(H, dv);
  for (int by = 1; by <= 3; ++by) {
    const double turn = wrap180(target_angle(apply(H, rotate(dv, by)), g) - target_angle(img, g));
    MESSAGE("rotated by ", by, " electrodes: image turned ", turn, " degrees");
    CHECK(turn == doctest::Approx(-22.5 * by).epsilon(0.1));
  }
  const Eigen::VectorXd img4 = apply(H, rotate(dv, 4));
  double worst = 0, peak = 0;
  for (double x : img) peak = std::max(peak, std::abs(x));
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c)  // clockwise quarter turn: g(x, y) = f(−y, x)
      worst = std::max(worst, std::abs(img4[r * 32 + c] - img[c * 32 + (31 - r)]));
  CHECK(worst <= 1e-5 * peak);
}

TEST_CASE(
    "imported GREIT v1.0 matrix applied to iirc_data_2006.mat gives a target turning ~11° per "
    "frame") {
  const auto greit = eit::test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!greit || !iirc) return;
  if (!mat_reader_available()) {
    eit::test::report_skip("IIRC rotation", "built without libmatio");
    return;
  }
  MatrixImportOptions o;
  o.file = *greit;
  o.geometry = centred_disc_grid(32);
  const Model model = import_matrix(o);
  const auto& g = std::get<GridGeometry>(model.geometry);
  const Eigen::MatrixXd H = model.H.cast<double>();
  // Frames: 256 complex values, index 16·drive + measuring electrode; keep the 208 not touching
  // a driven electrode, in protocol order; real part.
  const DenseArray ref = read_mat_variable(*iirc, "v_reference");
  const DenseArray rot = read_mat_variable(*iirc, "v_rotate");
  REQUIRE(rot.shape == std::vector<size_t>{256, 100});
  const size_t n_frames = rot.shape[1];
  std::vector<double> angles;
  for (size_t f = 0; f < n_frames; ++f) {
    Eigen::VectorXd dv(208);
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 16; ++i)
        if (const int q = adjacent_meas_index(j, i); q >= 0)
          dv[q] = rot.real[(16 * j + i) * n_frames + f] - ref.real[16 * j + i];
    const Eigen::VectorXd img = apply(H, dv);
    angles.push_back(target_angle(img, g));
  }
  double sum = 0;
  int forward = 0;
  for (size_t f = 1; f < angles.size(); ++f) {
    const double step = wrap180(angles[f] - angles[f - 1]);
    sum += step;
    forward += step < 0;
  }
  const double mean = sum / static_cast<double>(angles.size() - 1);
  MESSAGE("target turns ", mean, " degrees per frame on average; ", forward, " of ",
          angles.size() - 1, " steps clockwise");
  CHECK(std::abs(mean) > 9.0);
  CHECK(std::abs(mean) < 13.0);
  CHECK(forward >= 90);
}
