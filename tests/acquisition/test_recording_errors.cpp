// Truncated, garbled and mislabelled files written on the fly: each gives a clear set-up error
// or counted bad frames, and never loses a whole frame decoded before the damage.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/protocol.hpp"
#include "temp_files.hpp"

using namespace eit::acquisition;
using eit::recon::Protocol;
using eit::test::append;
using eit::test::TempDir;

namespace {

const Protocol& adjacent16() {
  static const Protocol p = eit::recon::make_protocol({});
  return p;
}

// A Dräger v51 file: 8-byte prefix, text header with `header`, then frames of 5495 bytes whose
// 600 float64 are d[k] = frame + k / 1000.
std::string draeger_file(uint32_t format, size_t frames, size_t extra_bytes,
                         const std::string& header = "Framerate [Hz]:    25\r\n") {
  std::string text = "\r\n\r\n---Draeger EIT-Software V1.20---\r\nFormat:    51\r\n" + header;
  std::string s;
  append<uint32_t>(s, format);
  append<uint32_t>(s, uint32_t(8 + text.size() - 16));
  s += text;
  const size_t stride = format == 31 ? 4112 : format == 32 ? 5200 : 5495;
  std::string frame_bytes;
  for (size_t f = 0; f <= frames; ++f) {
    std::string fb;
    for (int k = 0; k < 600; ++k) append<double>(fb, double(f) + k / 1000.0);
    fb.resize(stride, '\0');
    if (f < frames)
      s += fb;
    else
      s += fb.substr(0, extra_bytes);
  }
  return s;
}

RecordingOptions format_option(const char* format) {
  RecordingOptions o;
  o.format = format;
  return o;
}

std::string floats(size_t n, float first) {
  std::string s;
  for (size_t i = 0; i < n; ++i) append<float>(s, first + float(i));
  return s;
}

}  // namespace

TEST_CASE("a Dräger .eit cut inside a frame keeps the whole frames and the voltage formula") {
  TempDir tmp;
  const auto path = tmp.write("cut.eit", draeger_file(51, 3, 100));
  auto r = open_recording_reader(path, {}, adjacent16());
  CHECK(r->info().n_frames == 3);
  CHECK(r->info().rate_hz == 25.0);
  CHECK(r->info().truncated_bytes == 100);
  CHECK(r->info().warnings.front().find("frame 4 is truncated (100 of 5495 bytes)") !=
        std::string::npos);
  std::vector<float> v(208);
  for (size_t f = 0; f < 3; ++f) {
    REQUIRE(r->read(f, v));
    for (size_t k = 0; k < 208; ++k) {
      const size_t j = r->map().source_index(k);  // rotate_meas position of model value k
      const double d0 = double(f) + double(j) / 1000.0, d1 = double(f) + double(322 + j) / 1000.0;
      CHECK(v[k] == doctest::Approx(0.00098242 * d0 - 0.00019607 * d1).epsilon(1e-6));
    }
  }
}

TEST_CASE("Dräger .eit header problems are set-up errors naming the file and field") {
  TempDir tmp;
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("v7.eit", draeger_file(7, 1, 0)), {}, adjacent16()),
      doctest::Contains("v7.eit: format field (bytes 0–3) is 7, expected 31, 32 or 51"));
  std::string far = draeger_file(51, 1, 0);
  far[5] = '\x7f';  // offset field far past the end
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("far.eit", far), {}, adjacent16()),
                    doctest::Contains("beyond the file's"));
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("tiny.eit", "\x33\x00"), {}, adjacent16()),
                    doctest::Contains("too short"));
  auto no_rate = open_recording_reader(tmp.write("norate.eit", draeger_file(51, 2, 0, "\r\n")), {},
                                       adjacent16());
  CHECK(no_rate->info().rate_hz == 0.0);
  CHECK(no_rate->info().warnings.front().find("Framerate") != std::string::npos);
}

