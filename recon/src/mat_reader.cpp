// MATLAB .mat reading through libmatio (compiled with or without it: EIT_HAVE_MATIO).
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"

#ifdef EIT_HAVE_MATIO
#include <matio.h>
#endif

namespace eit::recon {

#ifdef EIT_HAVE_MATIO
namespace {

bool numeric(const matvar_t* v) {
  switch (v->class_type) {
    case MAT_C_DOUBLE:
    case MAT_C_SINGLE:
    case MAT_C_INT8:
    case MAT_C_UINT8:
    case MAT_C_INT16:
    case MAT_C_UINT16:
    case MAT_C_INT32:
    case MAT_C_UINT32:
    case MAT_C_INT64:
    case MAT_C_UINT64:
      return true;
    default:
      return false;
  }
}

double value_at(const void* data, matio_classes cls, size_t i) {
  switch (cls) {
    case MAT_C_DOUBLE:
      return static_cast<const double*>(data)[i];
    case MAT_C_SINGLE:
      return static_cast<const float*>(data)[i];
    case MAT_C_INT8:
      return static_cast<const int8_t*>(data)[i];
    case MAT_C_UINT8:
      return static_cast<const uint8_t*>(data)[i];
    case MAT_C_INT16:
      return static_cast<const int16_t*>(data)[i];
    case MAT_C_UINT16:
      return static_cast<const uint16_t*>(data)[i];
    case MAT_C_INT32:
      return static_cast<const int32_t*>(data)[i];
    case MAT_C_UINT32:
      return static_cast<const uint32_t*>(data)[i];
    case MAT_C_INT64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case MAT_C_UINT64:
      return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    default:
      return 0;
  }
}

struct MatCloser {
  mat_t* mat;
  ~MatCloser() { Mat_Close(mat); }
};
struct VarFreer {
  matvar_t* var;
  ~VarFreer() { Mat_VarFree(var); }
};

}  // namespace

bool mat_reader_available() noexcept { return true; }

DenseArray read_mat_variable(const std::filesystem::path& path, const std::string& name) {
  const std::string file = path.string();
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: file not found", file));
  mat_t* mat = Mat_Open(file.c_str(), MAT_ACC_RDONLY);
  if (!mat) throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file", file));
  MatCloser closer{mat};
  std::string chosen = name;
  if (chosen.empty()) {
    std::vector<std::string> all, numeric_names;
    while (matvar_t* info = Mat_VarReadNextInfo(mat)) {
      VarFreer f{info};
      all.push_back(info->name ? info->name : "?");
      if (numeric(info)) numeric_names.push_back(all.back());
    }
    if (numeric_names.size() != 1)
      throw std::runtime_error(fmt::format("{}: {} numeric variables ({}): name the one to read",
                                           file, numeric_names.size(), fmt::join(all, ", ")));
    chosen = numeric_names[0];
  }
  matvar_t* var = Mat_VarRead(mat, chosen.c_str());
  if (!var) throw std::runtime_error(fmt::format("{}: no variable '{}'", file, chosen));
  VarFreer freer{var};
  if (!numeric(var))
    throw std::runtime_error(fmt::format("{}: variable '{}' is not a numeric array", file, chosen));
  DenseArray out;
  size_t count = 1;
  for (int d = 0; d < var->rank; ++d) {
    out.shape.push_back(var->dims[d]);
    count *= var->dims[d];
  }
  if (var->rank != 2)
    throw std::runtime_error(
        fmt::format("{}: variable '{}' has {} dimensions, expected 2", file, chosen, var->rank));
  const size_t rows = var->dims[0], cols = var->dims[1];
  out.real.resize(count);
  const void* re = var->data;
  const void* im = nullptr;
  if (var->isComplex) {
    const auto* split = static_cast<const mat_complex_split_t*>(var->data);
    re = split->Re;
    im = split->Im;
    out.imag.resize(count);
  }
  // MATLAB stores column-major; DenseArray is row-major.
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      out.real[i * cols + j] = value_at(re, var->class_type, j * rows + i);
      if (im) out.imag[i * cols + j] = value_at(im, var->class_type, j * rows + i);
    }
  return out;
}

#else

bool mat_reader_available() noexcept { return false; }

DenseArray read_mat_variable(const std::filesystem::path& path, const std::string&) {
  throw std::runtime_error(fmt::format(
      "{}: this eitstream was built without libmatio; convert the matrix to .npy", path.string()));
}

#endif

}  // namespace eit::recon
