// recon's .mat import through the shared hardened reader (mat_file.hpp): hand-built MATLAB v5
// files, valid and forged. The old recon reader handed forged lengths straight to libmatio.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#ifdef EIT_TEST_HAVE_ZLIB
#include <zlib.h>
#endif

#include "eit/recon/array_file.hpp"
#include "eit/recon/mat_file.hpp"
#include "mat_test_support.hpp"
#include "test_data.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

// A data element: tag (type, length) and the data padded to 8 bytes.
std::string element(uint32_t type, const std::string& data) {
  std::string s;
  put32(s, type);
  put32(s, static_cast<uint32_t>(data.size()));
  s += data;
  s.append((8 - data.size() % 8) % 8, '\0');
  return s;
}

// A double matrix named `name` with dims rows × cols and `values` (column-major) as its data.
std::string double_matrix(const std::string& name, int32_t rows, int32_t cols,
                          const std::vector<double>& values) {
  std::string flags, dims, re;
  put32(flags, 6);  // mxDOUBLE_CLASS
  put32(flags, 0);
  put32(dims, static_cast<uint32_t>(rows));
  put32(dims, static_cast<uint32_t>(cols));
  re.assign(reinterpret_cast<const char*>(values.data()), values.size() * 8);
  return element(14, element(6, flags) + element(5, dims) + element(1, name) + element(9, re));
}

fs::path mat_file(const std::string& name, const std::string& body) {
  const std::string head = eit::test::mat_header("MATLAB 5.0 MAT-file, eitstream test", 0x0100);
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_mat_{}_{}", ::getpid(), name);
  std::ofstream(p, std::ios::binary) << head << body;
  return p;
}

std::string error_of(const fs::path& p) { return eit::test::mat_read_error(p); }
using eit::test::skip_without_matio;

}  // namespace

TEST_CASE("a valid hand-built .mat matrix reads back in row-major order") {
  if (skip_without_matio()) return;
  const auto p = mat_file("ok.mat", double_matrix("v", 3, 2, {1, 2, 3, 4, 5, 6}));
  const DenseArray a = read_mat_variable(p, "v");
  CHECK(a.shape == std::vector<size_t>{3, 2});
  CHECK(a.real == std::vector<double>{1, 4, 2, 5, 3, 6});
  const auto vars = list_mat_variables(p, "ok.mat");
  REQUIRE(vars.size() == 1);
  CHECK(vars[0].numeric);
  fs::remove(p);
}

TEST_CASE("an empty .mat matrix with one huge dimension reads as empty without walking it") {
  // Found by fuzz_recon_mat: 4,294,967,295 × 0 holds no values, so every size check passes, and
  // the transpose then looped four billion times over nothing (an 11 s hang under the fuzzer).
  if (skip_without_matio()) return;
  for (const auto& [rows, cols] : {std::pair<int32_t, int32_t>{-1, 0}, {0, -1}}) {
    const auto p = mat_file("empty.mat", double_matrix("v", rows, cols, {}));
    const DenseArray a = read_mat_variable(p, "v");
    CHECK(a.shape == std::vector<size_t>{uint32_t(rows), uint32_t(cols)});
    CHECK(a.real.empty());
    fs::remove(p);
  }
}

TEST_CASE("a .mat variable claiming more values than the file holds is refused before reading") {
  if (skip_without_matio()) return;
  const auto p = mat_file("huge.mat", double_matrix("v", 100000, 100000, {1, 2}));
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("claims 100000×100000 values, more than the") != std::string::npos);
  fs::remove(p);
}

TEST_CASE("a .mat element longer than the file is refused before libmatio sees it") {
  if (skip_without_matio()) return;
  std::string body = double_matrix("v", 1, 2, {1, 2});
  const uint32_t forged = 0x7fffff00;  // the miMATRIX element claims ~2 GiB
  std::memcpy(body.data() + 4, &forged, 4);
  const auto p = mat_file("long.mat", body);
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("element at byte 128 claims 2147483392 bytes") != std::string::npos);
  fs::remove(p);
}

