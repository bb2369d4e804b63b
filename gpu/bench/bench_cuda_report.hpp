#pragma once
// bench_cuda's report: markdown lines to stdout as they come (flushed, so a killed run keeps what
// it measured) and gathered for --out; the table headers and rows of each section.
#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "naive_reference.hpp"

namespace eit::gpu::bench {

class Report {
 public:
  template <typename... A>
  void line(fmt::format_string<A...> f, A&&... a) {
    put(fmt::format(f, std::forward<A>(a)...));
  }
  // Writes everything reported so far to `path` (nothing when empty).
  void save(const std::string& path) const;

  // Sections.
  void header(const std::string& device);
  void bandwidth(const Bandwidth& bw);
  void size_title(size_t n_out, size_t n_meas);
  void single_frame_header(int iters);
  // A single-frame row; `p50_ref` is the naive p50 (the row's own p50 for the naive row).
  void single_frame_row(const std::string& label, const LatencyStats& s, double p50_ref);
  void batch_header(size_t in_flight, const Bandwidth& bw, size_t n_out, bool both_paths);
  struct BatchRow {
    size_t batch;
    double backend, naive, bound;  // frames/s
    double zero_copy;              // frames/s of the backend with stage_batch_values off
    double zero_copy_descs;        // frames/s with stage_batch_descriptors off
    double copy_alone;             // frames/s of the images' copy alone (copy_down_rate)
    std::string extra;             // the forced-path cells, "" when not measured
  };
  void batch_row(const BatchRow& r);
  void paced_header();
  void paced_row(double rate, const std::string& variant, const LatencyStats& s);
  void shared_header();
  void shared_row(double rate, const std::string& variant, const LatencyStats& s);

 private:
  void put(std::string line);
  std::string text_;
};

}  // namespace eit::gpu::bench
