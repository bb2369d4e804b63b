// The hardened .npy header parser and the float32 header writer (contract in npy_header.hpp).
#include "eit/recon/npy_header.hpp"

#include <bit>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace eit::recon {
namespace {

// The text after "'key':" in the header dict (leading spaces removed), or empty.
std::string_view dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return {};
  std::string_view v = header.substr(at + 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

// Printable, bounded excerpt of untrusted text for messages.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += (c >= 32 && c < 127) ? c : '?';
  return s.size() > 60 ? out + "…" : out;
}

}  // namespace

bool NpyHeader::needs_swap() const noexcept {
  return (byte_order == '>' && std::endian::native == std::endian::little) ||
         (byte_order == '<' && std::endian::native == std::endian::big);
}

NpyHeader parse_npy_header(std::span<const uint8_t> b, uint64_t file_size, std::string_view name) {
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
    throw std::runtime_error(fmt::format("{}: no '\\x93NUMPY' magic: not a .npy file", name));
  NpyHeader h;
  h.major = b[6];
  uint64_t header_len = 0, header_at = 0;
  if (h.major == 1) {
    header_len = uint64_t(b[8]) | uint64_t(b[9]) << 8;
    header_at = 10;
  } else if (h.major == 2 || h.major == 3) {
    if (b.size() < 12)
      throw std::runtime_error(
          fmt::format("{}: {} bytes, too short for a .npy v{} header", name, file_size, h.major));
    header_len =
        uint64_t(b[8]) | uint64_t(b[9]) << 8 | uint64_t(b[10]) << 16 | uint64_t(b[11]) << 24;
    header_at = 12;
  } else {
    throw std::runtime_error(fmt::format("{}: .npy version {}, expected 1, 2 or 3", name, h.major));
  }
  if (header_len > kNpyMaxHeaderBytes || header_at + header_len > file_size ||
      header_at + header_len > b.size())
    throw std::runtime_error(fmt::format(
        "{}: .npy header length {} runs past the file's {} bytes (or the {}-byte limit)", name,
        header_len, file_size, kNpyMaxHeaderBytes));
  const std::string_view header(reinterpret_cast<const char*>(b.data() + header_at), header_len);
  h.data_offset = header_at + header_len;

  // descr: '<f8', '>i4', '|u1', …
  const std::string_view d = dict_value(header, "descr");
  if (d.size() < 2 || d.front() != '\'' || d.find('\'', 1) == std::string_view::npos)
    throw std::runtime_error(
        fmt::format("{}: .npy header has no 'descr' string (header: {})", name, excerpt(header)));
  h.descr = std::string(d.substr(1, d.find('\'', 1) - 1));
  int width = 0;
  if (h.descr.size() >= 3) {
    const auto r = std::from_chars(h.descr.data() + 2, h.descr.data() + h.descr.size(), width);
    if (r.ec != std::errc() || r.ptr != h.descr.data() + h.descr.size()) width = 0;
  }
  h.byte_order = h.descr.empty() ? '?' : h.descr[0];
  if (h.byte_order == '=') h.byte_order = std::endian::native == std::endian::little ? '<' : '>';
  h.kind = h.descr.size() > 1 ? h.descr[1] : '?';
  h.width = width;
  const bool order_ok = h.byte_order == '<' || h.byte_order == '>' || h.byte_order == '|';
  const bool type_ok =
      (h.kind == 'f' && (width == 4 || width == 8)) ||
      (h.kind == 'c' && (width == 8 || width == 16)) ||
      ((h.kind == 'i' || h.kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8));
  if (!order_ok || !type_ok)
    throw std::runtime_error(fmt::format(
        "{}: .npy dtype '{}': expected float32/64, complex64/128 or an integer type, e.g. '<f8'",
        name, excerpt(h.descr)));

  const std::string_view fo = dict_value(header, "fortran_order");
  if (fo.starts_with("True"))
    h.fortran_order = true;
  else if (!fo.starts_with("False"))
    throw std::runtime_error(fmt::format("{}: .npy 'fortran_order' is '{}', expected True or False",
                                         name, excerpt(fo.substr(0, fo.find_first_of(",}")))));

  std::string_view shape = dict_value(header, "shape");
  const size_t close = shape.find(')');
  if (shape.empty() || shape.front() != '(' || close == std::string_view::npos)
    throw std::runtime_error(fmt::format("{}: .npy header has no 'shape' tuple", name));
  shape = shape.substr(1, close - 1);
  for (size_t p = 0; p < shape.size();) {
    while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p >= shape.size()) break;
    uint64_t dim = 0;
    const auto r = std::from_chars(shape.data() + p, shape.data() + shape.size(), dim);
    if (r.ec != std::errc() || h.shape.size() >= 32)
      throw std::runtime_error(
          fmt::format("{}: .npy shape ({}) is not a tuple of at most 32 non-negative integers",
                      name, excerpt(shape)));
    h.shape.push_back(dim);
    if (dim != 0 && h.count > UINT64_MAX / dim)
      throw std::runtime_error(fmt::format("{}: .npy shape ({}) overflows a 64-bit element count",
                                           name, excerpt(shape)));
    h.count *= dim;
    p = static_cast<size_t>(r.ptr - shape.data());
  }
  if (h.count > UINT64_MAX / static_cast<uint64_t>(width))
    throw std::runtime_error(
        fmt::format("{}: .npy shape ({}) overflows a 64-bit byte count", name, excerpt(shape)));
  h.data_bytes = h.count * static_cast<uint64_t>(width);
  return h;
}

std::string npy_float32_header(std::span<const uint64_t> shape) {
  // A Python tuple: (5,) for one dimension, (2, 3) for more.
  const std::string tuple = shape.size() == 1 ? fmt::format("({},)", shape[0])
                                              : fmt::format("({})", fmt::join(shape, ", "));
  std::string dict =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", tuple);
  const size_t unpadded = 10 + dict.size() + 1;  // magic, version, length, dict, newline
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  const size_t len = dict.size();  // a few hundred bytes: fits version 1.0's u16
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  return out + dict;
}

}  // namespace eit::recon
