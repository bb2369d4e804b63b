#pragma once
// The command line of an `eitstream worker` under test, and the frame count it reports. Needs
// EITSTREAM_BIN (the CLI tests).
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "worker_model_dir.hpp"

namespace eit::test {

// `eitstream worker URI --model-dir DIR OPTIONS… --status-interval 0.2`: the tests wait on its
// status lines.
inline std::vector<std::string> worker_command(const std::string& uri, const WorkerModelDir& models,
                                               const std::vector<std::string>& options = {}) {
  std::vector<std::string> command{EITSTREAM_BIN, "worker", uri, "--model-dir",
                                   models.path.string()};
  command.insert(command.end(), options.begin(), options.end());
  command.insert(command.end(), {"--status-interval", "0.2"});
  return command;
}

// A worker of site icu named `id` with a lease of 1 s, so that a bed it no longer renews is taken
// over within seconds.
inline std::vector<std::string> leased_worker_command(const std::string& server_url,
                                                      const WorkerModelDir& models,
                                                      const std::string& id) {
  return worker_command(server_url + "?site=icu", models, {"--id", id, "--lease", "1"});
}

// The frames the first "frames N, bad …" in `out` (a worker's summary, on stdout) counts; nullopt
// when there is none.
inline std::optional<uint64_t> worker_frames(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(frames (\d+), bad)"))) return std::nullopt;
  return std::stoull(m[1]);
}

}  // namespace eit::test