TEST_CASE("a .mat matrix whose header parts are not the spec's types is refused before libmatio") {
  if (skip_without_matio()) return;
  // Found by fuzz_recon_mat: every element length fits, but the array flags are tagged type 0
  // with 43 bytes, so libmatio, reading its parts at fixed places, took a name length of
  // 1,721,761,792 bytes from the data and malloc'd it. The matrix below is that input's.
  const std::string fuzzed(
      "\x0e\x00\x00\x00\x36\x00\x00\x00\x00\x00\x00\x00\x2b\x00\x00\x00"
      "\x06\x00\x00\x01\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x00\x00"
      "\x01\x00\x00\x00\x00\x00\xa0\x66\x7f\x40\x00\x00\x00\x00\x00\x00"
      "\x80\x00\x00\x00\xe0\x7f\x40\x00\x00\x00\x00\x00\xf0\x7f\x40",
      63);
  const auto p = mat_file("fuzzed.mat", fuzzed);
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("matrix at byte 128: its array flags (byte 136) is type 0 with 43 bytes; "
                 "expected type 6") != std::string::npos);

  std::string flags = double_matrix("v", 1, 2, {1, 2});
  const uint32_t name_type = 1;  // array flags tagged miINT8: the right length, the wrong type
  std::memcpy(flags.data() + 8, &name_type, 4);
  const auto q = mat_file("flags.mat", flags);
  const std::string why_flags = error_of(q);
  CAPTURE(why_flags);
  CHECK(why_flags.find("its array flags (byte 136) is type 1 with 8 bytes; expected type 6") !=
        std::string::npos);
  fs::remove(p);
  fs::remove(q);
}

TEST_CASE("a .mat file whose header is not version 5 or 7.3 is refused before libmatio reads it") {
  if (skip_without_matio()) return;
  // Found by fuzz_recon_mat in CI: the 'MI' indicator with version 0x0284. libmatio reads any
  // version but 0x0100 and 0x0200 as a headerless MATLAB v4 file, took bytes 16–19 (0x5c000000)
  // as a v4 name length and malloc'd 1.5 GB. These are that input's first 128 bytes; what
  // follows them never mattered.
  std::string fuzzed(128, ' ');
  const std::string start("\0\0\0\0\0\0\0\0\0\0\0\0\x10\x70\x00\x40\x00\x00\x00\x5c", 20);
  fuzzed.replace(0, start.size(), start);
  fuzzed.replace(124, 4, std::string("\x02\x84MI", 4));
  fuzzed.append(23, '\0');
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_mat_{}_v4.mat", ::getpid());
  std::ofstream(p, std::ios::binary) << fuzzed;
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("version 0x0284 in bytes 124–125, expected 0x0100") != std::string::npos);
  CHECK(why.find("MATLAB v4 files are not read") != std::string::npos);

  // The same refusal for a well-formed v5 file whose version alone is wrong.
  std::string body = double_matrix("v", 1, 2, {1, 2});
  const auto q = mat_file("v0101.mat", body);
  {
    std::fstream f(q, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(124);
    f.write("\x01\x01", 2);
  }
  CHECK(error_of(q).find("version 0x0101 in bytes 124–125") != std::string::npos);
  fs::remove(p);
  fs::remove(q);
}

TEST_CASE("of two .mat variables of one name the one chosen is read, not its namesake's claim") {
  if (skip_without_matio()) return;
  // Found by fuzz_mat: libmatio's read by name takes the first variable of that name, so an
  // earlier namesake claiming 16777472×64 int16 values (no data) had libmatio allocate 2 GB,
  // although the variable chosen and size-checked was the later one.
  std::string flags, dims;
  put32(flags, 10);  // mxINT16_CLASS
  put32(flags, 0);
  put32(dims, 16777472);
  put32(dims, 64);
  const std::string claim =
      element(14, element(6, flags) + element(5, dims) + element(1, "v") + element(3, ""));
  const auto p = mat_file("twins.mat", claim + double_matrix("v", 1, 2, {1, 2}));
  const auto vars = list_mat_variables(p, "twins.mat");
  REQUIRE(vars.size() == 2);
  CHECK(vars[0].rows == 16777472);
  const DenseArray a = read_mat_variable(p, "v");  // the last of the name, as listed
  CHECK(a.shape == std::vector<size_t>{1, 2});
  CHECK(a.real == std::vector<double>{1, 2});
  fs::remove(p);
}

