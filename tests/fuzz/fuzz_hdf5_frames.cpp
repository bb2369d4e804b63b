// libFuzzer target: the raw-frame recording reader (acquisition/src/hdf5_frames_reader.cpp, files
// of `eitstream run --record-raw`, docs/formats.md) on well-formed HDF5 files whose content the
// input decides, starting from a valid recording of 3 frames, real or complex (interleaved),
// read as /frames or as the one-frame /v_ref (fuzzed_hdf5.hpp: each attribute, dataset and group
// kept, left out or given another type, shape or values). What must hold: a reader that opens
// counts the frames the dataset holds (its rows; 1 for a vector), reads each the same twice and
// nothing past the last, gives each frame's origin from the per-frame columns that match the
// frames row for row (none without /seq) and none past the last, and a finite frame rate ≥ 0; a
// file whose read parts are all as valid opens, and reads back the values, seqs, gaps and drops
// written; no HDF5 object is left open, whether it opened or threw.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <H5Epublic.h>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/frame.hpp"
#include "fuzz_support.hpp"
#include "fuzzed_hdf5.hpp"
#include "fuzzed_model_groups.hpp"

namespace {

using eit::fuzz::FuzzedHdf5;
using eit::fuzz::H5Value;
namespace h5 = eit::recon::h5;

constexpr size_t kFrames = 3;
const std::vector<double> kSeq = {5, 6, 9}, kFlags = {0, 0, 4}, kDropped = {0, 0, 2};

// Value j of row k: multiples of 1/4, exact in float32.
double value(size_t k, size_t j, size_t width) { return 0.25 * double(k * width + j) - 3.0; }

// What the input chose, for the checks.
struct Written {
  bool complex = false;
  std::string variable;  // RecordingOptions::variable
  bool readable = true;  // every part the reader reads is as valid
  bool columns = true;   // /seq, /flags and /dropped_before as valid
};

const eit::recon::Protocol& model() { return eit::fuzz::protocol(8); }

Written write_recording(FuzzedDataProvider& in, const std::string& path) {
  FuzzedHdf5 f(in, {"eitstream-frames", "eitstream-images", "interleaved", "std", "rotate_meas",
                    "frames", "v_ref", ""});
  Written w;
  // The layout: real or complex frames, read as /frames, /v_ref or /seq (refused: 3 values).
  const int layout = in.ConsumeIntegralInRange(0, 5);
  w.complex = layout % 2 == 1;
  const char* variables[] = {"", "v_ref", "seq"};
  w.variable = variables[layout / 2];
  const size_t n_meas = model().n_meas(), width = (w.complex ? 2 : 1) * n_meas;
  const h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) std::abort();
  const hid_t root = file.get();
  bool& ok = w.readable;
  ok &= f.attribute(root, "format", H5Value::string("eitstream-frames"));
  f.attribute(root, "version", H5Value::integer(1));
  f.attribute(root, "model_id", H5Value::string("0123456789abcdef"));
  f.attribute(root, "algorithm", H5Value::string("jac"));
  f.attribute(root, "stream", H5Value::string("fuzz"));
  ok &= f.attribute(root, "frame_rate_hz", H5Value::real(20.0));
  f.attribute(root, "reference", H5Value::string("model"));
  f.attribute(root, "source", H5Value::string("synthetic"));
  f.attribute(root, "n_meas", H5Value::integer(int64_t(width)));
  if (w.complex) ok &= f.attribute(root, "complex", H5Value::string("interleaved"));
  std::vector<double> frames(kFrames * width), v_ref(width);
  for (size_t k = 0; k < kFrames; ++k)
    for (size_t j = 0; j < width; ++j) frames[k * width + j] = value(k, j, width);
  for (size_t j = 0; j < width; ++j) v_ref[j] = value(kFrames, j, width);
  const bool frames_ok =
      f.dataset(root, "frames", H5Value::array(H5Value::kF32, {kFrames, width}, frames));
  w.columns = f.dataset(root, "seq", H5Value::array(H5Value::kU64, {kFrames}, kSeq));
  f.dataset(root, "t_acquired_ns", H5Value::array(H5Value::kI64, {kFrames}, {0, 5e7, 2e8}));
  f.dataset(root, "t_published_ns", H5Value::array(H5Value::kI64, {kFrames}, {1, 2, 3}));
  w.columns &= f.dataset(root, "flags", H5Value::array(H5Value::kU32, {kFrames}, kFlags));
  w.columns &=
      f.dataset(root, "dropped_before", H5Value::array(H5Value::kU32, {kFrames}, kDropped));
  const bool v_ref_ok = f.dataset(root, "v_ref", H5Value::array(H5Value::kF64, {width}, v_ref));
  ok &= eit::fuzz::write_protocol(f, root, eit::fuzz::protocol_layout(model()));
  // /frames' per-frame columns are read with it; another variable is read alone.
  ok &= w.variable.empty() ? frames_ok && w.columns : w.variable == "v_ref" && v_ref_ok;
  return w;
}

