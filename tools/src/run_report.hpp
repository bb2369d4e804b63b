#pragma once
// What `eitstream run` prints: the live status line (rate, latency p50/p99, drops, refreshed
// about twice a second) and the final summary, both from PipelineStats snapshots. The status
// thread reads the pipeline without locks (pipeline_stats.hpp).
#include <string>

#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline.hpp"

namespace eit::cli {

// Keeps the previous snapshot so each line shows the last interval, not the whole run.
class StatusLine {
 public:
  explicit StatusLine(const pipeline::Pipeline& p);
  std::string next();  // the line for the interval since the previous call

 private:
  const pipeline::Pipeline& pipeline_;
  pipeline::HistogramSnapshot last_hist_;
  uint64_t last_out_ = 0;
  int64_t last_ns_ = 0;
};

// The status line's part about the source, totals since the start: reconnects, rejected frames,
// frames missing or dropped by seq, bytes skipped while resynchronising, the last problem; empty
// when all is well. Each item only once it is non-zero.
std::string source_status(const pipeline::SourceStats& s);

// `stop_wait_s`: the part of the run spent waiting for the sinks after the stream stopped
// (RunEnd): left out of the run's time and frames/s, and said on its own line from 0.1 s.
std::string final_summary(const pipeline::PipelineStats& s, double stop_wait_s = 0);

}  // namespace eit::cli
