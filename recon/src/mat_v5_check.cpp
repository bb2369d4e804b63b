// The checks a .mat file passes before libmatio opens it (contract in mat_v5_check.hpp).
#include "mat_v5_check.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#ifdef EIT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "mat73_check.hpp"

namespace eit::recon {
namespace {

// miMATRIX classes for which libmatio allocates one pointer per element before reading any.
constexpr uint32_t kCellClass = 1, kStructClass = 2, kFunctionClass = 16;

// What a walker reads: the file, or one compressed element inflated in memory.
class Bytes {
 public:
  virtual ~Bytes() = default;
  virtual uint64_t size() const = 0;
  virtual bool read_at(uint64_t pos, uint8_t* out, size_t n) = 0;
};

class FileBytes final : public Bytes {
 public:
  FileBytes(const std::filesystem::path& path, std::string_view name)
      : in_(path, std::ios::binary) {
    std::error_code ec;
    size_ = std::filesystem::file_size(path, ec);
    if (!in_ || ec) throw std::runtime_error(fmt::format("{}: cannot open the file", name));
  }
  uint64_t size() const override { return size_; }
  bool read_at(uint64_t pos, uint8_t* out, size_t n) override {
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(pos));
    return static_cast<bool>(
        in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n)));
  }

 private:
  std::ifstream in_;
  uint64_t size_ = 0;
};

class MemoryBytes final : public Bytes {
 public:
  explicit MemoryBytes(std::vector<uint8_t> data) : data_(std::move(data)) {}
  uint64_t size() const override { return data_.size(); }
  bool read_at(uint64_t pos, uint8_t* out, size_t n) override {
    if (pos > data_.size() || n > data_.size() - pos) return false;
    std::memcpy(out, data_.data() + pos, n);
    return true;
  }

 private:
  std::vector<uint8_t> data_;
};

class V5Walker {
 public:
  // `where` names the bytes in messages: the file's name, or that and the compressed element.
  V5Walker(Bytes& bytes, std::string where, bool swap)
      : bytes_(bytes), where_(std::move(where)), swap_(swap) {}

  // `variables`: the elements walked are variables (the file's top level, or an inflated
  // compressed element), whose header libmatio reads whatever their length says.
  void walk(uint64_t pos, uint64_t len, int depth, bool variables) {
    if (depth > 16)
      throw std::runtime_error(fmt::format("{}: elements nested deeper than 16", where_));
    const uint64_t end = pos + len;
    while (pos + 8 <= end) {
      uint8_t tag[8];
      if (!bytes_.read_at(pos, tag, 8))
        throw std::runtime_error(
            fmt::format("{}: cannot read the element at byte {}", where_, pos));
      const uint32_t type = u32(tag);
      if ((type >> 16) != 0) {  // small data element: type, size and up to 4 bytes in 8
        if ((type >> 16) > 4)
          throw std::runtime_error(
              fmt::format("{}: small element at byte {} claims {} bytes, at most 4 fit", where_,
                          pos, type >> 16));
        pos += 8;
        continue;
      }
      const uint64_t nbytes = u32(tag + 4);
      if (nbytes > end - pos - 8)
        throw std::runtime_error(
            fmt::format("{}: element at byte {} claims {} bytes, only {} remain in its parent",
                        where_, pos, nbytes, end - pos - 8));
      if (type == 14 && nbytes == 0 && variables)  // an empty cell is fine; a variable is not
        throw std::runtime_error(fmt::format(
            "{}: the variable at byte {} is an empty matrix element (0 bytes); libmatio would "
            "read its header from what follows",
            where_, pos));
      if (type == 14 && nbytes > 0) {  // miMATRIX: its header as libmatio reads it, then its parts
        walk(pos + 8, nbytes, depth + 1, false);
        check_matrix_header(pos + 8, nbytes);
      }
      if (type == 15 && nbytes > 0) walk_compressed(pos, nbytes, depth);
      // Where libmatio reads the next element: a variable's successor right after its bytes
      // (it seeks nBytes + 8, unpadded: MATLAB's variables are multiples of 8 anyway); inside a
      // matrix, after the padding to 8 bytes. Walking padded variables let a forged size skip
      // the bytes libmatio then read as the next header (a 512 MB dims array).
      const uint64_t step = variables || type == 15 ? nbytes : (nbytes + 7) / 8 * 8;
      pos += 8 + std::min(step, end - pos - 8);
    }
  }

