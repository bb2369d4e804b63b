// EIDORS-style MATLAB .mat frame matrices through libmatio: a 2-D numeric variable with one frame
// per column (EIDORS' convention; one per row is accepted when only the row length fits), real or
// complex, any numeric class. IIRC (iirc_data_2006.mat: v_reference, v_rotate, complex) and
// Montreal (montreal_data_1995.mat: zc_* sets, int16) store 16×16 tables, index 16·drive + m,
// with the entries on driven electrodes present. The whole variable is read at set-up.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"

#ifdef EIT_HAVE_MATIO
#include <matio.h>
#endif

namespace eit::acquisition::detail {

#ifdef EIT_HAVE_MATIO
namespace {

struct VarInfo {
  std::string name;
  size_t rows = 0, cols = 0;
  bool numeric = false;
  bool complex = false;
  bool compressed = false;
  size_t element_bytes = 0;
};

// zlib cannot expand data by more than about 1032:1, so a compressed variable larger than this
// many times the file is damaged; an uncompressed one must fit in the file.
constexpr uint64_t kMaxInflation = 1032;
constexpr uint64_t kMaxVariableBytes = uint64_t(4) << 30;

bool is_numeric(matio_classes c) { return c >= MAT_C_DOUBLE && c <= MAT_C_UINT64; }

template <typename T>
void copy_as_double(const void* src, size_t count, double* dst, size_t dst_stride) {
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < count; ++i) dst[i * dst_stride] = static_cast<double>(s[i]);
}

// Bytes per element of a numeric class, 0 for any other.
size_t class_bytes(matio_classes c) {
  switch (c) {
    case MAT_C_DOUBLE:
    case MAT_C_INT64:
    case MAT_C_UINT64:
      return 8;
    case MAT_C_SINGLE:
    case MAT_C_INT32:
    case MAT_C_UINT32:
      return 4;
    case MAT_C_INT16:
    case MAT_C_UINT16:
      return 2;
    case MAT_C_INT8:
    case MAT_C_UINT8:
      return 1;
    default:
      return 0;
  }
}

// Converts `count` elements of class `c` at src into doubles at dst[i·dst_stride].
bool convert(matio_classes c, const void* src, size_t count, double* dst, size_t dst_stride) {
  switch (c) {
    case MAT_C_DOUBLE:
      copy_as_double<double>(src, count, dst, dst_stride);
      return true;
    case MAT_C_SINGLE:
      copy_as_double<float>(src, count, dst, dst_stride);
      return true;
    case MAT_C_INT8:
      copy_as_double<int8_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_UINT8:
      copy_as_double<uint8_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_INT16:
      copy_as_double<int16_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_UINT16:
      copy_as_double<uint16_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_INT32:
      copy_as_double<int32_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_UINT32:
      copy_as_double<uint32_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_INT64:
      copy_as_double<int64_t>(src, count, dst, dst_stride);
      return true;
    case MAT_C_UINT64:
      copy_as_double<uint64_t>(src, count, dst, dst_stride);
      return true;
    default:
      return false;
  }
}

struct MatFile {
  mat_t* mat = nullptr;
  explicit MatFile(const fs::path& p) : mat(Mat_Open(p.c_str(), MAT_ACC_RDONLY)) {}
  ~MatFile() {
    if (mat) Mat_Close(mat);
  }
};
struct MatVar {
  matvar_t* var = nullptr;
  ~MatVar() {
    if (var) Mat_VarFree(var);
  }
};

// libmatio trusts the lengths in element tags and allocates what they claim, so a damaged file
// could ask for gigabytes. Walk the tags of a MATLAB v5 file first and refuse any element longer
// than what encloses it. (Compressed elements are checked at their outer length only; v7.3 files
// are HDF5 and checked by the HDF5 library.)
class V5Walker {
 public:
  V5Walker(const FileHandle& f, const std::string& name) : f_(f), name_(name) {}

