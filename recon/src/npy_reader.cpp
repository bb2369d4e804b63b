// NumPy .npy reader: the header through the shared hardened parser (npy_header.hpp), the data
// checked against the file's size before it is allocated, then converted to double.
#include <algorithm>
#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/npy_header.hpp"

namespace eit::recon {
namespace {

template <typename T>
T load(const char* p, bool swap) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if (swap) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    for (size_t i = 0; i < sizeof v / 2; ++i) std::swap(b[i], b[sizeof v - 1 - i]);
    std::memcpy(&v, b, sizeof v);
  }
  return v;
}

}  // namespace

DenseArray read_npy(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (!in || ec) throw std::runtime_error(fmt::format("{}: cannot open .npy file", file));
  std::vector<uint8_t> start(static_cast<size_t>(std::min(file_size, kNpyMaxPrefixBytes)));
  if (!in.read(reinterpret_cast<char*>(start.data()), static_cast<std::streamsize>(start.size())))
    throw std::runtime_error(fmt::format("{}: cannot read the .npy header", file));
  const NpyHeader h = parse_npy_header(start, file_size, file);
  // What the header claims must be in the file before anything is allocated for it.
  if (h.data_bytes > file_size - h.data_offset)
    throw std::runtime_error(fmt::format(
        "{}: .npy data truncated: shape ({}) of {} needs {} bytes, the file holds {} after its "
        "header",
        file, fmt::join(h.shape, ", "), h.descr, h.data_bytes, file_size - h.data_offset));
  if (h.fortran_order && h.shape.size() > 2)
    throw std::runtime_error(fmt::format(
        "{}: Fortran-ordered .npy with {} dimensions: expected at most 2", file, h.shape.size()));
  const size_t count = static_cast<size_t>(h.count), width = static_cast<size_t>(h.width);
  const bool swap = h.needs_swap();
  const char kind = h.kind;
  std::vector<char> raw(static_cast<size_t>(h.data_bytes));
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size())))
    throw std::runtime_error(
        fmt::format("{}: cannot read {} bytes of .npy data", file, raw.size()));
  DenseArray out;
  out.shape.assign(h.shape.begin(), h.shape.end());
  out.real.resize(count);
  if (kind == 'c') out.imag.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const char* p = raw.data() + i * width;
    switch (kind) {
      case 'f':
        out.real[i] = width == 4 ? load<float>(p, swap) : load<double>(p, swap);
        break;
      case 'c':
        if (width == 8) {
          out.real[i] = load<float>(p, swap);
          out.imag[i] = load<float>(p + 4, swap);
        } else {
          out.real[i] = load<double>(p, swap);
          out.imag[i] = load<double>(p + 8, swap);
        }
        break;
      case 'i':
        out.real[i] = width == 1   ? load<int8_t>(p, false)
                      : width == 2 ? load<int16_t>(p, swap)
                      : width == 4 ? static_cast<double>(load<int32_t>(p, swap))
                                   : static_cast<double>(load<int64_t>(p, swap));
        break;
      default:
        out.real[i] = width == 1   ? load<uint8_t>(p, false)
                      : width == 2 ? load<uint16_t>(p, swap)
                      : width == 4 ? static_cast<double>(load<uint32_t>(p, swap))
                                   : static_cast<double>(load<uint64_t>(p, swap));
    }
  }
  if (h.fortran_order && out.shape.size() == 2) {  // column-major → row-major
    const size_t r = out.shape[0], c = out.shape[1];
    auto transpose = [&](std::vector<double>& v) {
      std::vector<double> t(v.size());
      if (v.empty()) return;  // a zero dimension: (4e11, 0) must not loop 4e11 times
      for (size_t i = 0; i < r; ++i)
        for (size_t j = 0; j < c; ++j) t[i * c + j] = v[j * r + i];
      v.swap(t);
    };
    transpose(out.real);
    if (!out.imag.empty()) transpose(out.imag);
  }
  return out;
}

}  // namespace eit::recon
