#pragma once
// Subcommands of `eitstream` register themselves here from their own file:
//
//   static const eit::cli::RegisterCommand kModel{20, [](CLI::App& app) {
//     auto* cmd = app.add_subcommand("model", "Build, inspect and import reconstruction models");
//     ...
//   }};
//
// `order` fixes where the subcommand appears in --help. A subcommand reports failure by throwing
// eit::cli::CommandError (message printed, exit code kept) or any std::exception (exit code 1).
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace eit::cli {

using AttachFn = std::function<void(CLI::App&)>;

struct RegisteredCommand {
  int order;
  AttachFn attach;
};

std::vector<RegisteredCommand>& command_registry();

struct RegisterCommand {
  RegisterCommand(int order, AttachFn attach) {
    command_registry().push_back({order, std::move(attach)});
  }
};

// The last sentence of each command's "Exit status:" in --help (docs/operations.md, section 4).
// Commands that stop on SIGINT/SIGTERM once set up (StopSignals: run, listen, view, worker,
// emulate) and commands that never handle them (batch work: reconstruct, model, bench, …).
inline constexpr const char* kExitBySignalBeforeSetUp =
    " A signal that comes before it is set up to stop on one (while it loads, builds or "
    "connects), and SIGKILL at any time, end it with 128 + the signal (130 SIGINT, 143 SIGTERM, "
    "137 SIGKILL) and no summary.";
inline constexpr const char* kExitBySignal =
    " SIGINT or SIGTERM ends it at once with 128 + the signal (130, 143; SIGKILL 137), leaving "
    "what it was writing incomplete.";

class CommandError : public std::runtime_error {
 public:
  CommandError(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace eit::cli
