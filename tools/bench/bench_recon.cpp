// bench_recon: times recon/'s set-up path on one mesh (a CSV folder as written by pyEIT):
//   bench_recon MESH_DIR [--repeat N] [--no-laplacian]
// Prints "key wall_seconds cpu_seconds" lines (the minimum over N runs, each from a fresh
// ForwardModel, so every figure includes assembly and the sparse factorisation) plus
// "n_nodes"/"n_elems" counts. Single-threaded, double precision, adjacent 16-electrode protocol as
// pyEIT's default.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "best_time.hpp"
#include "eit/recon/back_projection.hpp"
#include "eit/recon/greit.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_io.hpp"

using namespace eit::recon;

namespace {

// Best wall-clock and best process-CPU time over `repeat` runs, as "wall cpu".
std::string best_of(int repeat, const std::function<void()>& run) {
  eit::bench::BestTime best;
  for (int i = 0; i < repeat; ++i) best.time(run);
  return best.text();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: bench_recon MESH_DIR [--repeat N] [--no-laplacian]\n", stderr);
    return 2;
  }
  int repeat = 3;
  bool laplacian = true;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--no-laplacian")
      laplacian = false;
  }
  try {
    Mesh mesh;
    const std::string load = best_of(1, [&] { mesh = load_mesh_csv_folder(argv[1]); });
    const Protocol protocol = make_protocol({.n_electrodes = mesh.n_electrodes()});
    fmt::print("n_nodes {}\nn_elems {}\nload_csv {}\n", mesh.n_nodes(), mesh.n_elems(), load);

    volatile double sink = 0;  // keeps results observable
    fmt::print("forward_solve {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol);
                 sink = fwd.solve()(0);
               }));
    fmt::print("jacobian {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol);
                 sink = fwd.jacobian()(0, 0);
               }));
    JacOptions jac;
    jac.p = 0.5;
    jac.lambda = 0.01;
    fmt::print("jac_kotre {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol);
                 sink = build_jac(fwd, jac).H(0, 0);
               }));
    if (laplacian) {
      JacOptions lap = jac;
      lap.prior = JacOptions::Prior::kLaplacian;
      fmt::print("jac_laplacian {}\n", best_of(repeat, [&] {
                   ForwardModel fwd(mesh, protocol);
                   sink = build_jac(fwd, lap).H(0, 0);
                 }));
    }
    GreitOptions greit;
    greit.p = 0.5;
    greit.lambda = 0.01;
    fmt::print("greit {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol);
                 sink = build_greit(fwd, greit).H(0, 0);
               }));
    fmt::print("bp {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol);
                 sink = build_bp(fwd).H(0, 0);
               }));
    ForwardOptions cem;
    cem.electrodes = ForwardOptions::Electrodes::kComplete;
    cem.electrode_width = 0.05;
    fmt::print("forward_solve_cem {}\n", best_of(repeat, [&] {
                 ForwardModel fwd(mesh, protocol, cem);
                 sink = fwd.solve()(0);
               }));
    (void)sink;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_recon: {}\n", e.what());
    return 1;
  }
  return 0;
}
