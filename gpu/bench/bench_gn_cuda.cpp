// bench_gn_cuda: Gauss–Newton absolute imaging, CUDA vs eitstream's CPU solver on the same host,
// on CSV mesh folders as bench_gn reads them (nodes, elements, el_pos, info.json, v1.csv):
//
//   bench_gn_cuda DIR... [--iterations 20] [--live-frames 200]
//
// Per folder one JSON line: CPU and CUDA seconds for the cold solve (pyEIT's static example
// settings, compat mode, best of 3 after a warm-up), the CUDA per-iteration split (device time by
// cudaEvents: forward / Jacobian / system / solve, measured without the graph), the relative
// difference of the two results and the CUDA live rate: frames/s with 3 warm-started iterations
// per frame. Cold solve and live rate are measured twice, side by side: the iteration launched
// call by call, and replayed as a CUDA graph (CudaGaussNewton::use_graph), with the graph's note.
// The CPU solver uses every core of the host (GnOptions::threads = 0).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/gpu/cuda_gauss_newton.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/mesh_io.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Eigen::VectorXd read_vector(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream words(text);
  std::vector<double> v;
  for (double x; words >> x;) v.push_back(x);
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

struct Cold {
  double seconds = 1e300;
  eit::recon::GnTimings split;
  eit::recon::GnResult result;
};

Cold time_cold(eit::gpu::CudaGaussNewton& gpu, const Eigen::VectorXd& v1, bool graph) {
  gpu.use_graph(graph);
  Cold c;
  c.result = gpu.solve(v1);  // warm-up (and the graph's capture)
  for (int r = 0; r < 3; ++r) {
    gpu.reset_timings();
    const auto t = Clock::now();
    c.result = gpu.solve(v1);
    const double s = since(t);
    if (s < c.seconds) {
      c.seconds = s;
      c.split = gpu.timings();
    }
  }
  return c;
}

double live_rate(eit::gpu::CudaGaussNewton& live, const Eigen::VectorXd& v1, int frames,
                 bool graph) {
  live.use_graph(graph);
  Eigen::VectorXd sigma = live.solve(v1).sigma;
  const auto t = Clock::now();
  for (int f = 0; f < frames; ++f) sigma = live.solve(v1, sigma, 3).sigma;
  return frames / since(t);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> dirs;
  int iterations = 20, live_frames = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc)
      iterations = std::stoi(argv[++i]);
    else if (a == "--live-frames" && i + 1 < argc)
      live_frames = std::stoi(argv[++i]);
    else
      dirs.push_back(a);
  }
  Eigen::setNbThreads(1);
  for (const std::string& dir : dirs) {
    const eit::recon::Mesh mesh = eit::recon::load_mesh_csv_folder(dir);
    eit::recon::ProtocolOptions po;
    po.n_electrodes = mesh.n_electrodes();
    const eit::recon::Protocol protocol = eit::recon::make_protocol(po);
    const Eigen::VectorXd v1 = read_vector(dir + "/v1.csv");
    eit::recon::GnOptions o;
    o.max_iterations = iterations;
    o.pyeit_compat = true;
    eit::recon::GaussNewton cpu(mesh, protocol, {}, o);
    double cpu_s = 1e300;
    eit::recon::GnResult a;
    for (int r = 0; r < 2; ++r) {
      const auto t = Clock::now();
      a = cpu.solve(v1);
      cpu_s = std::min(cpu_s, since(t));
    }
    auto t = Clock::now();
    eit::gpu::CudaGaussNewton gpu(mesh, protocol, o);
    const double setup_s = since(t);
    const Cold launched = time_cold(gpu, v1, false), graphed = time_cold(gpu, v1, true);
    const eit::recon::GnResult& b = launched.result;
    const double gpu_s = launched.seconds;
    const eit::recon::GnTimings& split = launched.split;
    const double n = split.iterations ? split.iterations : 1;
    // Live: default mode, 3 warm-started iterations per frame.
    eit::recon::GnOptions lo = o;
    lo.pyeit_compat = false;
    lo.tolerance = 0;
    lo.lambda_min = 1e-2;  // keeps σ > 0 on this data (as bench_gn's live run)
    eit::gpu::CudaGaussNewton live(mesh, protocol, lo);
    const double live_fps = live_rate(live, v1, live_frames, false);
    const double live_graph_fps = live_rate(live, v1, live_frames, true);
    fmt::print(
        "{{\"dir\": \"{}\", \"n_nodes\": {}, \"n_elems\": {}, \"n_meas\": {}, \"iterations\": {}, "
        "\"cpu_s\": {:.6f}, \"cuda_s\": {:.6f}, \"cuda_setup_s\": {:.4f}, \"cpu_over_cuda\": "
        "{:.1f}, "
        "\"cuda_per_iteration_ms\": {{\"forward\": {:.4f}, \"jacobian\": {:.4f}, \"system\": "
        "{:.4f}, "
        "\"solve\": {:.4f}}}, \"rel_diff_cuda_cpu\": {:.3e}, \"cuda_live_fps_3it\": {:.1f}, "
        "\"graph_s\": {:.6f}, \"graph_total_ms_per_it\": {:.4f}, \"launched_total_ms_per_it\": "
        "{:.4f}, \"graph_live_fps_3it\": {:.1f}, \"rel_diff_graph_launched\": {:.3e}, "
        "\"graph\": \"{}\"}}\n",
        dir, mesh.n_nodes(), mesh.n_elems(), protocol.n_meas(), b.iterations, cpu_s, gpu_s, setup_s,
        cpu_s / gpu_s, 1e3 * split.forward / n, 1e3 * split.jacobian / n, 1e3 * split.system / n,
        1e3 * split.solve / n, (b.sigma - a.sigma).norm() / a.sigma.norm(), live_fps,
        graphed.seconds, 1e3 * graphed.split.total / std::max(1, graphed.split.iterations),
        1e3 * split.total / n, live_graph_fps,
        (graphed.result.sigma - b.sigma).norm() / b.sigma.norm(), gpu.graph_note());
    std::fflush(stdout);
  }
  return 0;
}