 private:
  uint32_t u32(const uint8_t* p) const {
    const uint32_t v =
        uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    return swap_ ? __builtin_bswap32(v) : v;
  }

  // One tagged part of a matrix header at `at` (before `end`): its type, byte count, where its
  // data starts and where the next part starts; nothing when its tag is not there.
  struct Part {
    uint32_t type = 0;
    uint64_t bytes = 0, data = 0, next = 0;
    bool small = false;
  };
  std::optional<Part> part_at(uint64_t at, uint64_t end) {
    uint8_t tag[8];
    if (at + 8 > end || !bytes_.read_at(at, tag, 8)) return std::nullopt;
    Part p;
    const uint32_t word = u32(tag);
    p.small = (word >> 16) != 0;
    p.type = p.small ? (word & 0xffff) : word;
    p.bytes = p.small ? (word >> 16) : u32(tag + 4);
    p.data = at + 4 + (p.small ? 0 : 4);
    p.next = p.small ? at + 8 : at + 8 + (p.bytes + 7) / 8 * 8;
    return p;
  }

  // libmatio reads a matrix's array flags, dimensions and name at fixed places without checking
  // their tags, so a forged tag there (a name claiming 1.7 GB) would become its allocation. Each
  // must be the spec's type and fit in the matrix: flags miUINT32 (6) of 8 bytes, dimensions
  // miINT32 (5) in whole int32s, name miINT8 (1); small (≤ 4-byte) elements allowed for the last
  // two. Then a container class must have room for the elements it claims.
  void check_matrix_header(uint64_t pos, uint64_t len) {
    const uint64_t end = pos + len;
    uint64_t at = pos;
    auto part = [&](const char* what, uint32_t want_type, bool whole_int32s) {
      const std::optional<Part> tagged = part_at(at, end);
      if (!tagged)
        throw std::runtime_error(
            fmt::format("{}: matrix at byte {} ends before its {}", where_, pos - 8, what));
      const Part& p = *tagged;
      const uint64_t room = p.small ? 4 : end - at - 8;
      if (p.type != want_type || p.bytes > room ||
          (whole_int32s && (p.bytes == 0 || p.bytes % 4 != 0)))
        throw std::runtime_error(fmt::format(
            "{}: matrix at byte {}: its {} (byte {}) is type {} with {} bytes; expected type {} "
            "within the {} bytes left",
            where_, pos - 8, what, at, p.type, p.bytes, want_type, room));
      at = p.next;
      return p;
    };
    const Part flags = part("array flags", 6, true);
    const Part dims = part("dimensions", 5, true);
    part("name", 1, false);
    uint8_t word[4];
    if (!bytes_.read_at(flags.data, word, 4)) return;
    const uint32_t cls = u32(word) & 0xff;
    if (cls != kCellClass && cls != kStructClass && cls != kFunctionClass) return;
    // Elements claimed, saturating: each needs at least an 8-byte tag in what follows.
    uint64_t elements = 1;
    for (uint64_t i = 0; i < dims.bytes / 4; ++i) {
      if (!bytes_.read_at(dims.data + 4 * i, word, 4)) return;
      const uint64_t d = u32(word);
      elements = d != 0 && elements > UINT64_MAX / 8 / d ? UINT64_MAX / 8 : elements * d;
    }
    uint64_t per_element = 1;
    if (cls == kStructClass) {
      // libmatio: field name length (an miINT32; libmatio takes the word after the type as the
      // length, small tag or not), then the names.
      const std::optional<Part> length = part_at(at, end);
      uint8_t v[4];
      if (!length || length->type != 5 || !bytes_.read_at(at + 4, v, 4)) return;
      const uint64_t name_size = u32(v);
      const std::optional<Part> names = part_at(length->next, end);
      if (name_size == 0 || !names || names->type != 1) return;  // libmatio gives up first
      per_element = std::max<uint64_t>(names->bytes / name_size, 1);
      at = std::min(names->next, end);
    }
    const uint64_t left = end - std::min(at, end);
    if (elements > left / 8 / per_element)
      throw std::runtime_error(fmt::format(
          "{}: matrix at byte {}: a {} of {} elements{} cannot fit in the {} bytes left (each "
          "needs at least an 8-byte tag)",
          where_, pos - 8,
          cls == kCellClass     ? "cell array"
          : cls == kStructClass ? "struct array"
                                : "function handle",
          elements, per_element > 1 ? fmt::format(" × {} fields", per_element) : "", left));
  }

