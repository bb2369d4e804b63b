// The model id: FNV-1a 64 over a canonical serialisation (see model_file.hpp).
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"

namespace eit::recon {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the model hash serialises in host order, assumed little-endian");

class Fnv1a64 {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  template <typename T>
  void value(T v) {
    static_assert(std::is_arithmetic_v<T>);
    bytes(&v, sizeof v);
  }
  void text(const std::string& s) {
    value<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  uint64_t digest() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::string model_content_hash(const Model& m) {
  Fnv1a64 h;
  h.text("eitstream-model-v1");
  h.text(m.algorithm);
  h.text(m.parameters_json);
  h.value<uint8_t>(m.normalize ? 1 : 0);
  h.value<int64_t>(m.H.rows());
  h.value<int64_t>(m.H.cols());
  h.bytes(m.H.data(), sizeof(float) * static_cast<size_t>(m.H.size()));
  h.value<int64_t>(m.v_ref.size());
  h.bytes(m.v_ref.data(), sizeof(double) * static_cast<size_t>(m.v_ref.size()));

  const Protocol& p = m.protocol;
  h.value<int32_t>(p.n_electrodes);
  h.value<int32_t>(p.options.drive_distance);
  h.value<int32_t>(p.options.measure_step);
  h.value<int32_t>(p.options.order == MeasurementOrder::kStd ? 0 : 1);
  h.value<int32_t>(p.options.measure_on_driven ? 1 : 0);
  h.value<int64_t>(static_cast<int64_t>(p.drives.size()));
  for (const Drive& d : p.drives) {
    h.value<int32_t>(d.source);
    h.value<int32_t>(d.sink);
  }
  h.value<int64_t>(static_cast<int64_t>(p.measurements.size()));
  for (const Measurement& x : p.measurements) {
    h.value<int32_t>(x.drive);
    h.value<int32_t>(x.positive);
    h.value<int32_t>(x.negative);
  }

  if (const auto* g = std::get_if<MeshGeometry>(&m.geometry)) {
    h.text("mesh");
    h.value<int64_t>(g->nodes.rows());
    for (Eigen::Index i = 0; i < g->nodes.size(); ++i) h.value<double>(g->nodes.data()[i]);
    h.value<int64_t>(g->elements.rows());
    for (Eigen::Index i = 0; i < g->elements.size(); ++i) h.value<int32_t>(g->elements.data()[i]);
    h.value<int64_t>(static_cast<int64_t>(g->electrode_nodes.size()));
    for (int e : g->electrode_nodes) h.value<int32_t>(e);
    h.text(g->output_on == MeshGeometry::OutputOn::kElements ? "elements" : "nodes");
  } else {
    const auto& grid = std::get<GridGeometry>(m.geometry);
    h.text("grid");
    h.value<int32_t>(grid.nx);
    h.value<int32_t>(grid.ny);
    for (double v : {grid.x0, grid.y0, grid.dx, grid.dy}) h.value<double>(v);
    if (grid.nz > 1) {  // voxel grids only, so that 2-D grid ids stay as they were
      h.value<int32_t>(grid.nz);
      for (double v : {grid.z0, grid.dz}) h.value<double>(v);
    }
    h.value<int64_t>(static_cast<int64_t>(grid.mask.size()));
    h.bytes(grid.mask.data(), grid.mask.size());
  }
  return fmt::format("{:016x}", h.digest());
}

}  // namespace eit::recon