TEST_CASE("a .get cut inside a frame keeps the whole frames, no .prl means no rate") {
  TempDir tmp;
  std::string data;
  for (int f = 0; f < 2; ++f) data += floats(256, 1.0f + f);
  data += floats(100, 0.0f);
  auto r = open_recording_reader(tmp.write("cut.get", data), {}, adjacent16());
  CHECK(r->info().n_frames == 2);
  CHECK(r->info().truncated_bytes == 400);
  CHECK(r->info().rate_hz == 0.0);
  std::vector<float> v(208);
  REQUIRE(r->read(1, v));
  CHECK(v[0] == doctest::Approx(2.0f + r->map().source_index(0)));

  tmp.write("rated.get", floats(256, 1.0f));
  tmp.write("rated.prl", "Number of frames = 1\nFramerate = 44 per second\n");
  CHECK(open_recording_reader(tmp.path() / "rated.get", {}, adjacent16())->info().rate_hz == 44.0);

  std::string v104 = floats(256, 1.0f);
  std::memset(v104.data() + 38 * 4, 0, 4);
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("v104.get", v104), {}, adjacent16()),
                    doctest::Contains("104-measurement"));
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("short.get", floats(10, 1.0f)), {}, adjacent16()),
      doctest::Contains("less than one frame"));
}

TEST_CASE("an old Dräger .get skips its text header, ended by two empty lines") {
  TempDir tmp;
  std::string s =
      "---Draeger EIT-Software---\r\n---Protocol Data-----\r\n\r\nFrames:  2\r\n\r\n\r\n";
  s += floats(256, 5.0f) + floats(256, 6.0f);
  auto r = open_recording_reader(tmp.write("old.get", s), {}, adjacent16());
  CHECK(r->info().format == "Dräger .get (≤2007)");
  CHECK(r->info().n_frames == 2);
  std::vector<float> v(208);
  REQUIRE(r->read(0, v));
  CHECK(v[0] == doctest::Approx(5.0f + r->map().source_index(0)));
}

TEST_CASE(
    "OpenEIT text: bad lines are counted bad frames, other lines skipped, both dialects read") {
  eit::recon::ProtocolOptions po;
  po.n_electrodes = 8;
  po.drive_distance = 4;
  const Protocol model8 = eit::recon::make_protocol(po);
  REQUIRE(model8.n_meas() == 32);
  std::string good_sim = "magnitudes : ", good_fw = "magnitudes: ", bad = "magnitudes: ";
  for (int i = 0; i < 32; ++i) {
    good_sim += fmt::format("{},", 0.5 + i);
    good_fw += fmt::format("{:8d}.{:04d},", 100 + i, 25);
    bad += i == 7 ? "12x," : "1.0,";
  }
  TempDir tmp;
  const std::string text = "\nbooting firmware v1\r\n" + good_fw + "\r\n" + bad + "\r\n" +
                           good_sim + "\n\n" + good_fw;  // last line without a newline
  auto r = open_recording_reader(tmp.write("mixed.txt", text), {}, model8);
  CHECK(r->info().format == "OpenEIT text");
  CHECK(r->info().n_frames == 4);
  std::vector<float> v(32);
  REQUIRE(r->read(0, v));
  CHECK(v[0] == doctest::Approx(100.0025));
  CHECK_FALSE(r->read(1, v));
  REQUIRE(r->read(2, v));
  CHECK(v[31] == doctest::Approx(31.5));
  REQUIRE(r->read(3, v));
  CHECK(r->bad_frames() == 1);
  CHECK(r->info().warnings.front().find("1 lines that are not frames") != std::string::npos);
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("none.txt", "hello\nworld\n"),
                                          format_option("openeit"), model8),
                    doctest::Contains("no 'magnitudes:' line"));
  // Lines ended by a lone '\r' (the dashboard's Record): one frame each, not one line of all.
  const std::string cr = good_fw + "\r" + good_fw + "\r" + good_sim + "\r" + good_fw + "\r";
  auto c = open_recording_reader(tmp.write("cr.txt", cr), {}, model8);
  CHECK(c->info().n_frames == 4);
  REQUIRE(c->read(2, v));
  CHECK(v[31] == doctest::Approx(31.5));
}

TEST_CASE("CSV: header row skipped, a non-numeric row is a bad frame, the rest are read") {
  TempDir tmp;
  std::string csv = "v0";
  for (int i = 1; i < 208; ++i) csv += fmt::format(",v{}", i);
  csv += "\n";
  for (int row = 0; row < 3; ++row) {
    for (int i = 0; i < 208; ++i)
      csv += (row == 1 && i == 100) ? "oops,"
                                    : fmt::format("{}{}", row * 1000 + i, i < 207 ? "," : "");
    csv += "\r\n";
  }
  auto r = open_recording_reader(tmp.write("frames.csv", csv), {}, adjacent16());
  CHECK(r->info().n_frames == 3);
  CHECK(r->map().is_identity());
  std::vector<float> v(208);
  REQUIRE(r->read(0, v));
  CHECK(v[207] == 207.0f);
  CHECK_FALSE(r->read(1, v));
  REQUIRE(r->read(2, v));
  CHECK(v[0] == 2000.0f);
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("odd.csv", "1,2,3\n4,5,6\n"), {}, adjacent16()),
                    doctest::Contains("3 values per frame"));
}

