// The final summary and exit status of `eitstream run` (run_summary.hpp).
#include "run_summary.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/indices/indices_publisher.hpp"
#include "run_nats.hpp"
#include "run_report.hpp"

namespace eit::cli {

int finish_run(const RunConfig& c, const pipeline::PipelineStats& stats, const RunSinks& sinks,
               const std::vector<std::string>& warnings, const RunEnd& end) {
  fmt::print("{}", final_summary(stats, end.stop_wait_s));
  fmt::print("publisher: {}\n", sinks.publisher->health_line());
  if (sinks.monitor) fmt::print("monitor publisher: {}\n", sinks.monitor->health_line());
  if (const auto* ix = dynamic_cast<const indices::IndicesPublisher*>(sinks.indices.get());
      ix && ix->curve())
    fmt::print("indices publisher: CURVE admitted {}, refused {} unknown keys\n",
               ix->curve_admitted(), ix->curve_refused());
  if (sinks.recorders.images)
    fmt::print("{}",
               sink_line("images", c.record, stats.sinks.at(sinks.images_at),
                         stats.sink_queues.at(sinks.images_at), sinks.recorders.images->failure()));
  if (sinks.recorders.frames)
    fmt::print("{}",
               sink_line("raw frames", c.record_raw, stats.sinks.at(sinks.frames_at),
                         stats.sink_queues.at(sinks.frames_at), sinks.recorders.frames->failure()));
  for (const auto& w : warnings) fmt::print("warning: {}\n", w);
  if (sinks.nats) fmt::print("{}\n", nats_status(*sinks.nats));
  std::fflush(stdout);
  if (stats.backend_faults > 0 && stats.lost_on_fault > 0) return 3;
  if (!end.source_failure.empty()) throw CommandError("source failed: " + end.source_failure, 5);
  // The run was asked to keep every frame in a file, and the file stopped (full disk, I/O error).
  if (const std::string failed = recording_failure(sinks.recorders); !failed.empty())
    throw CommandError("recording stopped: " + failed, 6);
  // Lossless: every frame reaches the consumer, or the run says how many did not and fails.
  const auto health = sinks.publisher->health();
  // Frames the socket never took (the run stopped waiting for the consumer) and frames it took
  // that never left the host (still queued at the end) are both in the publisher's drops.
  const uint64_t lost = sinks.publisher->stats().dropped;
  if (sinks.publisher_options.lossless && (lost > 0 || !health.series_end_delivered)) {
    fmt::print(stderr,
               "eitstream: lossless {}: at least {} frames{} did not reach the consumer ({} still "
               "queued when the run ended, the others not taken before it stopped waiting); a "
               "consumer that went away also lost what it had received but not read, which only "
               "its own count shows (listen: 'images', 'sent not received')\n",
               c.push ? "PUSH" : "PUB", lost,
               health.series_end_delivered ? "" : " and the series-end", health.undelivered);
    return 4;
  }
  return 0;
}

}  // namespace eit::cli
