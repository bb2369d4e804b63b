// bench_greit3d: the 3-D GREIT set-up timed, and GREIT figures of merit (EIDORS conventions,
// eval_GREIT_fig_merit / its 3-D form) of its images beside 3-D JAC mapped to the same voxels,
// all in one run on one mesh.
//   bench_greit3d [--h0 0.2] [--electrodes 32] [--rings 2] [--voxels 32x32x4] [--targets 1000]
// Mesh: Gmsh unit cylinder of height 1, point electrodes in rings, adjacent protocol over all.
// Test targets: spheres of radius 0.1 (conductivity 1 → 1.1, the nonlinear forward model) at
// radii 0, 0.3, 0.6, 0.8 × 8 angles (1 at r = 0) × heights 0.3, 0.5, 0.7. Per image (sign
// corrected, masked voxels out), over the voxels ≥ half its maximum (the half-max set):
//   AR  amplitude response, Σ image · V_voxel / (V_sphere · 0.1) (1 = volume × contrast kept);
//       reported as mean and uniformity std / mean (EIDORS: small is uniform)
//   PE  position error, |centre of the half-max set − target centre| (model units, radius 1)
//   RES resolution, (V_half-max / V_body)^(1/3)
// Prints "key value" lines; timings are wall seconds of one run.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/greit_3d.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/protocol_rings.hpp"
#include "eit/recon/voxel_grid.hpp"

using namespace eit::recon;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Merit {
  std::vector<double> ar, pe, res;
};

void score(const Model& m, const Eigen::VectorXd& dv, const Eigen::Vector3d& centre,
           double v_target, Merit& out) {
  const auto& g = std::get<GridGeometry>(m.geometry);
  const Eigen::VectorXd img = (m.H * dv.cast<float>()).cast<double>();
  double peak = 0, sum = 0;
  int inside = 0;
  for (Eigen::Index v = 0; v < img.size(); ++v)
    if (!g.mask[static_cast<size_t>(v)]) {
      peak = std::max(peak, img(v));
      sum += img(v);
      ++inside;
    }
  const double v_voxel = g.dx * g.dy * g.dz;
  Eigen::Vector3d cog = Eigen::Vector3d::Zero();
  double mass = 0;
  int half = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const size_t v = (static_cast<size_t>(z) * g.ny + y) * g.nx + x;
        const double value = img(static_cast<Eigen::Index>(v));
        if (g.mask[v] || value < peak / 2) continue;
        cog += value * Eigen::Vector3d(g.x0 + x * g.dx, g.y0 + y * g.dy, g.z0 + z * g.dz);
        mass += value;
        ++half;
      }
  out.ar.push_back(sum * v_voxel / v_target);
  out.pe.push_back((cog / mass - centre).norm());
  out.res.push_back(std::cbrt(static_cast<double>(half) / inside));
}

void report(const char* name, const Merit& m) {
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  double var = 0, pe_max = 0;
  const double ar = mean(m.ar);
  for (double x : m.ar) var += (x - ar) * (x - ar);
  for (double x : m.pe) pe_max = std::max(pe_max, x);
  fmt::print(
      "{}_ar_mean {:.4g}\n{}_ar_uniformity {:.4f}\n{}_pe_mean {:.4f}\n{}_pe_max {:.4f}\n"
      "{}_res_mean {:.4f}\n",
      name, ar, name, std::sqrt(var / static_cast<double>(m.ar.size())) / ar, name, mean(m.pe),
      name, pe_max, name, mean(m.res));
}

}  // namespace

int main(int argc, char** argv) {
  Mesh3dOptions mo;
  mo.n_electrodes = 32;
  mo.n_rings = 2;
  mo.h0 = 0.2;
  Greit3dOptions go;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--h0")
      mo.h0 = std::stod(v);
    else if (k == "--electrodes")
      mo.n_electrodes = std::stoi(v);
    else if (k == "--rings")
      mo.n_rings = std::stoi(v);
    else if (k == "--voxels")
      go.grid = parse_voxel_spec(v);
    else if (k == "--targets")
      go.n_targets = std::stoi(v);
    else {
      fmt::print(stderr, "bench_greit3d: unknown option {}\n", k);
      return 2;
    }
  }
  go.grid.samples = 1;
  auto t = std::chrono::steady_clock::now();
  const Mesh mesh = generate_mesh_3d(mo);
  fmt::print("tetrahedra {}\nmesh_s {:.3f}\n", mesh.n_elems(), seconds_since(t));
  ProtocolOptions po;
  po.n_electrodes = mesh.n_electrodes();
  ForwardModel f(mesh, make_protocol(po));
  t = std::chrono::steady_clock::now();
  const Eigen::VectorXd v0 = f.solve();
  const Eigen::MatrixXd jt = f.jacobian_transposed({}, false);
  fmt::print("forward_jacobian_s {:.3f}\n", seconds_since(t));

  t = std::chrono::steady_clock::now();
  const Model spheres = build_greit_3d(f, jt, go).model;
  fmt::print("greit_spheres_s {:.3f}\n", seconds_since(t));
  Greit3dOptions ge = go;
  ge.train = Greit3dOptions::Train::kElements;
  t = std::chrono::steady_clock::now();
  const Model elements = build_greit_3d(f, jt, ge).model;
  fmt::print("greit_elements_s {:.3f}\n", seconds_since(t));
  t = std::chrono::steady_clock::now();
  ReconstructionMatrix jac = build_jac(f, jt, JacOptions{});
  VoxelGridOptions vo = go.grid;
  vo.samples = 3;
  map_to_voxels(jac, vo);
  fmt::print("jac_voxels_s {:.3f}\n", seconds_since(t));

  Merit m_spheres, m_elements, m_jac;
  const double radius = 0.1, contrast = 0.1;
  const double v_target = 4.0 / 3.0 * std::numbers::pi * std::pow(radius, 3) * contrast;
  int n = 0;
  for (const double z : {0.3, 0.5, 0.7})
    for (const double r : {0.0, 0.3, 0.6, 0.8})
      for (int a = 0; a < (r == 0 ? 1 : 8); ++a) {
        const double phi = 2 * std::numbers::pi * a / 8 + 0.2;
        const Eigen::Vector3d c(r * std::cos(phi), r * std::sin(phi), z);
        Eigen::VectorXd perm = Eigen::VectorXd::Ones(mesh.n_elems());
        perm += contrast * sphere_contrast(mesh, f.element_areas(), c, radius);
        const Eigen::VectorXd dv = f.solve(perm) - v0;
        score(spheres, dv, c, v_target, m_spheres);
        score(elements, dv, c, v_target, m_elements);
        score(jac.model, dv, c, v_target, m_jac);
        ++n;
      }
  fmt::print("test_targets {}\n", n);
  report("greit_spheres", m_spheres);
  report("greit_elements", m_elements);
  report("jac_voxels", m_jac);
  return 0;
}