TEST_CASE("CSV: a first row of column numbers is a header, not a frame that spoils the reference") {
  // pandas' DataFrame(frames).to_csv(index=False) writes the header 0,1,…,207.
  TempDir tmp;
  for (const int first : {0, 1}) {
    CAPTURE(first);
    std::string csv;
    for (int i = 0; i < 208; ++i) csv += fmt::format("{}{}", first + i, i < 207 ? "," : "\n");
    for (int row = 0; row < 3; ++row)
      for (int i = 0; i < 208; ++i)
        csv += fmt::format("{}{}", 1.0 + 0.01 * row, i < 207 ? "," : "\n");
    auto r = open_recording_reader(tmp.write("pandas.csv", csv), {}, adjacent16());
    CHECK(r->info().n_frames == 3);
    REQUIRE(r->info().warnings.size() == 1);
    CHECK(r->info().warnings[0].find("column numbers") != std::string::npos);
    std::vector<float> v(208);
    REQUIRE(r->read(0, v));
    CHECK(v[5] == 1.0f);
  }
}

TEST_CASE(".npy stacks read, a short data block keeps its whole frames, wrong dtypes refused") {
  TempDir tmp;
  auto npy = [](const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string s = "\x93NUMPY\x01";
    s += '\0';
    append<uint16_t>(s, uint16_t(header.size()));
    return s + header + data;
  };
  std::string data;
  for (int f = 0; f < 3; ++f) data += floats(256, 10.0f * f);
  auto r = open_recording_reader(
      tmp.write("ok.npy",
                npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 256), }", data)),
      {}, adjacent16());
  CHECK(r->info().n_frames == 3);
  CHECK(r->map().device().full_table);
  std::vector<float> v(208);
  REQUIRE(r->read(2, v));
  CHECK(v[0] == 22.0f);  // full table: model value 0 is entry 2

  // 30 frames saved as columns (208 × 30): named as transposed, not sent to --layout.
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("t.npy", npy("{'descr': '<f4', 'fortran_order': False, "
                                                   "'shape': (208, 30), }",
                                                   floats(208 * 30, 0.0f))),
                            {}, adjacent16()),
      doctest::Contains("shape (208, 30) is values × frames"));

  auto cut = open_recording_reader(
      tmp.write("cut.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 256), }",
                               data + floats(30, 0))),
      {}, adjacent16());
  CHECK(cut->info().n_frames == 3);
  CHECK(cut->info().warnings.front().find("shape says 5 frames") != std::string::npos);
  CHECK_THROWS_WITH(
      open_recording_reader(
          tmp.write("int.npy",
                    npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 256), }", data)),
          {}, adjacent16()),
      doctest::Contains("descr '<i4'"));
  CHECK_THROWS_WITH(
      open_recording_reader(
          tmp.write("f.npy",
                    npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 256), }", data)),
          {}, adjacent16()),
      doctest::Contains("fortran_order"));
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("junk.npy", "\x93NUMPY junk"), {}, adjacent16()),
      doctest::Contains("junk.npy"));
}

TEST_CASE("raw float32 frames need their size, a cut frame is reported, not invented") {
  TempDir tmp;
  const auto path = tmp.write("frames.f32", floats(208 * 2 + 50, 0.0f));
  CHECK_THROWS_WITH(open_recording_reader(path, {}, adjacent16()),
                    doctest::Contains("--values-per-frame"));
  RecordingOptions o;
  o.values_per_frame = 208;
  auto r = open_recording_reader(path, o, adjacent16());
  CHECK(r->info().n_frames == 2);
  CHECK(r->info().truncated_bytes == 200);
  std::vector<float> v(208);
  REQUIRE(r->read(1, v));
  CHECK(v[0] == 208.0f);
  o.values_per_frame = 200;
  CHECK_THROWS_WITH(open_recording_reader(path, o, adjacent16()), doctest::Contains("--layout"));
  // The stream decoder's name (run --recording-format f32-stream) reads the same file whole, as
  // reconstruct and a reference taken from the file do.
  o.values_per_frame = 208;
  o.format = "f32-stream";
  CHECK(open_recording_reader(path, o, adjacent16())->info().n_frames == 2);
  o.values_per_frame = size_t{1} << 25;
  CHECK_THROWS_WITH(open_recording_reader(path, o, adjacent16()),
                    doctest::Contains("frames.f32: 33554432 values per frame, expected at most"));
}

