#pragma once
// The pyEIT side of `eitstream bench --compare-pyeit`: writes the frames eitstream streams to a
// .npy file, runs tools/bench/bench_vs_pyeit.py on them (pyEIT JAC and GREIT solve + a pyzmq
// publish per frame, in a Python loop) and reads back its per-frame times.
// Set-up code: allocates, spawns python3, blocks until it is done. A missing python3, pyeit or
// pyzmq is not an error: the result says why the comparison was skipped.
#include <string>
#include <vector>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/bench/bench_report.hpp"

namespace eit::bench {

struct PyeitRun {
  std::string skipped;                  // non-empty: why there are no timings
  std::vector<ExternalTiming> timings;  // one per algorithm, in the order asked
};

// Frames seq 0 … n_frames−1 exactly as the source delivers them (noiseless interpolation of
// `table`), float64 row-major, written as .npy.
void write_frames_npy(const acquisition::PhantomTable& table, size_t n_frames,
                      const std::string& path);

// rate_hz: the paced loop's rate (latency); frames/s comes from a back-to-back loop.
PyeitRun run_pyeit(const std::string& script, const acquisition::PhantomTable& table,
                   size_t n_frames, double rate_hz, const std::string& algorithms = "jac,greit");

}  // namespace eit::bench
