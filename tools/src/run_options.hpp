#pragma once
// The options of `eitstream run` and the one table that maps each to its config-file key
// (run_config.hpp): a setting comes from the defaults, then the --config file, then the command
// line (an option given explicitly wins).
#include <string>

#include <CLI/CLI.hpp>

#include "run_config.hpp"

namespace eit::cli {

// Registers every RunConfig option on `cmd`, bound to `cli`.
void add_run_options(CLI::App& cmd, RunConfig& cli);

// The settings to run with: `config_file` (if not empty) over the defaults, then each option
// given on `cmd`'s command line copied from `cli`. The file's keys for options outside RunConfig
// (--indices …) are set on `cmd`'s own options unless given on the command line. Throws
// std::runtime_error for a bad file or a key that names no option of `cmd`.
RunConfig merge_run_options(CLI::App& cmd, const RunConfig& cli, const std::string& config_file);

}  // namespace eit::cli