TEST_CASE("unknown formats and missing files are named in the error") {
  TempDir tmp;
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("x.bin", "\x01\x02\x03"), {}, adjacent16()),
                    doctest::Contains("x.bin: cannot tell the format"));
  CHECK_THROWS_WITH(open_recording_reader(tmp.path() / "absent.eit", {}, adjacent16()),
                    doctest::Contains("absent.eit"));
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("y.dat", "1"), format_option("sheffield"), adjacent16()),
      doctest::Contains("format 'sheffield' unknown"));
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("z.mat", "not a mat file"), {}, adjacent16()),
                    doctest::Contains("z.mat"));
}

namespace {

// A MATLAB v5 file holding one rows×cols double matrix `name` with value r + 1000·c.
std::string mat_v5(const std::string& name, int32_t rows, int32_t cols,
                   uint32_t name_len_claim = 0) {
  auto element = [](uint32_t type, const std::string& data) {
    std::string e;
    append<uint32_t>(e, type);
    append<uint32_t>(e, uint32_t(data.size()));
    e += data;
    e.resize((e.size() + 7) / 8 * 8, '\0');
    return e;
  };
  std::string flags, dims, values;
  append<uint32_t>(flags, 6);  // mxDOUBLE_CLASS
  append<uint32_t>(flags, 0);
  append<int32_t>(dims, rows);
  append<int32_t>(dims, cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) append<double>(values, r + 1000.0 * c);
  std::string name_el = element(1, name);
  if (name_len_claim) std::memcpy(name_el.data() + 4, &name_len_claim, 4);
  const std::string body = element(6, flags) + element(5, dims) + name_el + element(9, values);
  std::string header = "MATLAB 5.0 MAT-file, eitstream test";
  header.resize(116, ' ');
  header += std::string(8, '\0');
  append<uint16_t>(header, 0x0100);
  header += "IM";
  return header + element(14, body);
}

}  // namespace

TEST_CASE(".mat frames are columns, a damaged element length is refused before it is allocated") {
  TempDir tmp;
  auto r = open_recording_reader(tmp.write("ok.mat", mat_v5("frames", 256, 3)), {}, adjacent16());
  CHECK(r->info().n_frames == 3);
  std::vector<float> v(208);
  REQUIRE(r->read(2, v));
  CHECK(v[0] == 2002.0f);  // full table entry 2 of frame 2
  auto rows =
      open_recording_reader(tmp.write("rows.mat", mat_v5("frames", 4, 208)), {}, adjacent16());
  CHECK(rows->info().n_frames == 4);  // only the row length fits: one frame per row
  REQUIRE(rows->read(3, v));
  CHECK(v[1] == 1003.0f);
  CHECK_THROWS_WITH(
      open_recording_reader(tmp.write("bad.mat", mat_v5("frames", 256, 3, 0x72727272)), {},
                            adjacent16()),
      doctest::Contains("claims 1920103026 bytes"));
  // Two variables of one name, an empty one first (found by fuzz_mat). libmatio's read by name
  // takes the first, whose data did not match the dimensions chosen (and whose unchecked size
  // libmatio allocated: 2 GB in a later fuzz input). The variable chosen is now read by its
  // position, so it is the one whose size was checked.
  const std::string twins = mat_v5("zc", 256, 0) + mat_v5("zc", 256, 2).substr(128);
  auto twin = open_recording_reader(tmp.write("twins.mat", twins), {}, adjacent16());
  CHECK(twin->info().n_frames == 2);
  REQUIRE(twin->read(1, v));
  CHECK(v[0] == 1002.0f);
  // A "small" element (size in the tag's upper half) claiming more than 4 bytes (fuzz_mat again).
  std::string small = mat_v5("frames", 256, 3);
  const uint32_t bogus = 0xfe000005u;  // dims tag at byte 128 + 8 + 16
  std::memcpy(small.data() + 152, &bogus, 4);
  CHECK_THROWS_WITH(open_recording_reader(tmp.write("small.mat", small), {}, adjacent16()),
                    doctest::Contains("small element at byte 152 claims 65024 bytes"));
}