namespace {

// A matrix element of class `cls` with dims rows × cols and nothing after its name but `rest`.
std::string container(uint32_t cls, uint32_t rows, uint32_t cols, const std::string& rest) {
  std::string flags, dims;
  put32(flags, cls);
  put32(flags, 0);
  put32(dims, rows);
  put32(dims, cols);
  return element(14, element(6, flags) + element(5, dims) + element(1, "c") + rest);
}

}  // namespace

TEST_CASE("a .mat cell or struct claiming more elements than it has room for is refused") {
  if (skip_without_matio()) return;
  // Found by fuzz_mat: a cell array of 256×983041 (no cells follow): libmatio calloc'd a pointer
  // per cell, 2 GB, before reading any. Each element needs at least an 8-byte tag.
  const auto p = mat_file("cells.mat", container(1, 256, 983041, ""));
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("matrix at byte 128: a cell array of 251658496 elements cannot fit in the 0 "
                 "bytes left") != std::string::npos);

  // A struct: 1000×1000 elements of 3 fields (name length 4, names "a\0\0\0b\0\0\0c\0\0\0").
  std::string length;
  put32(length, (4u << 16) | 5u);  // small miINT32 element holding 4
  put32(length, 4);
  const std::string names = element(1, std::string("a\0\0\0b\0\0\0c\0\0\0", 12));
  const auto q = mat_file("struct.mat", container(2, 1000, 1000, length + names));
  const std::string why_struct = error_of(q);
  CAPTURE(why_struct);
  CHECK(why_struct.find("a struct array of 1000000 elements × 3 fields cannot fit") !=
        std::string::npos);

  // A cell that does hold its one (empty) cell passes this check and is listed (not numeric).
  const auto r =
      mat_file("one_cell.mat", container(1, 1, 1, element(14, "")) + double_matrix("v", 1, 1, {5}));
  CHECK(read_mat_variable(r, "v").real == std::vector<double>{5});
  fs::remove(p);
  fs::remove(q);
  fs::remove(r);
}

TEST_CASE("a .mat variable that is an empty matrix element is refused, its header unread") {
  if (skip_without_matio()) return;
  // Found by fuzz_mat: libmatio reads a variable's array flags, dimensions and name after its
  // tag whatever the tag's length, so after a 0-byte matrix it read the next elements as the
  // header and a name length of 2,053,308,416 from the bytes after them.
  const auto p = mat_file("empty_element.mat", element(14, "") + double_matrix("v", 1, 1, {5}));
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find("the variable at byte 128 is an empty matrix element (0 bytes)") !=
        std::string::npos);
  fs::remove(p);
}

TEST_CASE("a .mat variable whose length is not a multiple of 8 is walked where libmatio reads on") {
  if (skip_without_matio()) return;
  // Found by fuzz_mat (CI's seed, 512 MB malloc): libmatio reads the next variable right after a
  // variable's bytes (it seeks nBytes + 8, unpadded), where the check walked on after padding to
  // 8. A variable claiming 4 bytes more than its matrix holds: libmatio's next tag starts 4
  // bytes later than the padded walk's, here a matrix of 2^31 - 16 bytes.
  std::string v = double_matrix("v", 1, 1, {5});
  const uint32_t body = static_cast<uint32_t>(v.size() - 8), claimed = body + 4;
  std::memcpy(v.data() + 4, &claimed, 4);
  for (const uint32_t word : {0u, 14u, 0x7ffffff0u, 0u}) put32(v, word);
  const auto p = mat_file("unpadded.mat", v);
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(fmt::format("element at byte {} claims 2147483632 bytes", 128 + 8 + body + 4)) !=
        std::string::npos);
  fs::remove(p);
}

