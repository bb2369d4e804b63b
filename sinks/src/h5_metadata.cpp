#include "h5_metadata.hpp"

#include <stdexcept>
#include <variant>

#include <fmt/format.h>

namespace eit::sinks::detail::h5meta {
namespace {

void check(herr_t rc, const std::string& file, const char* what, const char* name) {
  if (rc < 0)
    throw std::runtime_error(fmt::format("{}: writing {} '{}' failed (HDF5)", file, what, name));
}

void scalar_attr(hid_t loc, const char* name, hid_t type, const void* value,
                 const std::string& file) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  check(rc, file, "attribute", name);
}

void any_dataset(hid_t loc, const char* name, hid_t mem_type, hid_t file_type, const void* data,
                 const std::vector<hsize_t>& dims, const std::string& file) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t d = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = d < 0 ? -1 : H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  if (d >= 0) H5Dclose(d);
  H5Sclose(space);
  check(rc, file, "dataset", name);
}

hid_t group(hid_t root, const char* name, const std::string& file) {
  const hid_t g = H5Gcreate2(root, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0)
    throw std::runtime_error(fmt::format("{}: creating group /{} failed (HDF5)", file, name));
  return g;
}

}  // namespace

void attr(hid_t loc, const char* name, const std::string& value, const std::string& file) {
  // Variable-length UTF-8, as the Model file (h5py returns str).
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const char* p = value.c_str();
  try {
    scalar_attr(loc, name, type, &p, file);
  } catch (...) {
    H5Tclose(type);
    throw;
  }
  H5Tclose(type);
}
void attr(hid_t loc, const char* name, int64_t value, const std::string& file) {
  scalar_attr(loc, name, H5T_NATIVE_INT64, &value, file);
}
void attr(hid_t loc, const char* name, double value, const std::string& file) {
  scalar_attr(loc, name, H5T_NATIVE_DOUBLE, &value, file);
}

void dataset(hid_t loc, const char* name, const double* data, std::vector<hsize_t> dims,
             const std::string& file) {
  any_dataset(loc, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, data, dims, file);
}
void dataset(hid_t loc, const char* name, const int32_t* data, std::vector<hsize_t> dims,
             const std::string& file) {
  any_dataset(loc, name, H5T_NATIVE_INT32, H5T_STD_I32LE, data, dims, file);
}
void dataset(hid_t loc, const char* name, const uint8_t* data, std::vector<hsize_t> dims,
             const std::string& file) {
  any_dataset(loc, name, H5T_NATIVE_UINT8, H5T_STD_U8LE, data, dims, file);
}

void write_geometry(hid_t root, const recon::Model& model, const std::string& file) {
  const hid_t g = group(root, "geometry", file);
  try {
    if (const auto* grid = std::get_if<recon::GridGeometry>(&model.geometry)) {
      attr(g, "kind", std::string("grid"), file);
      attr(g, "nx", int64_t{grid->nx}, file);
      attr(g, "ny", int64_t{grid->ny}, file);
      attr(g, "x0", grid->x0, file);
      attr(g, "y0", grid->y0, file);
      attr(g, "dx", grid->dx, file);
      attr(g, "dy", grid->dy, file);
      if (grid->nz > 1) {  // voxel grid, as the Model file stores it
        attr(g, "nz", int64_t{grid->nz}, file);
        attr(g, "z0", grid->z0, file);
        attr(g, "dz", grid->dz, file);
        dataset(g, "mask", grid->mask.data(),
                {static_cast<hsize_t>(grid->nz), static_cast<hsize_t>(grid->ny),
                 static_cast<hsize_t>(grid->nx)},
                file);
      } else {
        dataset(g, "mask", grid->mask.data(),
                {static_cast<hsize_t>(grid->ny), static_cast<hsize_t>(grid->nx)}, file);
      }
    } else {
      const auto& mesh = std::get<recon::MeshGeometry>(model.geometry);
      attr(g, "kind", std::string("mesh"), file);
      attr(g, "output_on",
           std::string(mesh.output_on == recon::MeshGeometry::OutputOn::kNodes ? "nodes"
                                                                               : "elements"),
           file);
      // Eigen matrices may be column-major: copy row by row into row-major buffers.
      // 2-D: x, y and triangles; 3-D: x, y, z and tetrahedra.
      const auto dim = static_cast<size_t>(mesh.nodes.cols());
      std::vector<double> nodes(static_cast<size_t>(mesh.nodes.rows()) * dim);
      for (Eigen::Index i = 0; i < mesh.nodes.rows(); ++i)
        for (Eigen::Index k = 0; k < mesh.nodes.cols(); ++k)
          nodes[static_cast<size_t>(i) * dim + static_cast<size_t>(k)] = mesh.nodes(i, k);
      std::vector<int32_t> elems(static_cast<size_t>(mesh.elements.rows()) * mesh.elements.cols());
      for (Eigen::Index i = 0; i < mesh.elements.rows(); ++i)
        for (Eigen::Index k = 0; k < mesh.elements.cols(); ++k)
          elems[i * mesh.elements.cols() + k] = static_cast<int32_t>(mesh.elements(i, k));
      const std::vector<int32_t> el(mesh.electrode_nodes.begin(), mesh.electrode_nodes.end());
      dataset(g, "nodes", nodes.data(),
              {static_cast<hsize_t>(mesh.nodes.rows()), static_cast<hsize_t>(dim)}, file);
      dataset(
          g, "elements", elems.data(),
          {static_cast<hsize_t>(mesh.elements.rows()), static_cast<hsize_t>(mesh.elements.cols())},
          file);
      dataset(g, "electrode_nodes", el.data(), {el.size()}, file);
    }
  } catch (...) {
    H5Gclose(g);
    throw;
  }
  H5Gclose(g);
}

void write_protocol(hid_t root, const recon::Protocol& p, const std::string& file) {
  const hid_t g = group(root, "protocol", file);
  try {
    attr(g, "n_electrodes", int64_t{p.n_electrodes}, file);
    attr(g, "drive_distance", int64_t{p.options.drive_distance}, file);
    attr(g, "measure_step", int64_t{p.options.measure_step}, file);
    attr(g, "order", std::string(recon::to_string(p.options.order)), file);
    attr(g, "measure_on_driven", int64_t{p.options.measure_on_driven ? 1 : 0}, file);
    std::vector<int32_t> drives, meas;
    for (const auto& d : p.drives) drives.insert(drives.end(), {d.source, d.sink});
    for (const auto& m : p.measurements) meas.insert(meas.end(), {m.drive, m.positive, m.negative});
    dataset(g, "drives", drives.data(), {p.drives.size(), 2}, file);
    dataset(g, "measurements", meas.data(), {p.measurements.size(), 3}, file);
  } catch (...) {
    H5Gclose(g);
    throw;
  }
  H5Gclose(g);
}

}  // namespace eit::sinks::detail::h5meta
