#pragma once
// The /protocol and /geometry groups as the Model file, the image file and the raw-frame file
// all store them (recon/model_groups.hpp, docs/formats.md), written through FuzzedHdf5: each
// attribute and dataset kept, left out or changed as the input says. Shared by the HDF5 targets
// so one layout is fuzzed the same way wherever a reader meets it.
#include <string>
#include <vector>

#include "eit/recon/protocol.hpp"
#include "fuzzed_hdf5.hpp"

namespace eit::fuzz {

// The valid content of /protocol: its option attributes and its drive and measurement tables
// (row-major, 2 and 3 columns).
struct ProtocolLayout {
  int n_electrodes = 4, drive_distance = 1, measure_step = 1;
  std::string order = "std";
  bool measure_on_driven = false;
  std::vector<double> drives, measurements;
};

// As recon::write_protocol stores `p`.
inline ProtocolLayout protocol_layout(const recon::Protocol& p) {
  ProtocolLayout l{p.n_electrodes,
                   p.options.drive_distance,
                   p.options.measure_step,
                   std::string(recon::to_string(p.options.order)),
                   p.options.measure_on_driven,
                   {},
                   {}};
  for (const recon::Drive& d : p.drives)
    l.drives.insert(l.drives.end(), {1.0 * d.source, 1.0 * d.sink});
  for (const recon::Measurement& m : p.measurements)
    l.measurements.insert(l.measurements.end(),
                          {1.0 * m.drive, 1.0 * m.positive, 1.0 * m.negative});
  return l;
}

// True when the group and everything in it were written as valid.
inline bool write_protocol(FuzzedHdf5& f, hid_t root, const ProtocolLayout& p) {
  const h5::Handle g = f.group(root, "protocol");
  if (!g.valid()) return false;
  bool valid = f.attribute(g.get(), "n_electrodes", H5Value::integer(p.n_electrodes));
  valid &= f.attribute(g.get(), "drive_distance", H5Value::integer(p.drive_distance));
  valid &= f.attribute(g.get(), "measure_step", H5Value::integer(p.measure_step));
  valid &= f.attribute(g.get(), "order", H5Value::string(p.order));
  valid &= f.attribute(g.get(), "measure_on_driven", H5Value::integer(p.measure_on_driven));
  valid &= f.dataset(g.get(), "drives",
                     H5Value::array(H5Value::kI32, {p.drives.size() / 2, 2}, p.drives));
  valid &= f.dataset(g.get(), "measurements",
                     H5Value::array(H5Value::kI32, {p.measurements.size() / 3, 3}, p.measurements));
  return valid;
}

// The geometries a valid file can have. Their output counts: kGridGeometry 4 (2 × 2 pixels),
// kVoxelGeometry 8 (2 × 2 × 2), kMeshOnNodes 4, kMeshOnElements 2.
enum GeometryKind { kGridGeometry, kVoxelGeometry, kMeshOnNodes, kMeshOnElements };

inline size_t geometry_outputs(GeometryKind k) {
  return k == kGridGeometry ? 4 : k == kVoxelGeometry ? 8 : k == kMeshOnNodes ? 4 : 2;
}

// A unit square of 4 nodes and 2 triangles, one electrode per corner; or a 2 × 2 (× 2) grid.
// True when the group and everything in it were written as valid.
inline bool write_geometry(FuzzedHdf5& f, hid_t root, GeometryKind k) {
  const h5::Handle g = f.group(root, "geometry");
  if (!g.valid()) return false;
  bool valid = true;
  if (k == kGridGeometry || k == kVoxelGeometry) {
    valid &= f.attribute(g.get(), "kind", H5Value::string("grid"));
    for (const char* a : {"nx", "ny"}) valid &= f.attribute(g.get(), a, H5Value::integer(2));
    for (const char* a : {"x0", "y0"}) valid &= f.attribute(g.get(), a, H5Value::real(-0.5));
    for (const char* a : {"dx", "dy"}) valid &= f.attribute(g.get(), a, H5Value::real(1.0));
    if (k == kVoxelGeometry) {
      valid &= f.attribute(g.get(), "nz", H5Value::integer(2));
      valid &= f.attribute(g.get(), "z0", H5Value::real(0.0));
      valid &= f.attribute(g.get(), "dz", H5Value::real(1.0));
    } else {
      valid &= f.optional_attribute(g.get(), "nz", H5Value::integer(1));
    }
    valid &= f.dataset(g.get(), "mask",
                       k == kVoxelGeometry
                           ? H5Value::array(H5Value::kU8, {2, 2, 2}, {0, 0, 0, 1, 0, 0, 0, 0})
                           : H5Value::array(H5Value::kU8, {2, 2}, {0, 0, 0, 1}));
    return valid;
  }
  valid &= f.attribute(g.get(), "kind", H5Value::string("mesh"));
  valid &=
      f.attribute(g.get(), "output_on", H5Value::string(k == kMeshOnNodes ? "nodes" : "elements"));
  valid &= f.dataset(g.get(), "nodes",
                     H5Value::array(H5Value::kF64, {4, 2}, {-1, -1, 1, -1, 1, 1, -1, 1}));
  valid &=
      f.dataset(g.get(), "elements", H5Value::array(H5Value::kI32, {2, 3}, {0, 1, 2, 0, 2, 3}));
  valid &= f.dataset(g.get(), "electrode_nodes", H5Value::array(H5Value::kI32, {4}, {0, 1, 2, 3}));
  return valid;
}

}  // namespace eit::fuzz
