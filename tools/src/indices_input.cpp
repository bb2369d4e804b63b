#include "indices_input.hpp"

#include <hdf5.h>

#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/all_finite.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/hdf5_io.hpp"
#include "eit/recon/model_groups.hpp"

namespace eit::cli {
namespace {

namespace h5 = recon::h5;

std::runtime_error fail(const std::string& where, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", where, what));
}

// An optional per-frame column: n_frames values, or empty when the file has none.
template <typename T>
std::vector<T> column(hid_t root, const char* name, size_t n_frames, const std::string& file,
                      std::vector<T> (*read)(hid_t, const std::string&, const std::string&)) {
  if (!h5::exists(root, name)) return {};
  const std::string where = fmt::format("{}: /{}", file, name);
  std::vector<T> out = read(root, name, where);
  if (out.size() != n_frames)
    throw fail(where, fmt::format("{} rows, /images has {}", out.size(), n_frames));
  return out;
}

}  // namespace

bool is_image_file(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext != ".h5" && ext != ".hdf5") return false;
  const std::string file = path.string();
  const h5::QuietErrors quiet;
  const h5::Handle f = h5::open_file(file);
  if (!h5::has_attr(f.get(), "format")) return true;
  return h5::read_attr_string(f.get(), "format", file) == "eitstream-images";
}

ImageSequence read_image_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  const h5::QuietErrors quiet;  // refusals below say what is wrong
  const h5::Handle f = h5::open_file(file);
  const hid_t root = f.get();
  if (h5::has_attr(root, "format")) {
    const auto format = h5::read_attr_string(root, "format", file);
    if (format != "eitstream-images")
      throw fail(file, fmt::format("format '{}', expected 'eitstream-images'", format));
  }
  ImageSequence s;
  const auto shape = h5::dataset_shape(root, "images", file + ": /images");
  if (shape.size() != 2)
    throw fail(file + ": /images",
               fmt::format("rank {}, expected 2 [n_frames, n_out]", shape.size()));
  s.n_frames = shape[0];
  s.n_out = shape[1];
  s.images = h5::read_float32(root, "images", file + ": /images");
  s.seq = column(root, "seq", s.n_frames, file, &h5::read_uint64);
  s.t_ns = column(root, "t_acquired_ns", s.n_frames, file, &h5::read_int64);
  s.flags = column(root, "flags", s.n_frames, file, &h5::read_uint32);
  if (s.seq.empty())
    for (size_t i = 0; i < s.n_frames; ++i) s.seq.push_back(i);
  if (s.t_ns.empty()) s.t_ns.assign(s.n_frames, 0);
  if (s.flags.empty()) s.flags.assign(s.n_frames, 0);
  if (h5::has_attr(root, "frame_rate_hz"))  // 0 = unknown; never negative, NaN or infinite
    s.rate_hz = h5::read_attr_finite_from(root, "frame_rate_hz", 0, file);

  // The Model file's /geometry, read and checked as a model's: a forged element index would
  // otherwise be followed into the node table.
  s.geometry = recon::read_geometry(root, file);
  if (const auto* grid = std::get_if<recon::GridGeometry>(&s.geometry); grid && grid->nz > 1)
    throw fail(file + ": /geometry",
               "a voxel grid of a 3-D model: the indices need one 2-D image per frame");
  recon::validate_geometry(s.geometry, s.n_out, fmt::format("/images has {} columns", s.n_out), -1,
                           file + ": /geometry");
  s.description = fmt::format("{} ({} frames of {} values)", file, s.n_frames, s.n_out);
  return s;
}

ImageSequence reconstruct_recording(const std::filesystem::path& path, const recon::Model& model,
                                    const std::string& reference,
                                    const acquisition::RecordingOptions& options) {
  auto reader = acquisition::open_recording_reader(path, options, model.protocol);
  const auto& info = reader->info();
  // What the reader found at set-up (a truncated last frame, a missing rate): the indices of a
  // cut-short file must not pass for those of the whole recording.
  for (const auto& w : info.warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);
  const size_t n = info.n_frames, m = model.n_meas();
  if (n == 0) throw fail(path.string(), "no whole frame");
  std::vector<float> values(n * m);
  std::vector<uint32_t> flags(n, 0);
  // A frame that does not decode, or holds a NaN or infinity, is flagged: it stays out of the
  // reference and gives an invalid sample, as in `reconstruct` and `run`.
  for (size_t i = 0; i < n; ++i)
    if (!reader->read(i, {&values[i * m], m}) || !pipeline::all_finite(&values[i * m], m))
      flags[i] |= pipeline::kFlagNonFinite;

  std::vector<double> v_ref(m, 0.0);
  std::string ref_text;
  size_t ref_frames = 0;
  if (reference == "model") {
    if (model.v_ref.size() == 0)
      throw fail(model.id, "the model has no v_ref: use --reference all or first:N");
    for (size_t j = 0; j < m; ++j) v_ref[j] = model.v_ref(static_cast<Eigen::Index>(j));
    ref_text = "model";
  } else {
    if (reference == "all") {
      ref_frames = n;
    } else if (reference.starts_with("first:")) {
      try {
        ref_frames = std::stoul(reference.substr(6));
      } catch (const std::exception&) {
        ref_frames = 0;
      }
      if (ref_frames == 0 || ref_frames > n)
        throw fail("--reference",
                   fmt::format("'{}': expected first:N with 1 ≤ N ≤ {}", reference, n));
    } else {
      throw fail("--reference", fmt::format("'{}': expected all, first:N or model", reference));
    }
    size_t used = 0;
    for (size_t i = 0; i < ref_frames; ++i) {
      if (flags[i]) continue;
      for (size_t j = 0; j < m; ++j) v_ref[j] += values[i * m + j];
      ++used;
    }
    if (used == 0) throw fail(path.string(), "no decodable frame for the reference");
    for (auto& v : v_ref) v /= static_cast<double>(used);
    ref_text = fmt::format("mean of {} frames", used);
  }

  pipeline::CpuReconstructor rec(model, pipeline::CpuOptions{1});
  rec.set_reference(v_ref, model.normalize);
  ImageSequence s;
  s.n_frames = n;
  s.n_out = model.n_out();
  s.images.assign(n * s.n_out, 0.0f);
  s.flags = flags;
  s.rate_hz = info.rate_hz;
  for (size_t i = 0; i < n; ++i) {
    pipeline::FrameSlot slot;
    slot.seq = i;
    slot.flags = flags[i];
    slot.values = &values[i * m];
    slot.image = &s.images[i * s.n_out];
    pipeline::FrameSlot* batch[1] = {&slot};
    rec.submit(batch);
    rec.complete(batch, true);
    s.flags[i] = slot.flags;
    s.seq.push_back(i);
    s.t_ns.push_back(info.rate_hz > 0 ? static_cast<int64_t>(1e9 * i / info.rate_hz) : 0);
  }
  s.geometry = model.geometry;
  s.description =
      fmt::format("{} ({}, {} frames at {} Hz) → model {} ({}), reference {}", path.string(),
                  info.format, n, info.rate_hz, model.id, model.algorithm, ref_text);
  return s;
}

}  // namespace eit::cli
