// bench_cuda's report (see bench_cuda_report.hpp).
#include "bench_cuda_report.hpp"

#include <cstdio>
#include <fstream>

namespace eit::gpu::bench {

void Report::put(std::string line) {
  line += "\n";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
  text_ += line;
}

void Report::save(const std::string& path) const {
  if (!path.empty()) std::ofstream(path) << text_;
}

void Report::header(const std::string& device) { line("## bench_cuda\n\nDevice: {}\n", device); }

void Report::bandwidth(const Bandwidth& bw) {
  line(
      "PCIe (pinned, 256 MB cudaMemcpy, best of 5): host→device {:.1f} GB/s, device→host {:.1f} "
      "GB/s",
      bw.h2d_gbs, bw.d2h_gbs);
}

void Report::size_title(size_t n_out, size_t n_meas) {
  line("\n### {} × {} (H {:.1f} MB float32)\n", n_out, n_meas, n_out * n_meas * 4 / 1e6);
}

void Report::single_frame_header(int iters) {
  line("Single frame, host to host (µs), {} frames each:\n", iters);
  line("| variant | p50 | p99 | p99.9 | max | frames/s | p50 vs naive |");
  line("|---|---|---|---|---|---|---|");
}

void Report::single_frame_row(const std::string& label, const LatencyStats& s, double p50_ref) {
  line("| {} | {} | {:.0f} | {:.2f} |", label, cells(s), 1e6 / s.mean_us, p50_ref / s.p50_us);
}

void Report::batch_header(size_t in_flight, const Bandwidth& bw, size_t n_out, bool both_paths) {
  line(
      "\nBatched throughput (backend auto, {} batches in flight) vs naive (one stream, copy → "
      "Sgemm → copy → sync) and the PCIe bound ({:.1f} GB/s D2H ÷ {} B per image = {:.2f} M "
      "frames/s):\n",
      in_flight, bw.d2h_gbs, n_out * 4, bw.d2h_gbs * 1e9 / (n_out * 4) / 1e6);
  line(
      "| batch | backend frames/s | naive frames/s | backend ÷ naive | backend ÷ PCIe bound | "
      "values zero-copy frames/s | descriptors zero-copy frames/s | images copy alone "
      "frames/s | backend ÷ copy alone |{}",
      both_paths ? " own kernel frames/s | cuBLAS path frames/s |" : "");
  line("|---|---|---|---|---|---|---|---|---|{}", both_paths ? "---|---|" : "");
}

void Report::batch_row(const BatchRow& r) {
  line("| {} | {:.0f} | {:.0f} | {:.2f} | {:.0f}% | {:.0f} | {:.0f} | {:.0f} | {:.2f} |{}", r.batch,
       r.backend, r.naive, r.backend / r.naive, 100 * r.backend / r.bound, r.zero_copy,
       r.zero_copy_descs, r.copy_alone, r.backend / r.copy_alone, r.extra);
}

void Report::paced_header() {
  line("\nPaced arrival (latency from the scheduled time, µs):\n");
  line("| rate | variant | p50 | p99 | p99.9 | max |");
  line("|---|---|---|---|---|---|");
}

void Report::paced_row(double rate, const std::string& variant, const LatencyStats& s) {
  line("| {:.0f} Hz | {} | {} |", rate, variant, cells(s));
}

void Report::shared_header() {
  line("\n### 8 streams sharing the GPU (1024 × 208, 8 threads, each its own backend)\n");
  line("| load | variant | p50 | p99 | p99.9 | max |");
  line("|---|---|---|---|---|---|");
}

void Report::shared_row(double rate, const std::string& variant, const LatencyStats& s) {
  line("| 8 × {:.0f} Hz | {} | {} |", rate, variant, cells(s));
}

}  // namespace eit::gpu::bench
