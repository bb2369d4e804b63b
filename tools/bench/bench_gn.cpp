// bench_gn: times Gauss–Newton absolute imaging on a CSV mesh folder (nodes.csv, elements.csv,
// el_pos.csv, info.json with ref_node; pyEIT's layout) against measurements v1.csv.
//
//   bench_gn DIR [--iterations 20] [--repeat 3] [--live-frames 200] [--frame-iterations 3]
//                [--sigma-out FILE]
//
// Prints one JSON object: the best-of-repeat time of the cold solve (pyEIT's static example:
// kotre p = 0.25, λ₀ = 1, decay 0.1, λ_min 1e-5, start 1, compat mode), its per-iteration split
// into forward / Jacobian / system / solve (n_rows: the distinct rows of J the step uses,
// recon/src/gn_reciprocity.hpp), and the live rate: frames/s of GnReconstructor with
// frame_iterations warm-started iterations per frame on the same frame (default mode, λ_min 1e-2).
// Driven side by side with pyEIT by tools/bench/bench_gn_vs_pyeit.py. The step's normal matrix and
// Cholesky use every core (GnOptions::threads = 0, std::thread bands: recon/src/gn_dense.hpp); the
// rest is one thread.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

#include "eit/pipeline/gn_reconstructor.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/gn_model.hpp"
#include "eit/recon/mesh_io.hpp"

namespace {

using Clock = std::chrono::steady_clock;

Eigen::VectorXd read_vector(const std::string& path) {  // numbers separated by , or newlines
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream words(text);
  std::vector<double> v;
  for (double x; words >> x;) v.push_back(x);
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_gn DIR [--iterations N] [--repeat R] [--live-frames F] "
                 "[--frame-iterations K]\n");
    return 2;
  }
  const std::string dir = argv[1];
  int iterations = 20, repeat = 3, live_frames = 200, frame_iterations = 3;
  std::string sigma_out;  // --sigma-out FILE: the cold solve's final σ, one value a line
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--sigma-out") {
      sigma_out = argv[i + 1];
      continue;
    }
    const int v = std::stoi(argv[i + 1]);
    if (k == "--iterations")
      iterations = v;
    else if (k == "--repeat")
      repeat = v;
    else if (k == "--live-frames")
      live_frames = v;
    else if (k == "--frame-iterations")
      frame_iterations = v;
  }
  Eigen::setNbThreads(1);
  const eit::recon::Mesh mesh = eit::recon::load_mesh_csv_folder(dir);
  eit::recon::ProtocolOptions po;
  po.n_electrodes = mesh.n_electrodes();
  const eit::recon::Protocol protocol = eit::recon::make_protocol(po);
  const Eigen::VectorXd v1 = read_vector(dir + "/v1.csv");
  eit::recon::GnOptions o;
  o.p = 0.25;
  o.lambda0 = 1.0;
  o.lambda_decay = 0.1;
  o.lambda_min = 1e-5;
  o.max_iterations = iterations;
  o.pyeit_compat = true;
  o.frame_iterations = frame_iterations;

  double best = 1e300;
  eit::recon::GnTimings split;
  int done = 0, n_rows = 0;
  for (int r = 0; r < repeat; ++r) {
    eit::recon::GaussNewton gn(mesh, protocol, {}, o);
    n_rows = gn.n_rows();
    const auto t0 = Clock::now();
    const eit::recon::GnResult res = gn.solve(v1);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s < best) {
      best = s;
      split = gn.timings();
      done = res.iterations;
    }
    if (!sigma_out.empty() && r == 0) {
      std::ofstream out(sigma_out);
      for (Eigen::Index e = 0; e < res.sigma.size(); ++e)
        out << fmt::format("{:.17g}\n", res.sigma(e));
      if (!out) throw std::runtime_error(sigma_out + ": cannot write");
    }
  }
  // Live: the same frame streamed through the reconstructor, warm-started.
  eit::recon::GnOptions live = o;
  live.pyeit_compat = false;
  live.tolerance = 0;  // always spend the whole budget
  live.lambda_min = 1e-2;  // keeps σ > 0 on this data (pyEIT's 1e-5 overfits into σ < 0)
  const eit::recon::Model model = eit::recon::make_gn_model(mesh, protocol, {}, live);
  eit::pipeline::GnReconstructor rec(model, {1, frame_iterations, true});
  std::vector<float> values(v1.size()), image(static_cast<size_t>(mesh.n_elems()));
  for (Eigen::Index i = 0; i < v1.size(); ++i)
    values[static_cast<size_t>(i)] = static_cast<float>(v1(i));
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  eit::pipeline::FrameSlot* in[] = {&slot};
  std::vector<eit::pipeline::FrameSlot*> out(1);
  rec.submit(in);  // cold first frame (full iterations), not timed
  rec.complete(out, true);
  const auto t0 = Clock::now();
  for (int f = 0; f < live_frames; ++f) {
    slot.flags = 0;
    rec.submit(in);
    rec.complete(out, true);
  }
  const double live_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double n = split.iterations ? split.iterations : 1;
  fmt::print(
      "{{\"n_nodes\": {}, \"n_elems\": {}, \"n_meas\": {}, \"n_rows\": {}, \"iterations\": {}, "
      "\"seconds\": "
      "{:.6f}, "
      "\"per_iteration_ms\": {{\"forward\": {:.4f}, \"jacobian\": {:.4f}, \"system\": {:.4f}, "
      "\"solve\": {:.4f}}}, \"live_frames\": {}, \"frame_iterations\": {}, \"live_fps\": {:.2f}, "
      "\"diverged_frames\": {}}}\n",
      mesh.n_nodes(), mesh.n_elems(), protocol.n_meas(), n_rows, done, best,
      1e3 * split.forward / n, 1e3 * split.jacobian / n, 1e3 * split.system / n,
      1e3 * split.solve / n, live_frames, frame_iterations, live_frames / live_s,
      rec.counts().diverged);
  return 0;
}
