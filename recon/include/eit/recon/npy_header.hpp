#pragma once
// The one hardened parser of NumPy .npy headers, used by recon's read_npy (matrices) and
// acquisition's .npy recording reader (frame stacks), and the one writer of float32 .npy headers
// (`indices --images-out`, `listen --save`). Format (numpy/lib/format.py): "\x93NUMPY",
// major and minor version bytes, a little-endian header length (u16 in version 1, u32 in 2 and 3),
// a Python-literal dict {'descr': '<f8', 'fortran_order': False, 'shape': (2, 208), }, then the
// data. Everything a file claims is checked before anything is allocated from it: the header must
// fit in the file and in kNpyMaxHeaderBytes; shape entries are integers, their product and the
// byte count may not overflow; the caller compares data_bytes with what the file holds.
// Throws std::runtime_error naming the file (`name`), the field, what was found and what was
// expected. Pure functions; allocate only the returned strings and vectors.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace eit::recon {

inline constexpr uint64_t kNpyMaxHeaderBytes = 1u << 20;  // numpy writes a few hundred bytes

struct NpyHeader {
  int major = 1;
  char byte_order = '<';  // '<' little, '>' big, '|' not applicable (1-byte types)
  char kind = 'f';        // 'f' float, 'c' complex, 'i' signed, 'u' unsigned integer
  int width = 8;          // bytes per element (complex: both parts)
  bool fortran_order = false;
  std::vector<uint64_t> shape;  // () for a scalar
  std::string descr;            // as written, e.g. "<f8"
  uint64_t data_offset = 0;     // where the data starts in the file
  uint64_t count = 1;           // product of shape
  uint64_t data_bytes = 0;      // count · width

  // True when the data's byte order differs from this machine's.
  bool needs_swap() const noexcept;
};

// Bytes a caller must read from the start of the file (at most) to parse the header.
inline constexpr uint64_t kNpyMaxPrefixBytes = 12 + kNpyMaxHeaderBytes;

// `start`: the first min(file_size, kNpyMaxPrefixBytes) bytes of the file.
NpyHeader parse_npy_header(std::span<const uint8_t> start, uint64_t file_size,
                           std::string_view name);

// The header of a little-endian float32 .npy file of `shape` in C order, as numpy writes one:
// version 1.0, the dict padded with spaces and a newline so that the data, written next by the
// caller (shape's product of float32 values), starts at a multiple of 64 bytes.
std::string npy_float32_header(std::span<const uint64_t> shape);

}  // namespace eit::recon
