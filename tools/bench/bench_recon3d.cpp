// bench_recon3d: times recon/'s 3-D set-up path (mesh, forward solve, Jacobian, JAC matrix H).
//   bench_recon3d csv DIR [--solver auto|eigen|cholmod] [--repeat N] [--threads T] [--no-h]
//       a pyEIT CSV mesh folder (4 nodes per element), its 16 electrodes, adjacent protocol;
//       H = JAC kotre p = 0.5, λ = 1e-3, jac_normalized (pyEIT's JAC.setup of the 3-D reference)
//   bench_recon3d cylinder --h0 H [--electrodes 32] [--rings 2] [--height 1] [--solver S]
//       a Gmsh cylinder of radius 1 (generate_mesh_3d), adjacent protocol over all electrodes
// --threads: Jacobian threads (ForwardOptions::threads, 0 = every core); --no-h: forward and
// Jacobian only (the H step is the largest and is timed elsewhere).
// Prints "key wall_seconds cpu_seconds" lines (minimum over N runs for csv; one run for cylinder),
// the mesh size, the solver and the peak resident memory of the process (getrusage, MiB).
// Double precision; Eigen and CHOLMOD may use BLAS threads (state OPENBLAS_NUM_THREADS).
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "best_time.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_io.hpp"

using namespace eit::recon;

namespace {

using eit::bench::BestTime;

void print(const char* key, const BestTime& t) { fmt::print("{} {}\n", key, t.text()); }

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

ForwardOptions::Solver parse_solver(const std::string& s) {
  if (s == "auto") return ForwardOptions::Solver::kAuto;
  if (s == "eigen") return ForwardOptions::Solver::kEigen;
  if (s == "cholmod") return ForwardOptions::Solver::kCholmod;
  throw std::invalid_argument(fmt::format("--solver {}, expected auto, eigen or cholmod", s));
}

// Forward + Jacobian + H on one mesh; each stage timed separately and all of them together.
void setup(const Mesh& mesh, ForwardOptions fo, int repeat, bool with_h) {
  ProtocolOptions po;
  po.n_electrodes = mesh.n_electrodes();
  const Protocol protocol = make_protocol(po);
  BestTime forward, jacobian, h, total;
  for (int i = 0; i < repeat; ++i) {
    const eit::bench::Stopwatch whole;
    ForwardModel fwd(mesh, protocol, fo);
    forward.time([&] { (void)fwd.solve(); });
    Eigen::MatrixXd jt;
    jacobian.time([&] { jt = fwd.jacobian_transposed({}, true); });
    JacOptions o;
    o.p = 0.5;
    o.lambda = 1e-3;
    o.jac_normalized = true;
    if (with_h) h.time([&] { (void)jac_matrix_from_transposed(jt, o, mesh); });
    total.keep(whole);
  }
  fmt::print("n_meas {}\n", protocol.n_meas());
  print("forward", forward);
  print("jacobian", jacobian);
  if (with_h) print("jac_H", h);
  print("setup_total", total);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: bench_recon3d csv DIR [--solver S] [--repeat N] [--threads T] [--no-h]\n"
               "       bench_recon3d cylinder --h0 H [--electrodes 32] [--rings 2] "
               "[--height 1] [--solver S]\n");
    return 2;
  }
  const std::string mode = argv[1];
  std::string dir, solver = "auto";
  int repeat = 3, electrodes = 32, rings = 2, threads = 0;
  bool with_h = true;
  double h0 = 0.1, height = 1.0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] {
      if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", a));
      return std::string(argv[++i]);
    };
    if (a == "--solver") solver = next();
    else if (a == "--repeat") repeat = std::stoi(next());
    else if (a == "--h0") h0 = std::stod(next());
    else if (a == "--electrodes") electrodes = std::stoi(next());
    else if (a == "--rings") rings = std::stoi(next());
    else if (a == "--height") height = std::stod(next());
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--no-h") with_h = false;
    else if (dir.empty()) dir = a;
    else throw std::invalid_argument(fmt::format("unknown argument {}", a));
  }
  ForwardOptions fo;
  fo.solver = parse_solver(solver);
  fo.threads = threads;
  Mesh mesh;
  if (mode == "csv") {
    mesh = load_mesh_csv_folder(dir);
  } else if (mode == "cylinder") {
    Mesh3dOptions mo;
    mo.h0 = h0;
    mo.n_electrodes = electrodes;
    mo.n_rings = rings;
    mo.height = height;
    BestTime t;
    t.time([&] { mesh = generate_mesh_3d(mo); });
    print("mesh", t);
    repeat = 1;
  } else {
    throw std::invalid_argument(fmt::format("mode {}, expected csv or cylinder", mode));
  }
  fmt::print("n_nodes {}\nn_elems {}\nn_electrodes {}\nsolver {}\nthreads {}\n", mesh.n_nodes(),
             mesh.n_elems(), mesh.n_electrodes(), solver, threads);
  setup(mesh, fo, repeat, with_h);
  fmt::print("peak_rss_mib {:.0f}\n", peak_rss_mib());
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_recon3d: {}\n", e.what());
  return 1;
}
