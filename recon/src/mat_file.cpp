// The hardened .mat reader (contract in mat_file.hpp).
#include "eit/recon/mat_file.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#ifdef EIT_HAVE_MATIO
#include <matio.h>

#include "mat_v5_check.hpp"
#endif

namespace eit::recon {

std::string describe_mat_variables(const std::vector<MatVariableInfo>& vars) {
  std::string s;
  for (const auto& v : vars)
    s += fmt::format("{}{} ({}×{}{}{})", s.empty() ? "" : ", ", v.name, v.rows, v.cols,
                     v.complex ? " complex" : "", v.numeric ? "" : ", not numeric");
  return s.empty() ? "none" : s;
}

#ifdef EIT_HAVE_MATIO
namespace {

bool is_numeric(matio_classes c) { return c >= MAT_C_DOUBLE && c <= MAT_C_UINT64; }

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

template <typename T>
void copy_as_double(const void* src, size_t count, double* dst) {
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < count; ++i) dst[i] = static_cast<double>(s[i]);
}

bool convert(matio_classes c, const void* src, size_t count, double* dst) {
  switch (c) {
    case MAT_C_DOUBLE:
      return copy_as_double<double>(src, count, dst), true;
    case MAT_C_SINGLE:
      return copy_as_double<float>(src, count, dst), true;
    case MAT_C_INT8:
      return copy_as_double<int8_t>(src, count, dst), true;
    case MAT_C_UINT8:
      return copy_as_double<uint8_t>(src, count, dst), true;
    case MAT_C_INT16:
      return copy_as_double<int16_t>(src, count, dst), true;
    case MAT_C_UINT16:
      return copy_as_double<uint16_t>(src, count, dst), true;
    case MAT_C_INT32:
      return copy_as_double<int32_t>(src, count, dst), true;
    case MAT_C_UINT32:
      return copy_as_double<uint32_t>(src, count, dst), true;
    case MAT_C_INT64:
      return copy_as_double<int64_t>(src, count, dst), true;
    case MAT_C_UINT64:
      return copy_as_double<uint64_t>(src, count, dst), true;
    default:
      return false;
  }
}

struct MatFile {
  mat_t* mat = nullptr;
  explicit MatFile(const std::filesystem::path& p) : mat(Mat_Open(p.c_str(), MAT_ACC_RDONLY)) {}
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

}  // namespace

bool mat_reader_available() noexcept { return true; }

std::vector<MatVariableInfo> list_mat_variables(const std::filesystem::path& path,
                                                std::string_view name) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: file not found", name));
  check_mat_file(path, name);
  MatFile f(path);
  if (!f.mat)
    throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file libmatio can read", name));
  std::vector<MatVariableInfo> out;
  while (out.size() < 100000) {  // a damaged file cannot make the list grow without end
    MatVar v{Mat_VarReadNextInfo(f.mat)};
    if (!v.var) break;
    MatVariableInfo i;
    i.index = out.size();
    i.name = v.var->name ? v.var->name : "";
    i.rank = v.var->rank;
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

MatMatrix read_mat_matrix(const std::filesystem::path& path, const MatVariableInfo& info,
                          std::string_view name) {
  if (!info.numeric)
    throw std::runtime_error(
        fmt::format("{}: variable '{}' is not a 2-D numeric matrix", name, info.name));
  // The size the header claims must be one the file can hold before anything is allocated.
  const uint64_t file_bytes = std::filesystem::file_size(path);
  const uint64_t limit =
      std::min(kMatMaxVariableBytes, info.compressed ? kMatMaxInflation * file_bytes : file_bytes);
  const unsigned __int128 claimed = static_cast<unsigned __int128>(info.rows) * info.cols *
                                    info.element_bytes * (info.complex ? 2 : 1);
  if (claimed > limit)
    throw std::runtime_error(
        fmt::format("{}: variable '{}' claims {}×{} values, more than the {}-byte file can hold",
                    name, info.name, info.rows, info.cols, file_bytes));
  MatFile f(path);
  if (!f.mat)
    throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file libmatio can read", name));
  for (size_t k = 0; k < info.index; ++k) {
    const MatVar skipped{Mat_VarReadNextInfo(f.mat)};
    if (!skipped.var)
      throw std::runtime_error(fmt::format("{}: variable {} ('{}') is no longer in the file", name,
                                           info.index + 1, info.name));
  }
  MatVar var{Mat_VarReadNext(f.mat)};
  if (!var.var || !var.var->data)
    throw std::runtime_error(fmt::format("{}: cannot read variable '{}'", name, info.name));
  if ((var.var->name ? std::string_view(var.var->name) : std::string_view()) != info.name)
    throw std::runtime_error(
        fmt::format("{}: variable {} is no longer '{}'", name, info.index + 1, info.name));
  // What libmatio read must be what the header promised, or a damaged file would have us read
  // past its buffer.
  const size_t count = info.rows * info.cols;
  const size_t element = class_bytes(var.var->class_type);
  if (var.var->rank != 2 || var.var->dims[0] != info.rows || var.var->dims[1] != info.cols ||
      element == 0 || size_t(var.var->data_size) != element || var.var->nbytes < count * element ||
      (var.var->isComplex != 0) != info.complex)
    throw std::runtime_error(
        fmt::format("{}: variable '{}' is damaged: its data ({} bytes) does not match {}×{} values",
                    name, info.name, var.var->nbytes, info.rows, info.cols));
  MatMatrix m;
  m.rows = info.rows;
  m.cols = info.cols;
  m.re.resize(count);
  const void* re = var.var->data;
  const void* im = nullptr;
  if (info.complex) {
    const auto* split = static_cast<const mat_complex_split_t*>(var.var->data);
    if (!split->Re || !split->Im)
      throw std::runtime_error(
          fmt::format("{}: variable '{}' is damaged: a complex part is missing", name, info.name));
    re = split->Re;
    im = split->Im;
    m.im.resize(count);
  }
  if (!convert(var.var->class_type, re, count, m.re.data()) ||
      (im && !convert(var.var->class_type, im, count, m.im.data())))
    throw std::runtime_error(
        fmt::format("{}: variable '{}' has an unsupported class", name, info.name));
  return m;
}

#else

bool mat_reader_available() noexcept { return false; }

std::vector<MatVariableInfo> list_mat_variables(const std::filesystem::path&,
                                                std::string_view name) {
  throw std::runtime_error(
      fmt::format("{}: this eitstream was built without libmatio, so .mat files cannot be read "
                  "(install libmatio-dev and reconfigure, or convert to .npy)",
                  name));
}

MatMatrix read_mat_matrix(const std::filesystem::path& path, const MatVariableInfo&,
                          std::string_view name) {
  return (void)list_mat_variables(path, name), MatMatrix{};
}

#endif

}  // namespace eit::recon