  void walk_compressed(uint64_t pos, uint64_t nbytes, int depth) {
#ifdef EIT_HAVE_ZLIB
    const uint64_t cap = std::min(kMatMaxVariableBytes, kMatMaxInflation * nbytes);
    std::vector<uint8_t> in(nbytes);
    if (!bytes_.read_at(pos + 8, in.data(), in.size()))
      throw std::runtime_error(
          fmt::format("{}: cannot read the compressed element at byte {}", where_, pos));
    z_stream z{};
    if (inflateInit(&z) != Z_OK)
      throw std::runtime_error(fmt::format("{}: zlib cannot start inflating", where_));
    z.next_in = in.data();
    z.avail_in = static_cast<uInt>(in.size());  // an element's length is 32-bit
    std::vector<uint8_t> out;
    uint64_t produced = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {  // Z_OK: progress; grow the output whenever it is full
      if (produced == out.size()) {
        if (out.size() >= cap) break;
        out.resize(std::min<uint64_t>(cap, std::max<uint64_t>(2 * out.size(), 64 << 10)));
      }
      const uint64_t room = std::min<uint64_t>(out.size() - produced, uint64_t(1) << 30);
      z.next_out = out.data() + produced;
      z.avail_out = static_cast<uInt>(room);
      rc = inflate(&z, Z_NO_FLUSH);
      produced += room - z.avail_out;
    }
    const std::string why = z.msg ? z.msg : zError(rc);
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
      throw std::runtime_error(fmt::format(
          "{}: the compressed element at byte {} ({} bytes) does not inflate{}", where_, pos,
          nbytes,
          rc == Z_OK ? fmt::format(" within {} bytes", cap) : fmt::format(": zlib says {}", why)));
    out.resize(produced);
    MemoryBytes inflated(std::move(out));
    V5Walker inner(inflated,
                   fmt::format("{}: compressed element at byte {}, inflated", where_, pos), swap_);
    inner.walk(0, inflated.size(), depth + 1, true);
#else
    throw std::runtime_error(
        fmt::format("{}: element at byte {} ({} bytes) is compressed, and this build has no zlib",
                    where_, pos, nbytes));
#endif
  }

  Bytes& bytes_;
  std::string where_;
  bool swap_ = false;
};

}  // namespace

void check_mat_file(const std::filesystem::path& path, std::string_view name) {
  FileBytes file(path, name);
  uint8_t head[128];
  if (file.size() < 128 || !file.read_at(0, head, 128))
    throw std::runtime_error(
        fmt::format("{}: {} bytes, too short for a MATLAB file", name, file.size()));
  bool swap = false;
  if (head[126] == 'M' && head[127] == 'I')
    swap = true;
  else if (!(head[126] == 'I' && head[127] == 'M'))
    throw std::runtime_error(fmt::format(
        "{}: endian indicator (bytes 126–127) is not 'IM' or 'MI': not a MATLAB v5 file", name));
  const uint16_t version =
      swap ? uint16_t(head[124] << 8 | head[125]) : uint16_t(head[125] << 8 | head[124]);
  if (version == 0x0200) return check_mat73_attributes(path, name);  // v7.3: HDF5
  // libmatio reads any other version as a headerless MATLAB v4 file and allocates the v4 name
  // length it finds in bytes 16–19 unchecked (fuzz_recon_mat: 1.5 GB). v4 is MATLAB 4's format,
  // superseded in 1996; it is refused rather than walked.
  if (version != 0x0100)
    throw std::runtime_error(fmt::format(
        "{}: version 0x{:04x} in bytes 124–125, expected 0x0100 (MATLAB v5 to v7) or 0x0200 "
        "(v7.3); MATLAB v4 files are not read (save with -v7)",
        name, version));
  V5Walker(file, std::string(name), swap).walk(128, file.size() - 128, 0, true);
}

}  // namespace eit::recon
