#pragma once
// Reads the counts back from `eitstream run`'s final summary (tools/src/run_report.cpp):
//   frames: in X, reconstructed Y, lost before the sinks Z (input queue …), …
//   sink zmq: sent S, dropped D (queue …, send …), send errors E
#include <cstdint>
#include <optional>
#include <regex>
#include <string>

namespace eit::test {

struct RunCounts {
  uint64_t in = 0, reconstructed = 0, lost_before_sinks = 0;
};

struct SinkCounts {
  uint64_t sent = 0, dropped = 0, errors = 0;
};

inline std::optional<RunCounts> run_counts(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(
          out, m,
          std::regex(R"(frames: in (\d+), reconstructed (\d+), lost before the sinks (\d+))")))
    return std::nullopt;
  return RunCounts{std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3])};
}

// The summary line of the sink named `name` (ImageSink::name(): "zmq", "nats", "hdf5-images", …).
inline std::optional<SinkCounts> sink_counts(const std::string& out, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(
          out, m,
          std::regex("sink " + name + R"(: sent (\d+), dropped (\d+) \(.*\), send errors (\d+))")))
    return std::nullopt;
  return SinkCounts{std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3])};
}

}  // namespace eit::test
