// bench_mesh3d: times Gmsh's 3-D meshing of a cylinder (generate_mesh_3d) and describes the result,
// to compare mesher settings (threads) for speed, determinism, quality and the forward model.
//   bench_mesh3d --h0 H [--electrodes 32] [--rings 2] [--height 1] [--threads N] [--repeat R]
//                [--v0 FILE] [--mesher delaunay|extruded] [--h-electrode H]
//                [--compare-h0 H]
// Prints, per run: "mesh wall_s cpu_s" (Gmsh and the checks), the node and tetrahedron counts, an FNV-1a hash of the node
// coordinates and element indices (same hash = same mesh, bit for bit), the worst tetrahedron quality
// (tet_quality, 1 = regular), the count below 0.1, the smallest dihedral angle; then "checks
// wall_s cpu_s" (check_mesh and the sliver search of the last mesh again) and the peak RSS.
// --v0 FILE writes the forward voltages of the planar two-ring pattern (adjacent drives, point
// electrodes, unit conductivity) of the last mesh, one per line, to compare meshes.
// --mesher picks Mesh3dOptions::mesher (default delaunay). --compare-h0 H then meshes the same
// cylinder with the OTHER mesher at h0 H in the same process (after the first), describes it,
// and prints both meshes' planar v₀ and their relative 2-norm difference ("v0_rel_diff").
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <numbers>
#include <string>

#include <fmt/format.h>
#include <fmt/os.h>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_check_3d.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_surface.hpp"
#include "eit/recon/protocol_rings.hpp"

using namespace eit::recon;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::uint64_t mesh_hash(const Mesh& m) {
  std::uint64_t h = 14695981039346656037ull;
  h = fnv1a(h, m.nodes.data(), sizeof(double) * static_cast<std::size_t>(m.nodes.size()));
  return fnv1a(h, m.elements.data(), sizeof(int) * static_cast<std::size_t>(m.elements.size()));
}

// Smallest of the six dihedral angles of tetrahedron e, in degrees.
double min_dihedral_deg(const Mesh& m, int e) {
  Eigen::Vector3d p[4];
  for (int i = 0; i < 4; ++i) p[i] = m.nodes.row(m.elements(e, i)).transpose();
  double best = 180;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {  // edge a-b; the faces through it hold c and d
      int c = 0;
      while (c == a || c == b) ++c;
      const int d = 6 - a - b - c;
      const Eigen::Vector3d axis = (p[b] - p[a]).normalized();
      Eigen::Vector3d u = p[c] - p[a], v = p[d] - p[a];
      u -= u.dot(axis) * axis;
      v -= v.dot(axis) * axis;
      const double cosine = std::clamp(u.normalized().dot(v.normalized()), -1.0, 1.0);
      best = std::min(best, std::acos(cosine) * 180 / std::numbers::pi);
    }
  return best;
}

void describe(const Mesh& m) {
  double worst = 1, dihedral = 180;
  int below = 0;
  for (int e = 0; e < m.n_elems(); ++e) {
    const double q = tet_quality(m, e);
    worst = std::min(worst, q);
    below += q < 0.1;
    dihedral = std::min(dihedral, min_dihedral_deg(m, e));
  }
  fmt::print("n_nodes {}\nn_elems {}\nhash {:016x}\nworst_quality {:.4f}\nquality_below_0.1 {}\n"
             "min_dihedral_deg {:.3f}\n",
             m.n_nodes(), m.n_elems(), mesh_hash(m), worst, below, dihedral);
}

}  // namespace

int main(int argc, char** argv) try {
  Mesh3dOptions o;
  o.h0 = 0;
  o.n_electrodes = 32;
  o.n_rings = 2;
  int repeat = 1;
  std::string v0_file;
  double compare_h0 = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] {
      if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", a));
      return std::string(argv[++i]);
    };
    if (a == "--h0") o.h0 = std::stod(next());
    else if (a == "--electrodes") o.n_electrodes = std::stoi(next());
    else if (a == "--rings") o.n_rings = std::stoi(next());
    else if (a == "--height") o.height = std::stod(next());
    else if (a == "--repeat") repeat = std::stoi(next());
    else if (a == "--v0") v0_file = next();
    else if (a == "--h-electrode") o.h_electrode = std::stod(next());
    else if (a == "--compare-h0") compare_h0 = std::stod(next());
    else if (a == "--mesher") {
      const std::string m = next();
      if (m != "delaunay" && m != "extruded")
        throw std::invalid_argument(fmt::format("--mesher {}: expected delaunay or extruded", m));
      o.mesher = m == "extruded" ? Mesh3dOptions::Mesher::kExtruded
                                 : Mesh3dOptions::Mesher::kDelaunay;
    }
    else throw std::invalid_argument(fmt::format("unknown argument {}", a));
  }
  if (!(o.h0 > 0)) {
    fmt::print(stderr, "usage: bench_mesh3d --h0 H [--electrodes 32] [--rings 2] [--height 1] "
                       "[--repeat R] [--v0 FILE] [--mesher delaunay|extruded] [--h-electrode H] "
                       "[--compare-h0 H]\n");
    return 2;
  }
  const auto timed_mesh = [](const Mesh3dOptions& opts) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    Mesh m = generate_mesh_3d(opts);
    fmt::print("mesher {}\nmesh {:.3f} {:.3f}\n",
               opts.mesher == Mesh3dOptions::Mesher::kExtruded ? "extruded" : "delaunay",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               cpu_seconds() - c0);
    describe(m);
    return m;
  };
  Mesh mesh;
  for (int r = 0; r < repeat; ++r) mesh = timed_mesh(o);
  // The checks generate_mesh_3d runs on Gmsh's result (part of "mesh" above), timed alone.
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  check_mesh(mesh, "bench");
  (void)find_slivers(mesh, 0.01);
  fmt::print("checks {:.3f} {:.3f}\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             cpu_seconds() - c0);
  RingProtocolOptions po;
  po.base.n_electrodes = o.n_electrodes;
  po.n_rings = o.n_rings;
  po.pattern = o.n_rings > 1 ? RingPattern::kPlanar : RingPattern::kAll;
  const auto planar_v0 = [&](const Mesh& m) { return ForwardModel(m, make_ring_protocol(po)).solve(); };
  if (!v0_file.empty()) {
    const Eigen::VectorXd v0 = planar_v0(mesh);
    auto out = fmt::output_file(v0_file);
    for (Eigen::Index i = 0; i < v0.size(); ++i) out.print("{:.17g}\n", v0[i]);
  }
  if (compare_h0 > 0) {
    Mesh3dOptions other = o;
    other.h0 = compare_h0;
    other.h_electrode = 0;
    other.mesher = o.mesher == Mesh3dOptions::Mesher::kExtruded ? Mesh3dOptions::Mesher::kDelaunay
                                                                : Mesh3dOptions::Mesher::kExtruded;
    const Mesh second = timed_mesh(other);
    const Eigen::VectorXd a = planar_v0(mesh), b = planar_v0(second);
    fmt::print("v0_rel_diff {:.5f}\nv0_max_abs_diff_over_max {:.5f}\n", (a - b).norm() / b.norm(),
               (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff());
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  fmt::print("peak_rss_mib {:.0f}\n", static_cast<double>(u.ru_maxrss) / 1024.0);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_mesh3d: {}\n", e.what());
  return 1;
}
