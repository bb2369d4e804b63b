// NumPy .npy reader (format documented in numpy/lib/format.py: magic, version, header length,
// a Python-literal dict with descr, fortran_order and shape, then the raw data).
#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"

namespace eit::recon {
namespace {

std::string dict_value(const std::string& header, const std::string& key, const std::string& file) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    throw std::runtime_error(
        fmt::format("{}: .npy header has no '{}' (header: {})", file, key, header));
  size_t v = header.find(':', k);
  if (v == std::string::npos)
    throw std::runtime_error(fmt::format("{}: .npy header: '{}' has no value", file, key));
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  const char open = header[v];
  const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  const size_t end = header.find(close, v + 1);
  if (end == std::string::npos)
    throw std::runtime_error(fmt::format("{}: .npy header: '{}' is unterminated", file, key));
  return header.substr(open == '(' || open == '\'' ? v + 1 : v,
                       end - v - (open == '(' || open == '\'' ? 1 : 0));
}

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
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open .npy file", file));
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(fmt::format("{}: not a .npy file (magic \\x93NUMPY missing)", file));
  const int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3)
    throw std::runtime_error(fmt::format("{}: .npy version {}, expected 1, 2 or 3", file, major));
  uint32_t header_len = 0;
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(len_bytes), major == 1 ? 2 : 4);
  for (int i = 3; i >= 0; --i) header_len = header_len * 256 + len_bytes[i];
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len))
    throw std::runtime_error(fmt::format("{}: .npy header truncated", file));

  const std::string descr = dict_value(header, "descr", file);
  const bool fortran = dict_value(header, "fortran_order", file).starts_with("True");
  const std::string shape_text = dict_value(header, "shape", file);
  DenseArray out;
  size_t count = 1;
  for (size_t pos = 0; pos < shape_text.size();) {
    while (pos < shape_text.size() && (shape_text[pos] == ' ' || shape_text[pos] == ',')) ++pos;
    if (pos >= shape_text.size()) break;
    size_t used = 0;
    const unsigned long long d = std::stoull(shape_text.substr(pos), &used);
    out.shape.push_back(d);
    count *= d;
    pos += used;
  }
  if (descr.size() < 3)
    throw std::runtime_error(fmt::format("{}: .npy descr '{}': expected e.g. '<f8'", file, descr));
  const char order = descr[0], kind = descr[1];
  const int width = std::stoi(descr.substr(2));
  const bool swap = (order == '>' && std::endian::native == std::endian::little) ||
                    (order == '<' && std::endian::native == std::endian::big);
  const bool ok =
      (kind == 'f' && (width == 4 || width == 8)) || (kind == 'c' && (width == 8 || width == 16)) ||
      ((kind == 'i' || kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8));
  if (!ok)
    throw std::runtime_error(fmt::format(
        "{}: .npy dtype '{}': expected float32/64, complex64/128 or an integer type", file, descr));
  std::vector<char> raw(count * static_cast<size_t>(width));
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size())))
    throw std::runtime_error(fmt::format(
        "{}: .npy data truncated: expected {} bytes for shape ({})", file, raw.size(), shape_text));
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
  if (fortran && out.shape.size() == 2) {  // column-major → row-major
    const size_t r = out.shape[0], c = out.shape[1];
    auto transpose = [&](std::vector<double>& v) {
      std::vector<double> t(v.size());
      for (size_t i = 0; i < r; ++i)
        for (size_t j = 0; j < c; ++j) t[i * c + j] = v[j * r + i];
      v.swap(t);
    };
    transpose(out.real);
    if (!out.imag.empty()) transpose(out.imag);
  } else if (fortran && out.shape.size() > 2) {
    throw std::runtime_error(fmt::format(
        "{}: Fortran-ordered .npy with {} dimensions: expected at most 2", file, out.shape.size()));
  }
  return out;
}

}  // namespace eit::recon