  void check_file() {
    uint8_t head[128];
    if (f_.size() < 128 || !f_.read_at(0, head, 128))
      throw std::runtime_error(
          fmt::format("{}: {} bytes, too short for a MATLAB file", name_, f_.size()));
    if (head[126] == 'M' && head[127] == 'I')
      swap_ = true;
    else if (!(head[126] == 'I' && head[127] == 'M'))
      throw std::runtime_error(fmt::format(
          "{}: endian indicator (bytes 126–127) is not 'IM' or 'MI': not a MATLAB v5 file", name_));
    const uint16_t version =
        swap_ ? uint16_t(head[124] << 8 | head[125]) : uint16_t(head[125] << 8 | head[124]);
    if (version == 0x0200) return;  // v7.3: HDF5, which libmatio reads through the HDF5 library
    walk(128, f_.size() - 128, 0);
  }

 private:
  uint32_t u32(const uint8_t* p) const {
    const uint32_t v =
        uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    return swap_ ? __builtin_bswap32(v) : v;
  }

  void walk(uint64_t pos, uint64_t len, int depth) {
    if (depth > 16)
      throw std::runtime_error(fmt::format("{}: elements nested deeper than 16", name_));
    const uint64_t end = pos + len;
    while (pos + 8 <= end) {
      uint8_t tag[8];
      if (!f_.read_at(pos, tag, 8))
        throw std::runtime_error(fmt::format("{}: cannot read the element at byte {}", name_, pos));
      const uint32_t type = u32(tag);
      if ((type >> 16) != 0) {  // small data element: type, size and up to 4 bytes in 8
        if ((type >> 16) > 4)
          throw std::runtime_error(
              fmt::format("{}: small element at byte {} claims {} bytes, at most 4 fit", name_, pos,
                          type >> 16));
        pos += 8;
        continue;
      }
      const uint64_t nbytes = u32(tag + 4);
      if (nbytes > end - pos - 8)
        throw std::runtime_error(
            fmt::format("{}: element at byte {} claims {} bytes, only {} remain in its parent",
                        name_, pos, nbytes, end - pos - 8));
      if (type == 14) walk(pos + 8, nbytes, depth + 1);  // miMATRIX: check its parts too
      const uint64_t padded = type == 15 ? nbytes : (nbytes + 7) / 8 * 8;  // 15 = miCOMPRESSED
      pos += 8 + std::min(padded, end - pos - 8);
    }
  }

