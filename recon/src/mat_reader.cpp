// recon's read_mat_variable: one 2-D numeric variable of a .mat file, through the shared hardened
// reader (mat_file.hpp), as a row-major DenseArray.
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/mat_file.hpp"

namespace eit::recon {

DenseArray read_mat_variable(const std::filesystem::path& path, const std::string& name) {
  const std::string file = path.string();
  const std::vector<MatVariableInfo> vars = list_mat_variables(path, file);
  const MatVariableInfo* chosen = nullptr;
  if (name.empty()) {
    size_t numeric = 0;
    for (const auto& v : vars)
      if (v.numeric) {
        chosen = &v;
        ++numeric;
      }
    if (numeric != 1)
      throw std::runtime_error(
          fmt::format("{}: {} numeric variables ({}): name the one to read with --variable", file,
                      numeric, describe_mat_variables(vars)));
  } else {
    for (const auto& v : vars)
      if (v.name == name) chosen = &v;
    if (!chosen)
      throw std::runtime_error(fmt::format("{}: no variable '{}'; it holds {}", file, name,
                                           describe_mat_variables(vars)));
    if (chosen->rank != 2)
      throw std::runtime_error(
          fmt::format("{}: variable '{}' has {} dimensions, expected 2", file, name, chosen->rank));
    if (!chosen->numeric)
      throw std::runtime_error(
          fmt::format("{}: variable '{}' is not a numeric array", file, chosen->name));
  }
  const MatMatrix m = read_mat_matrix(path, *chosen, file);
  DenseArray out;
  out.shape = {m.rows, m.cols};
  out.real.resize(m.re.size());
  if (!m.im.empty()) out.imag.resize(m.im.size());
  // MATLAB stores column-major; DenseArray is row-major. An empty matrix may still claim four
  // billion rows (× 0 columns): nothing to move, and the loop must not walk them.
  if (m.re.empty()) return out;
  for (size_t i = 0; i < m.rows; ++i)
    for (size_t j = 0; j < m.cols; ++j) {
      out.real[i * m.cols + j] = m.re[j * m.rows + i];
      if (!m.im.empty()) out.imag[i * m.cols + j] = m.im[j * m.rows + i];
    }
  return out;
}

}  // namespace eit::recon