namespace {

// `data` as an miCOMPRESSED element (zlib stream, unpadded), as MATLAB's -v7 writes variables.
std::string compressed(const std::string& data) {
#ifdef EIT_TEST_HAVE_ZLIB
  uLongf n = compressBound(data.size());
  std::string z(n, '\0');
  REQUIRE(compress(reinterpret_cast<Bytef*>(z.data()), &n,
                   reinterpret_cast<const Bytef*>(data.data()), data.size()) == Z_OK);
  z.resize(n);
  std::string s;
  put32(s, 15);
  put32(s, static_cast<uint32_t>(z.size()));
  return s + z;
#else
  return data;
#endif
}

bool skip_without_zlib() {
#ifdef EIT_TEST_HAVE_ZLIB
  return skip_without_matio();
#else
  eit::test::report_skip("compressed .mat elements", "test_recon built without zlib");
  return true;
#endif
}

}  // namespace

TEST_CASE(
    "a compressed .mat matrix reads back, and a forged one inside is refused like a plain one") {
  if (skip_without_zlib()) return;
  const auto ok = mat_file("z_ok.mat", compressed(double_matrix("v", 3, 2, {1, 2, 3, 4, 5, 6})));
  CHECK(read_mat_variable(ok, "v").real == std::vector<double>{1, 4, 2, 5, 3, 6});
  REQUIRE(list_mat_variables(ok, "z_ok.mat").size() == 1);
  CHECK(list_mat_variables(ok, "z_ok.mat")[0].compressed);

  // libmatio reads a compressed matrix's header parts out of the inflated stream unchecked, so
  // each check of the plain walk must hold inside it too: here a name claiming ~2 GiB.
  std::string forged = double_matrix("v", 1, 2, {1, 2});
  const uint32_t huge = 0x7fffff00;
  std::memcpy(forged.data() + 8 + 16 + 16 + 4, &huge, 4);  // the name tag's length
  const auto bad = mat_file("z_bad.mat", compressed(forged));
  const std::string why = error_of(bad);
  CAPTURE(why);
  CHECK(why.find("compressed element at byte 128, inflated: ") != std::string::npos);
  CHECK(why.find("claims 2147483392 bytes") != std::string::npos);

  // The cell of fuzz_mat's 2 GB calloc, compressed.
  const auto cells = mat_file("z_cells.mat", compressed(container(1, 256, 983041, "")));
  CHECK(error_of(cells).find("inflated: matrix at byte 0: a cell array of 251658496 elements") !=
        std::string::npos);
  fs::remove(ok);
  fs::remove(bad);
  fs::remove(cells);
}

TEST_CASE("a compressed .mat element that does not inflate is refused with zlib's reason") {
  if (skip_without_zlib()) return;
  std::string z = compressed(double_matrix("v", 1, 2, {1, 2}));
  {  // the stream cut after 12 bytes, the element's length saying so
    std::string body = z.substr(0, 8) + z.substr(8, 12);
    const uint32_t len = 12;
    std::memcpy(body.data() + 4, &len, 4);
    const auto p = mat_file("z_trunc.mat", body);
    const std::string why = error_of(p);
    CAPTURE(why);
    CHECK(why.find("the compressed element at byte 128 (12 bytes) does not inflate") !=
          std::string::npos);
    fs::remove(p);
  }
  std::string garbage = z;
  for (size_t i = 10; i < garbage.size(); ++i) garbage[i] = static_cast<char>(garbage[i] ^ 0x5a);
  const auto p = mat_file("z_garbage.mat", garbage);
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find("does not inflate: zlib says") != std::string::npos);
  fs::remove(p);
}