  const FileHandle& f_;
  const std::string& name_;
  bool swap_ = false;
};

std::vector<VarInfo> list_variables(mat_t* mat) {
  std::vector<VarInfo> out;
  for (;;) {
    if (out.size() > 100000) break;  // a damaged file cannot make the list grow without end
    MatVar v{Mat_VarReadNextInfo(mat)};
    if (!v.var) break;
    VarInfo i;
    i.name = v.var->name ? v.var->name : "";
    i.numeric = is_numeric(v.var->class_type) && v.var->rank == 2 && !v.var->isLogical;
    i.complex = v.var->isComplex != 0;
    if (v.var->rank == 2 && v.var->dims) {
      i.rows = v.var->dims[0];
      i.cols = v.var->dims[1];
    }
    i.compressed = v.var->compression != MAT_COMPRESSION_NONE;
    i.element_bytes = static_cast<size_t>(std::max(v.var->data_size, 1));
    out.push_back(i);
  }
  return out;
}

std::string describe(const std::vector<VarInfo>& vars) {
  std::string s;
  for (const auto& v : vars)
    s += fmt::format("{}{} ({}×{}{}{})", s.empty() ? "" : ", ", v.name, v.rows, v.cols,
                     v.complex ? " complex" : "", v.numeric ? "" : ", not numeric");
  return s.empty() ? "none" : s;
}

class MatReader final : public RecordingReader {
 public:
  MatReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model) {
    const std::string name = file_label(path);
    {
      const FileHandle file(path);  // a clear error for a missing or unreadable file
      V5Walker(file, name).check_file();
    }
    MatFile f(path);
    if (!f.mat)
      throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file libmatio can read", name));
    const std::vector<VarInfo> vars = list_variables(f.mat);

    const size_t n = static_cast<size_t>(model.n_electrodes);
    std::vector<size_t> fits = {model.n_meas(), n * n};
    if (!o.layout.empty()) fits.push_back(parse_layout(o.layout, model).n_measurements());
    auto fitting = [&](size_t len) {
      return std::find(fits.begin(), fits.end(), len) != fits.end();
    };

    const VarInfo* chosen = nullptr;
    if (!o.variable.empty()) {
      for (const auto& v : vars)
        if (v.name == o.variable) chosen = &v;
      if (!chosen)
        throw std::invalid_argument(
            fmt::format("{}: no variable '{}'; it holds {}", name, o.variable, describe(vars)));
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
                        name, model.n_meas(), n * n, describe(vars)));
    }
    // Frames are columns (EIDORS), unless only the row length fits.
    const bool by_row = !fitting(chosen->rows) && fitting(chosen->cols);
    const size_t values = by_row ? chosen->cols : chosen->rows;
    const size_t frames = by_row ? chosen->rows : chosen->cols;
    const bool complex = chosen->complex;
    // The size the header claims must be one the file can hold before anything is allocated.
    const uint64_t file_bytes = fs::file_size(path);
    const uint64_t limit =
        std::min(kMaxVariableBytes, chosen->compressed ? kMaxInflation * file_bytes : file_bytes);
    const unsigned __int128 claimed = static_cast<unsigned __int128>(chosen->rows) * chosen->cols *
                                      chosen->element_bytes * (complex ? 2 : 1);
    if (claimed > limit)
      throw std::runtime_error(
          fmt::format("{}: variable '{}' claims {}×{} values, more than the {}-byte file can hold",
                      name, chosen->name, chosen->rows, chosen->cols, file_bytes));

    info_.path = path;
    info_.format = fmt::format("MATLAB .mat variable '{}'", chosen->name);
    info_.bytes_total = fs::file_size(path);
    info_.raw_values = values;
    info_.n_frames = frames;
    variable_ = chosen->name;
    set_map(generic_layout(path, values, complex, o, model), model);

    MatVar var{Mat_VarRead(f.mat, chosen->name.c_str())};
    if (!var.var || !var.var->data)
      throw std::runtime_error(fmt::format("{}: cannot read variable '{}'", name, chosen->name));
    const size_t scalars = complex ? 2 * values : values;
    const size_t count = chosen->rows * chosen->cols;
    // What libmatio read must be what the header promised, or a damaged file would have us read
    // past its buffer.
    const size_t element = class_bytes(var.var->class_type);
    if (var.var->rank != 2 || var.var->dims[0] != chosen->rows ||
        var.var->dims[1] != chosen->cols || element == 0 || size_t(var.var->data_size) != element ||
        var.var->nbytes < count * element || (var.var->isComplex != 0) != complex)
      throw std::runtime_error(fmt::format(
          "{}: variable '{}' is damaged: its data ({} bytes) does not match {}×{} values", name,
          chosen->name, var.var->nbytes, chosen->rows, chosen->cols));
    data_.assign(frames * scalars, 0.0);
    // Element (r, c) of the column-major matrix is at r + c·rows; it lands at
    // frame·scalars + value·(complex ? 2 : 1) (+1 for the imaginary part).
    auto scatter = [&](const void* src, size_t part) {
      std::vector<double> tmp(count);
      if (!convert(var.var->class_type, src, count, tmp.data(), 1))
        throw std::runtime_error(
            fmt::format("{}: variable '{}' has an unsupported class", name, chosen->name));
      const size_t step = complex ? 2 : 1;
      for (size_t c = 0; c < chosen->cols; ++c)
        for (size_t r = 0; r < chosen->rows; ++r) {
          const size_t frame = by_row ? r : c, value = by_row ? c : r;
          data_[frame * scalars + value * step + part] = tmp[r + c * chosen->rows];
        }
    };
    if (complex) {
      const auto* split = static_cast<const mat_complex_split_t*>(var.var->data);
      scatter(split->Re, 0);
      scatter(split->Im, 1);
    } else {
      scatter(var.var->data, 0);
    }
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
