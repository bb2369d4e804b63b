// libFuzzer target: the image-file reader of `eitstream indices` (read_image_file,
// tools/src/indices_input.cpp; files of `run --record` and `reconstruct`, docs/formats.md) on
// well-formed HDF5 files whose content the input decides, starting from a valid file of 3
// images on a grid, a voxel grid (refused: the indices need 2-D images) or a mesh with output
// on its nodes or elements, with the /protocol group and an /indices annex the reader must
// ignore (fuzzed_hdf5.hpp: each attribute, dataset and group kept, left out or given another
// type, shape or values). What must hold: a returned sequence has as many frames and columns as
// /images holds, n_frames × n_out values and a seq, time and flags per frame (seq 0..n-1 when
// the file has none), a finite frame rate ≥ 0, and is the same when read again; a file whose
// read parts are all as valid (not a voxel grid) reads back exactly the values written; no
// HDF5 object is left open, whether the reader returned or threw.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <variant>
#include <vector>

#include <H5Epublic.h>

#include "fuzz_support.hpp"
#include "fuzzed_hdf5.hpp"
#include "fuzzed_model_groups.hpp"
#include "indices_input.hpp"

namespace {

using eit::fuzz::FuzzedHdf5;
using eit::fuzz::GeometryKind;
using eit::fuzz::H5Value;
namespace h5 = eit::recon::h5;

constexpr size_t kFrames = 3;
const std::vector<double> kSeq = {5, 6, 9}, kTimes = {0, 5e7, 2e8}, kFlags = {0, 1, 4};

double pixel(size_t i) { return 0.5 * double(i) - 2.0; }  // exact in float32

struct Written {
  GeometryKind geometry = eit::fuzz::kGridGeometry;
  bool readable = true;  // every part the reader reads is as valid
};

// The /indices annex (indices/hdf5_indices_annex.hpp) with 2 regions and one breath.
void write_indices(FuzzedHdf5& f, hid_t root, size_t n_out) {
  const h5::Handle g = f.group(root, "indices");
  if (!g.valid()) return;
  f.dataset(g.get(), "seq", H5Value::array(H5Value::kU64, {kFrames}, kSeq));
  f.dataset(g.get(), "regions",
            H5Value::array(H5Value::kF64, {kFrames, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  f.dataset(g.get(), "region_names", {H5Value::kVarStr, {3}, {}, "global"});
  f.dataset(g.get(), "breaths", H5Value::array(H5Value::kF64, {1, 2}, {0.5, 1.5}));
  f.dataset(g.get(), "breath_columns", {H5Value::kVarStr, {2}, {}, "t_start"});
  f.dataset(g.get(), "tidal",
            H5Value::array(H5Value::kF32, {1, n_out}, std::vector<double>(n_out, 0.25)));
}

Written write_images(FuzzedDataProvider& in, const std::string& path) {
  FuzzedHdf5 f(in, {"eitstream-images", "eitstream-frames", "grid", "mesh", "nodes", "elements",
                    "interleaved", "std", ""});
  Written w;
  w.geometry = GeometryKind(in.ConsumeIntegralInRange(0, 3));
  const size_t n_out = eit::fuzz::geometry_outputs(w.geometry);
  const h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) std::abort();
  const hid_t root = file.get();
  bool& ok = w.readable;
  ok &= f.attribute(root, "format", H5Value::string("eitstream-images"));
  f.attribute(root, "version", H5Value::integer(1));
  f.attribute(root, "model_id", H5Value::string("0123456789abcdef"));
  f.attribute(root, "algorithm", H5Value::string("jac"));
  f.attribute(root, "stream", H5Value::string("fuzz"));
  ok &= f.attribute(root, "frame_rate_hz", H5Value::real(20.0));
  f.attribute(root, "reference", H5Value::string("first:10"));
  f.attribute(root, "source", H5Value::string("synthetic"));
  std::vector<double> images(kFrames * n_out);
  for (size_t i = 0; i < images.size(); ++i) images[i] = pixel(i);
  ok &= f.dataset(root, "images", H5Value::array(H5Value::kF32, {kFrames, n_out}, images));
  ok &= f.dataset(root, "seq", H5Value::array(H5Value::kU64, {kFrames}, kSeq));
  ok &= f.dataset(root, "t_acquired_ns", H5Value::array(H5Value::kI64, {kFrames}, kTimes));
  f.dataset(root, "t_published_ns", H5Value::array(H5Value::kI64, {kFrames}, {1, 2, 3}));
  ok &= f.dataset(root, "flags", H5Value::array(H5Value::kU32, {kFrames}, kFlags));
  f.dataset(root, "dropped_before", H5Value::array(H5Value::kU32, {kFrames}, {0, 0, 2}));
  ok &= eit::fuzz::write_geometry(f, root, w.geometry);
  ok &= w.geometry != eit::fuzz::kVoxelGeometry;
  eit::fuzz::write_protocol(f, root, {4, 1, 1, "std", false, {0, 1, 2, 3}, {0, 2, 3, 1, 0, 1}});
  if (in.ConsumeBool()) write_indices(f, root, n_out);
  return w;
}

// What the file holds, read here with plain HDF5 calls: /images' extent, whether it has /seq.
struct Held {
  std::vector<hsize_t> images;
  bool seq = false;
};
Held held(const std::string& path) {
  const h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  const h5::Handle set(H5Dopen2(file.get(), "images", H5P_DEFAULT), H5Dclose);
  const h5::Handle space(H5Dget_space(set.get()), H5Sclose);
  Held h;
  h.images.resize(std::max(0, H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), h.images.data(), nullptr);
  h.seq = H5Lexists(file.get(), "seq", H5P_DEFAULT) > 0;
  return h;
}

bool same(const eit::cli::ImageSequence& a, const eit::cli::ImageSequence& b) {
  const auto bits = [](const std::vector<float>& v) {  // NaN == NaN, bit for bit
    std::vector<uint32_t> u(v.size());
    if (!v.empty()) std::memcpy(u.data(), v.data(), v.size() * sizeof(float));
    return u;
  };
  return a.n_frames == b.n_frames && a.n_out == b.n_out && bits(a.images) == bits(b.images) &&
         a.seq == b.seq && a.t_ns == b.t_ns && a.flags == b.flags &&
         std::memcmp(&a.rate_hz, &b.rate_hz, sizeof(double)) == 0 &&
         a.geometry.index() == b.geometry.index();
}

void check_sequence(const eit::cli::ImageSequence& s, const Written& w, const std::string& path) {
  const Held h = held(path);
  if (h.images.size() != 2 || s.n_frames != h.images[0] || s.n_out != h.images[1]) std::abort();
  if (s.images.size() != s.n_frames * s.n_out || s.seq.size() != s.n_frames ||
      s.t_ns.size() != s.n_frames || s.flags.size() != s.n_frames)
    std::abort();
  for (size_t k = 0; k < s.n_frames && !h.seq; ++k)
    if (s.seq[k] != k) std::abort();
  if (!std::isfinite(s.rate_hz) || s.rate_hz < 0) std::abort();
  if (!w.readable) return;
  if (s.n_frames != kFrames || s.n_out != eit::fuzz::geometry_outputs(w.geometry) ||
      s.rate_hz != 20.0)
    std::abort();
  for (size_t i = 0; i < s.images.size(); ++i)
    if (s.images[i] != float(pixel(i))) std::abort();
  for (size_t k = 0; k < kFrames; ++k)
    if (s.seq[k] != kSeq[k] || s.t_ns[k] != int64_t(kTimes[k]) || s.flags[k] != kFlags[k])
      std::abort();
  const bool is_mesh = std::holds_alternative<eit::recon::MeshGeometry>(s.geometry);
  if (is_mesh !=
      (w.geometry == eit::fuzz::kMeshOnNodes || w.geometry == eit::fuzz::kMeshOnElements))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("images.h5");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = file.path().string();
  const Written w = write_images(in, path);
  eit::fuzz::check_nothing_open("after writing the file");
  eit::cli::ImageSequence s;
  try {
    s = eit::cli::read_image_file(path);
  } catch (const std::exception&) {
    eit::fuzz::check_nothing_open("after read_image_file threw");
    if (w.readable) std::abort();  // a valid image file must be read
    return 0;
  }
  eit::fuzz::check_nothing_open("after read_image_file");
  check_sequence(s, w, path);
  if (!same(s, eit::cli::read_image_file(path))) std::abort();
  eit::fuzz::check_nothing_open("after the second read");
  return 0;
}
