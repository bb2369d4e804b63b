#include "indices_input.hpp"

#include <hdf5.h>

#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/frame.hpp"

namespace eit::cli {
namespace {

// Closes an HDF5 identifier on scope exit.
struct Id {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Id() {
    if (id >= 0) close(id);
  }
};

std::runtime_error fail(const std::string& where, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", where, what));
}

template <typename T>
std::vector<T> read_dataset(hid_t loc, const char* name, hid_t type, const std::string& file,
                            std::vector<hsize_t>* shape = nullptr) {
  const std::string where = fmt::format("{}: /{}", file, name);
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) throw fail(where, "missing");
  Id ds{H5Dopen2(loc, name, H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) throw fail(where, "cannot open");
  Id space{H5Dget_space(ds.id), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(space.id);
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  size_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<T> out(n);
  if (n && H5Dread(ds.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw fail(where, "cannot read");
  if (shape) *shape = dims;
  return out;
}

bool has_attr(hid_t loc, const char* name) { return H5Aexists(loc, name) > 0; }

// Attribute `name` (open as `a`) is read into one value: HDF5 writes all an attribute holds.
void require_one_value(const Id& a, const char* name, const std::string& where) {
  if (a.id < 0) throw fail(where, fmt::format("attribute {} missing", name));
  const Id space{H5Aget_space(a.id), H5Sclose};
  const hssize_t n = space.id >= 0 ? H5Sget_simple_extent_npoints(space.id) : -1;
  if (n != 1) throw fail(where, fmt::format("attribute {} holds {} values, expected 1", name, n));
}

double attr_double(hid_t loc, const char* name, const std::string& where) {
  const Id a{H5Aopen(loc, name, H5P_DEFAULT), H5Aclose};
  require_one_value(a, name, where);
  double v = 0;
  if (H5Aread(a.id, H5T_NATIVE_DOUBLE, &v) < 0)
    throw fail(where, fmt::format("attribute {} unreadable", name));
  return v;
}

std::string attr_string(hid_t loc, const char* name, const std::string& where) {
  const Id a{H5Aopen(loc, name, H5P_DEFAULT), H5Aclose};
  require_one_value(a, name, where);
  Id type{H5Aget_type(a.id), H5Tclose};
  if (H5Tget_class(type.id) != H5T_STRING)
    throw fail(where, fmt::format("attribute {} is not text", name));
  if (H5Tis_variable_str(type.id) > 0) {
    Id mem{H5Tcopy(H5T_C_S1), H5Tclose};
    H5Tset_size(mem.id, H5T_VARIABLE);
    H5Tset_cset(mem.id, H5Tget_cset(type.id));
    char* s = nullptr;
    if (H5Aread(a.id, mem.id, &s) < 0) throw fail(where, fmt::format("attribute {}", name));
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  std::string out(H5Tget_size(type.id), '\0');
  H5Aread(a.id, type.id, out.data());
  return out.substr(0, out.find('\0'));
}

}  // namespace

ImageSequence read_image_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Id f{H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (f.id < 0) throw fail(file, "cannot open as HDF5");
  if (has_attr(f.id, "format")) {
    const auto format = attr_string(f.id, "format", file);
    if (format != "eitstream-images")
      throw fail(file, fmt::format("format '{}', expected 'eitstream-images'", format));
  }
  ImageSequence s;
  std::vector<hsize_t> shape;
  s.images = read_dataset<float>(f.id, "images", H5T_NATIVE_FLOAT, file, &shape);
  if (shape.size() != 2)
    throw fail(file + ": /images",
               fmt::format("rank {}, expected 2 [n_frames, n_out]", shape.size()));
  s.n_frames = shape[0];
  s.n_out = shape[1];
  auto column = [&](const char* name, auto& out, hid_t type) {
    if (H5Lexists(f.id, name, H5P_DEFAULT) <= 0) return;
    out = read_dataset<typename std::decay_t<decltype(out)>::value_type>(f.id, name, type, file);
    if (out.size() != s.n_frames)
      throw fail(fmt::format("{}: /{}", file, name),
                 fmt::format("{} rows, /images has {}", out.size(), s.n_frames));
  };
  column("seq", s.seq, H5T_NATIVE_UINT64);
  column("t_acquired_ns", s.t_ns, H5T_NATIVE_INT64);
  column("flags", s.flags, H5T_NATIVE_UINT32);
  if (s.seq.empty())
    for (size_t i = 0; i < s.n_frames; ++i) s.seq.push_back(i);
  if (s.t_ns.empty()) s.t_ns.assign(s.n_frames, 0);
  if (s.flags.empty()) s.flags.assign(s.n_frames, 0);
  if (has_attr(f.id, "frame_rate_hz")) s.rate_hz = attr_double(f.id, "frame_rate_hz", file);

  const std::string gw = file + ": /geometry";
  if (H5Lexists(f.id, "geometry", H5P_DEFAULT) <= 0) throw fail(gw, "missing");
  Id g{H5Gopen2(f.id, "geometry", H5P_DEFAULT), H5Gclose};
  const std::string kind = attr_string(g.id, "kind", gw);
  if (kind == "grid") {
    if (has_attr(g.id, "nz") && attr_double(g.id, "nz", gw) > 1)
      throw fail(gw, "a voxel grid of a 3-D model: the indices need one 2-D image per frame");
    recon::GridGeometry grid;
    grid.nx = static_cast<int>(attr_double(g.id, "nx", gw));
    grid.ny = static_cast<int>(attr_double(g.id, "ny", gw));
    grid.x0 = attr_double(g.id, "x0", gw);
    grid.y0 = attr_double(g.id, "y0", gw);
    grid.dx = attr_double(g.id, "dx", gw);
    grid.dy = attr_double(g.id, "dy", gw);
    if (H5Lexists(g.id, "mask", H5P_DEFAULT) > 0)
      grid.mask = read_dataset<uint8_t>(g.id, "mask", H5T_NATIVE_UINT8, gw);
    if (static_cast<size_t>(grid.nx) * static_cast<size_t>(grid.ny) != s.n_out)
      throw fail(gw, fmt::format("grid {}×{} = {} values, /images has {} columns", grid.nx, grid.ny,
                                 grid.nx * grid.ny, s.n_out));
    s.geometry = std::move(grid);
  } else if (kind == "mesh") {
    recon::MeshGeometry mesh;
    std::vector<hsize_t> ns, es;
    const auto nodes = read_dataset<double>(g.id, "nodes", H5T_NATIVE_DOUBLE, gw, &ns);
    const auto elems = read_dataset<int32_t>(g.id, "elements", H5T_NATIVE_INT32, gw, &es);
    if (ns.size() != 2 || es.size() != 2) throw fail(gw, "nodes/elements must be 2-D");
    mesh.nodes.resize(static_cast<Eigen::Index>(ns[0]), static_cast<Eigen::Index>(ns[1]));
    for (size_t i = 0; i < ns[0]; ++i)
      for (size_t j = 0; j < ns[1]; ++j)
        mesh.nodes(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
            nodes[i * ns[1] + j];
    mesh.elements.resize(static_cast<Eigen::Index>(es[0]), static_cast<Eigen::Index>(es[1]));
    for (size_t i = 0; i < es[0]; ++i)
      for (size_t j = 0; j < es[1]; ++j)
        mesh.elements(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
            elems[i * es[1] + j];
    if (has_attr(g.id, "output_on") && attr_string(g.id, "output_on", gw) == "nodes")
      mesh.output_on = recon::MeshGeometry::OutputOn::kNodes;
    s.geometry = std::move(mesh);
  } else {
    throw fail(gw, fmt::format("kind '{}', expected grid or mesh", kind));
  }
  s.description = fmt::format("{} ({} frames of {} values)", file, s.n_frames, s.n_out);
  return s;
}

ImageSequence reconstruct_recording(const std::filesystem::path& path, const recon::Model& model,
                                    const std::string& reference) {
  auto reader = acquisition::open_recording_reader(path, {}, model.protocol);
  const auto& info = reader->info();
  const size_t n = info.n_frames, m = model.n_meas();
  if (n == 0) throw fail(path.string(), "no whole frame");
  std::vector<float> values(n * m);
  std::vector<uint32_t> flags(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (!reader->read(i, {&values[i * m], m})) flags[i] |= pipeline::kFlagNonFinite;

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