// What the file holds, read here with plain HDF5 calls: the frame count of the variable read
// (its rows; 1 for a vector) and the per-frame columns (empty when absent or unreadable).
struct Held {
  size_t frames = 0;
  std::vector<uint64_t> seq, flags, dropped;
};

std::vector<uint64_t> column(hid_t file, const char* name) {
  const h5::Handle set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  const h5::Handle space(set.valid() ? H5Dget_space(set.get()) : H5I_INVALID_HID, H5Sclose);
  const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : 0;
  std::vector<uint64_t> out(n > 0 && n <= (1 << 22) ? size_t(n) : 0);  // the reader allows less
  if (!out.empty() &&
      H5Dread(set.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    out.clear();
  return out;
}

Held held(const std::string& path, const std::string& variable) {
  const h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  const h5::Handle set(H5Dopen2(file.get(), variable.c_str(), H5P_DEFAULT), H5Dclose);
  const h5::Handle space(H5Dget_space(set.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1 && rank != 2) std::abort();  // the reader refuses any other rank
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  Held h;
  h.frames = rank == 1 ? 1 : dims[0];
  h.seq = column(file.get(), "seq");
  h.flags = column(file.get(), "flags");
  h.dropped = column(file.get(), "dropped_before");
  return h;
}

// Frame i's origin as the file's columns give it: only those that match the frames row for row
// count (docs/formats.md), and none at all for a variable other than /frames.
bool expected_origin(const Held& h, bool frames, size_t i, eit::acquisition::FrameOrigin& o) {
  if (!frames || h.seq.size() != h.frames) return false;
  o.seq = h.seq[i];
  o.gap_before = h.flags.size() == h.frames && (h.flags[i] & eit::pipeline::kFlagGapBefore) != 0;
  o.dropped_before = h.dropped.size() == h.frames ? uint32_t(h.dropped[i]) : 0;
  return true;
}

void check_reader(eit::acquisition::RecordingReader& r, const Written& w, const std::string& path) {
  const auto& info = r.info();
  const size_t n = info.n_frames;
  const std::string variable = w.variable.empty() ? "frames" : w.variable;
  const Held h = held(path, variable);
  if (n != h.frames || n == 0) std::abort();
  if (info.bytes_total != std::filesystem::file_size(path)) std::abort();
  if (!std::isfinite(info.rate_hz) || info.rate_hz < 0) std::abort();
  const size_t width = (w.complex ? 2 : 1) * model().n_meas();
  std::vector<float> a(r.n_values()), b(r.n_values());
  eit::acquisition::FrameOrigin o, expected;
  const bool has_origin = r.origin(0, o);
  for (size_t i = 0; i < n && i < 4096; ++i) {
    const bool ok_a = r.read(i, a), ok_b = r.read(i, b);
    if (ok_a != ok_b) std::abort();
    if (ok_a && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0) std::abort();
    if (r.origin(i, o) != has_origin) std::abort();
    if (has_origin != expected_origin(h, w.variable.empty(), i, expected)) std::abort();
    if (has_origin && (o.seq != expected.seq || o.gap_before != expected.gap_before ||
                       o.dropped_before != expected.dropped_before))
      std::abort();
    if (!w.readable) continue;
    // Valid: the values written (the real parts of complex pairs), and the recorded origins.
    if (!ok_a || a.size() != model().n_meas()) std::abort();
    const size_t row = w.variable.empty() ? i : kFrames;
    for (size_t j = 0; j < a.size(); ++j)
      if (a[j] != float(value(row, (w.complex ? 2 : 1) * j, width))) std::abort();
    if (w.variable.empty() != has_origin) std::abort();
    if (has_origin &&
        (o.seq != kSeq[i] || o.gap_before != (kFlags[i] != 0) || o.dropped_before != kDropped[i]))
      std::abort();
  }
  if (r.read(n, a) || r.origin(n, o)) std::abort();     // nothing past the end
  if (w.readable && r.bad_frames() != 1) std::abort();  // the read past the end alone
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.h5");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = file.path().string();
  const Written w = write_recording(in, path);
  eit::fuzz::check_nothing_open("after writing the file");
  eit::acquisition::RecordingOptions o;
  o.format = "h5";
  o.variable = w.variable;
  try {
    const auto r = eit::acquisition::open_recording_reader(path, o, model());
    check_reader(*r, w, path);
  } catch (const std::exception&) {
    if (w.readable) std::abort();  // a valid recording must open
  }
  eit::fuzz::check_nothing_open("after the reader");
  return 0;
}
