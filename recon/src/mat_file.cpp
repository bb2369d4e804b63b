// The hardened .mat reader (contract in mat_file.hpp).
#include "eit/recon/mat_file.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#ifdef EIT_HAVE_MATIO
#include <matio.h>

#include "mat73_check.hpp"
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

// zlib cannot expand data by more than about 1032:1, so a compressed variable larger than this
// many times the file is damaged; an uncompressed one must fit in the file.
constexpr uint64_t kMaxInflation = 1032;
constexpr uint64_t kMaxVariableBytes = uint64_t(4) << 30;

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

// Walks the element tags of a MATLAB v5 file and refuses any element longer than what encloses
// it (compressed elements are checked at their outer length only).
class V5Walker {
 public:
  V5Walker(const std::filesystem::path& path, std::string_view name)
      : path_(path), in_(path, std::ios::binary), name_(name) {
    std::error_code ec;
    size_ = std::filesystem::file_size(path, ec);
    if (!in_ || ec) throw std::runtime_error(fmt::format("{}: cannot open the file", name_));
  }

  void check_file() {
    uint8_t head[128];
    if (size_ < 128 || !read_at(0, head, 128))
      throw std::runtime_error(
          fmt::format("{}: {} bytes, too short for a MATLAB file", name_, size_));
    if (head[126] == 'M' && head[127] == 'I')
      swap_ = true;
    else if (!(head[126] == 'I' && head[127] == 'M'))
      throw std::runtime_error(fmt::format(
          "{}: endian indicator (bytes 126–127) is not 'IM' or 'MI': not a MATLAB v5 file", name_));
    const uint16_t version =
        swap_ ? uint16_t(head[124] << 8 | head[125]) : uint16_t(head[125] << 8 | head[124]);
    if (version == 0x0200) return check_mat73_attributes(path_, name_);  // v7.3: HDF5
    // libmatio reads any other version as a headerless MATLAB v4 file and allocates the v4 name
    // length it finds in bytes 16–19 unchecked (fuzz_recon_mat: 1.5 GB). v4 is MATLAB 4's format,
    // superseded in 1996; it is refused rather than walked.
    if (version != 0x0100)
      throw std::runtime_error(fmt::format(
          "{}: version 0x{:04x} in bytes 124–125, expected 0x0100 (MATLAB v5 to v7) or 0x0200 "
          "(v7.3); MATLAB v4 files are not read (save with -v7)",
          name_, version));
    walk(128, size_ - 128, 0);
  }

 private:
  bool read_at(uint64_t pos, uint8_t* out, size_t n) {
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(pos));
    return static_cast<bool>(
        in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n)));
  }
  uint32_t u32(const uint8_t* p) const {
    const uint32_t v =
        uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    return swap_ ? __builtin_bswap32(v) : v;
  }

  // libmatio reads a matrix's array flags, dimensions and name at fixed places without checking
  // their tags, so a forged tag there (a name claiming 1.7 GB) would become its allocation. Each
  // must be the spec's type and fit in the matrix: flags miUINT32 (6) of 8 bytes, dimensions
  // miINT32 (5) in whole int32s, name miINT8 (1); small (≤ 4-byte) elements allowed for the last
  // two.
  void check_matrix_header(uint64_t pos, uint64_t len) {
    const uint64_t end = pos + len;
    uint64_t at = pos;
    auto part = [&](const char* what, uint32_t want_type, bool whole_int32s) {
      uint8_t tag[8];
      if (at + 8 > end || !read_at(at, tag, 8))
        throw std::runtime_error(
            fmt::format("{}: matrix at byte {} ends before its {}", name_, pos - 8, what));
      const uint32_t word = u32(tag);
      const bool small = (word >> 16) != 0;
      const uint32_t type = small ? (word & 0xffff) : word;
      const uint64_t bytes = small ? (word >> 16) : u32(tag + 4);
      const uint64_t room = small ? 4 : end - at - 8;
      if (type != want_type || bytes > room || (whole_int32s && (bytes == 0 || bytes % 4 != 0)))
        throw std::runtime_error(fmt::format(
            "{}: matrix at byte {}: its {} (byte {}) is type {} with {} bytes; expected type {} "
            "within the {} bytes left",
            name_, pos - 8, what, at, type, bytes, want_type, room));
      at += small ? 8 : 8 + (bytes + 7) / 8 * 8;
    };
    part("array flags", 6, true);
    part("dimensions", 5, true);
    part("name", 1, false);
  }

  void walk(uint64_t pos, uint64_t len, int depth) {
    if (depth > 16)
      throw std::runtime_error(fmt::format("{}: elements nested deeper than 16", name_));
    const uint64_t end = pos + len;
    while (pos + 8 <= end) {
      uint8_t tag[8];
      if (!read_at(pos, tag, 8))
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
      if (type == 14 && nbytes > 0) {  // miMATRIX: its header as libmatio reads it, then its parts
        walk(pos + 8, nbytes, depth + 1);
        check_matrix_header(pos + 8, nbytes);
      }
      const uint64_t padded = type == 15 ? nbytes : (nbytes + 7) / 8 * 8;  // 15 = miCOMPRESSED
      pos += 8 + std::min(padded, end - pos - 8);
    }
  }

  std::filesystem::path path_;
  std::ifstream in_;
  std::string_view name_;
  uint64_t size_ = 0;
  bool swap_ = false;
};

}  // namespace

bool mat_reader_available() noexcept { return true; }

std::vector<MatVariableInfo> list_mat_variables(const std::filesystem::path& path,
                                                std::string_view name) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: file not found", name));
  V5Walker(path, name).check_file();
  MatFile f(path);
  if (!f.mat)
    throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file libmatio can read", name));
  std::vector<MatVariableInfo> out;
  while (out.size() < 100000) {  // a damaged file cannot make the list grow without end
    MatVar v{Mat_VarReadNextInfo(f.mat)};
    if (!v.var) break;
    MatVariableInfo i;
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
      std::min(kMaxVariableBytes, info.compressed ? kMaxInflation * file_bytes : file_bytes);
  const unsigned __int128 claimed = static_cast<unsigned __int128>(info.rows) * info.cols *
                                    info.element_bytes * (info.complex ? 2 : 1);
  if (claimed > limit)
    throw std::runtime_error(
        fmt::format("{}: variable '{}' claims {}×{} values, more than the {}-byte file can hold",
                    name, info.name, info.rows, info.cols, file_bytes));
  MatFile f(path);
  if (!f.mat)
    throw std::runtime_error(fmt::format("{}: not a MATLAB .mat file libmatio can read", name));
  MatVar var{Mat_VarRead(f.mat, info.name.c_str())};
  if (!var.var || !var.var->data)
    throw std::runtime_error(fmt::format("{}: cannot read variable '{}'", name, info.name));
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
