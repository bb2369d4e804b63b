#pragma once
// Test helpers: read pyEIT's CSV exports (no header, %.17g, "nan") into Eigen matrices and compare
// with a relative Frobenius error.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

namespace eit::test {

// A file ending in .gz is read through `gzip -dc`.
inline Eigen::MatrixXd read_csv_matrix(const std::filesystem::path& path) {
  std::stringstream in;
  if (path.extension() == ".gz") {
    if (!std::filesystem::exists(path))
      throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
    FILE* pipe = ::popen(fmt::format("gzip -dc '{}'", path.string()).c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error(fmt::format("{}: cannot run gzip", path.string()));
    char buffer[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) in.write(buffer, n);
    if (::pclose(pipe) != 0) throw std::runtime_error(fmt::format("{}: gzip failed", path.string()));
  } else {
    std::ifstream file(path);
    if (!file) throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
    in << file.rdbuf();
  }
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<double> row;
    size_t start = 0;
    while (start <= line.size()) {
      const size_t end = std::min(line.find(',', start), line.size());
      row.push_back(std::stod(line.substr(start, end - start)));
      start = end + 1;
    }
    rows.push_back(std::move(row));
  }
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()),
                    rows.empty() ? 0 : static_cast<Eigen::Index>(rows[0].size()));
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
  return m;
}

inline Eigen::VectorXd read_csv_vector(const std::filesystem::path& path) {
  const Eigen::MatrixXd m = read_csv_matrix(path);
  return Eigen::Map<const Eigen::VectorXd>(m.data(), m.size());
}

// ‖a − b‖_F / ‖b‖_F; shapes must match (else +inf, so the CHECK fails loudly).
inline double rel_fro_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return std::numeric_limits<double>::infinity();
  // Plain loops: GCC 12 warns (falsely) on Eigen's AVX-512 reductions here.
  double diff = 0, ref = 0;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      diff += (a(i, j) - b(i, j)) * (a(i, j) - b(i, j));
      ref += b(i, j) * b(i, j);
    }
  return std::sqrt(diff / ref);
}

}  // namespace eit::test
