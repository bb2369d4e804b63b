// recon's .npy reader through the shared hardened header parser: a forged shape is refused before
// anything is allocated, with the file's name (the old reader allocated 3.2 GB for a 73-byte file
// claiming 400 M doubles, and a malformed shape reported only "stoull").
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/npy_header.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

// A version-1 .npy file: the dict padded as numpy pads it, then `data`.
fs::path npy_file(const std::string& name, const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 16 != 0) header += ' ';
  header += '\n';
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_npyh_{}_{}", ::getpid(), name);
  std::ofstream out(p, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header << data;
  return p;
}

std::string error_of(const fs::path& p) {
  try {
    read_npy(p);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("a tiny .npy claiming 400 M doubles is refused before allocation, naming the file") {
  const auto p =
      npy_file("huge.npy", "{'descr':'<f8','fortran_order':False,'shape':(400000000,)}", "");
  CHECK(fs::file_size(p) < 100);
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("needs 3200000000 bytes, the file holds 0") != std::string::npos);
  fs::remove(p);
}

TEST_CASE("malformed .npy headers are errors naming the file and the field, never 'stoull'") {
  struct Case {
    const char* dict;
    const char* expect;
  } cases[] = {
      {"{'descr':'<f8','fortran_order':False,'shape':(x, 3)}", "shape (x, 3) is not a tuple"},
      {"{'descr':'<f8','fortran_order':False,'shape':(99999999999999999999,)}", "shape"},
      {"{'descr':'<f8','fortran_order':False,'shape':(4294967296, 4294967296, 4)}",
       "overflows a 64-bit"},
      {"{'descr':'<f8','fortran_order':Maybe,'shape':(1,)}", "'fortran_order' is 'Maybe'"},
      {"{'descr':'<fx','fortran_order':False,'shape':(1,)}", "dtype '<fx'"},
      {"{'descr':'<f8','fortran_order':False}", "no 'shape' tuple"},
      {"{'fortran_order':False,'shape':(1,)}", "no 'descr'"},
  };
  for (const auto& c : cases) {
    const auto p = npy_file("bad.npy", c.dict, std::string(8, '\0'));
    const std::string why = error_of(p);
    CAPTURE(c.dict);
    CAPTURE(why);
    CHECK(why.find(p.string()) != std::string::npos);
    CHECK(why.find(c.expect) != std::string::npos);
    CHECK(why.find("stoull") == std::string::npos);
    fs::remove(p);
  }
}

TEST_CASE("a header length past the end of the file is refused") {
  const std::string bytes =
      std::string("\x93NUMPY\x02\x00", 8) + std::string("\xff\xff\x00\x00", 4) + "{}";
  const auto h = [&] {
    return parse_npy_header({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
                            bytes.size(), "cut.npy");
  };
  CHECK_THROWS_WITH_AS(h(), doctest::Contains("cut.npy: .npy header length 65535 runs past"),
                       std::runtime_error);
}

TEST_CASE("the parser reads every field of a valid header") {
  const auto p = npy_file("ok.npy", "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }",
                          std::string(12, '\1'));
  std::ifstream in(p, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const NpyHeader h = parse_npy_header({reinterpret_cast<const uint8_t*>(all.data()), all.size()},
                                       all.size(), "ok");
  CHECK(h.descr == ">i2");
  CHECK(h.byte_order == '>');
  CHECK(h.kind == 'i');
  CHECK(h.width == 2);
  CHECK(h.fortran_order);
  CHECK(h.shape == std::vector<uint64_t>{2, 3});
  CHECK(h.count == 6);
  CHECK(h.data_bytes == 12);
  CHECK(h.data_offset + 12 == all.size());
  const DenseArray a = read_npy(p);
  CHECK(a.real == std::vector<double>(6, 257.0));
  fs::remove(p);
}

TEST_CASE("the float32 header is numpy's and its files read back with their shape and values") {
  // As numpy (2.4) writes np.zeros((2, 3), '<f4'): the dict padded so the data starts at byte 128.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string numpy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                            std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  const uint64_t two_by_three[] = {2, 3};
  CHECK(npy_float32_header(two_by_three) == numpy);

  for (const std::vector<uint64_t>& shape :
       {std::vector<uint64_t>{5}, std::vector<uint64_t>{2, 3}, std::vector<uint64_t>{4, 3, 2},
        std::vector<uint64_t>{1000000, 1, 1}}) {
    CAPTURE(shape.size());
    const std::string header = npy_float32_header(shape);
    CHECK(header.size() % 64 == 0);
    uint64_t count = 1;
    for (uint64_t d : shape) count *= d;
    std::vector<float> values(count);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 3;
    const fs::path p = fs::temp_directory_path() / fmt::format("eit_npyh_{}_w.npy", ::getpid());
    {
      std::ofstream out(p, std::ios::binary);
      out << header;
      out.write(reinterpret_cast<const char*>(values.data()),
                static_cast<std::streamsize>(values.size() * 4));
    }
    const DenseArray a = read_npy(p);
    CHECK(a.shape == std::vector<size_t>(shape.begin(), shape.end()));
    REQUIRE(a.real.size() == values.size());
    CHECK(a.real == std::vector<double>(values.begin(), values.end()));
    fs::remove(p);
  }
}
