#pragma once
// The foreground of `eitstream run` while the pipeline works: Ctrl-C/SIGTERM handling (a first
// one stops the source and flushes, a second abandons frames still waiting on a consumer),
// --duration, the live source watchdog, and the status line twice a second. Returns when the
// pipeline has finished (after Pipeline::wait()), with the signal handlers restored.
#include <string>

#include "eit/pipeline/pipeline.hpp"
#include "run_config.hpp"
#include "run_sinks.hpp"
#include "stop_signals.hpp"

namespace eit::cli {

struct RunEnd {
  // Why the device source failed (during the run, or at its end without one valid frame), else "".
  std::string source_failure;
  // Time after the stream stopped (a stop, or the source's end) during which no image moved to
  // the sinks while they finished: waiting for a lossless consumer, NATS acknowledgements, a
  // recording. Measured in 20 ms steps; the summary leaves it out of the run's time.
  double stop_wait_s = 0;
};

// Starts `pipe` and runs it to its end. `device_source`: a live device, watched by a
// SourceWatchdog (--source-timeout). A first signal stops the run; a signal that comes after the
// stop began (by a signal, --duration or the watchdog) gives up waiting on the consumer.
RunEnd run_until_finished(const RunConfig& c, pipeline::Pipeline& pipe, const RunSinks& sinks,
                          bool device_source, const StopSignals& interrupts);

}  // namespace eit::cli
