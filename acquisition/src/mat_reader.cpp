// EIDORS-style MATLAB .mat frame matrices through libmatio: a 2-D numeric variable with one frame
// per column (EIDORS' convention; one per row is accepted when only the row length fits), real or
// complex, any numeric class. IIRC (iirc_data_2006.mat: v_reference, v_rotate, complex) and
// Montreal (montreal_data_1995.mat: zc_* sets, int16) store 16×16 tables, index 16·drive + m,
// with the entries on driven electrodes present. The whole variable is read at set-up, through
// recon's hardened .mat reader (mat_file.hpp), shared with recon::read_mat_variable.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mat_file.hpp"
#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {

#ifdef EIT_HAVE_MATIO
namespace {

class MatReader final : public RecordingReader {
 public:
  MatReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model) {
    const std::string name = file_label(path);
    {
      const FileHandle file(path);  // a clear error for a missing or unreadable file
    }
    // recon's hardened reader: tag walk before libmatio, size checks before allocation.
    const std::vector<recon::MatVariableInfo> vars = recon::list_mat_variables(path, name);
    const size_t n = static_cast<size_t>(model.n_electrodes);
    std::vector<size_t> fits = {model.n_meas(), n * n};
    if (!o.layout.empty()) fits.push_back(parse_layout(o.layout, model).n_measurements());
    auto fitting = [&](size_t len) {
      return std::find(fits.begin(), fits.end(), len) != fits.end();
    };

    const recon::MatVariableInfo* chosen = nullptr;
    if (!o.variable.empty()) {
      for (const auto& v : vars)
        if (v.name == o.variable) chosen = &v;
      if (!chosen)
        throw std::invalid_argument(fmt::format("{}: no variable '{}'; it holds {}", name,
                                                o.variable, recon::describe_mat_variables(vars)));
      if (!chosen->numeric)
        throw std::invalid_argument(
            fmt::format("{}: variable '{}' is not a 2-D numeric matrix", name, o.variable));
    } else {
      for (const auto& v : vars) {
        if (!v.numeric || !(fitting(v.rows) || fitting(v.cols))) continue;
        if (!chosen || v.rows * v.cols > chosen->rows * chosen->cols) chosen = &v;
      }
      if (!chosen)
        throw std::invalid_argument(
            fmt::format("{}: no 2-D numeric variable with {} or {} values per frame; it holds {}",
                        name, model.n_meas(), n * n, recon::describe_mat_variables(vars)));
    }
    // Frames are columns (EIDORS), unless only the row length fits.
    const bool by_row = !fitting(chosen->rows) && fitting(chosen->cols);
    const size_t values = by_row ? chosen->cols : chosen->rows;
    const size_t frames = by_row ? chosen->rows : chosen->cols;
    const bool complex = chosen->complex;
    info_.path = path;
    info_.format = fmt::format("MATLAB .mat variable '{}'", chosen->name);
    info_.bytes_total = fs::file_size(path);
    info_.raw_values = values;
    info_.n_frames = frames;
    variable_ = chosen->name;
    set_map(generic_layout(path, values, complex, o, model), model);

    const recon::MatMatrix m = recon::read_mat_matrix(path, *chosen, name);
    const size_t scalars = complex ? 2 * values : values;
    data_.assign(frames * scalars, 0.0);
    // Element (r, c) of the column-major matrix is at r + c·rows; it lands at
    // frame·scalars + value·(complex ? 2 : 1) (+1 for the imaginary part).
    auto scatter = [&](const std::vector<double>& src, size_t part) {
      const size_t step = complex ? 2 : 1;
      for (size_t c = 0; c < m.cols; ++c)
        for (size_t r = 0; r < m.rows; ++r) {
          const size_t frame = by_row ? r : c, value = by_row ? c : r;
          data_[frame * scalars + value * step + part] = src[r + c * m.rows];
        }
    };
    scatter(m.re, 0);
    if (complex) scatter(m.im, 1);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    const size_t scalars = raw.size();
    std::memcpy(raw.data(), data_.data() + i * scalars, scalars * sizeof(double));
    return true;
  }

 private:
  std::string variable_;
  std::vector<double> data_;
};

}  // namespace

ReaderPtr open_mat(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m) {
  return std::make_unique<MatReader>(path, o, m);
}

#else

ReaderPtr open_mat(const fs::path& path, const RecordingOptions&, const recon::Protocol&) {
  throw std::runtime_error(
      fmt::format("{}: this eitstream was built without libmatio, so .mat files cannot be read "
                  "(install libmatio-dev and reconfigure)",
                  file_label(path)));
}

#endif

}  // namespace eit::acquisition::detail
