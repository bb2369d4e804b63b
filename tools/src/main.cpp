// eitstream: real-time EIT reconstruction. Subcommands come from src/cmd_*.cpp.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <hdf5.h>
#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "option_checks.hpp"

namespace eit::cli {
std::vector<RegisteredCommand>& command_registry() {
  static std::vector<RegisteredCommand> registry;
  return registry;
}

namespace {

// Edits (insert, delete, replace) between a and b: for "did you mean" on a mistyped command.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// CLI11 checks "a subcommand is required" before it looks at unknown words, so a typo
// ("recontruct") was told only that. The first word, when it is no option and no command, is
// named here, with the nearest command.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return {};
  const std::string word = argv[1];
  std::string nearest;
  size_t best = SIZE_MAX;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return {};
    const size_t d = edit_distance(word, sub->get_name());
    if (d < best) {
      best = d;
      nearest = sub->get_name();
    }
  }
  return fmt::format("unknown command '{}'{}; `eitstream --help` lists them", word,
                     best <= 3 ? fmt::format(" (did you mean '{}'?)", nearest) : "");
}

}  // namespace
}  // namespace eit::cli

int main(int argc, char** argv) {
  // A closed stdout/stderr pipe (`eitstream run | head`) or a peer gone mid-write must surface as
  // EPIPE on that write, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // A file size limit (ulimit -f) reached by a recording must fail that write with EFBIG, which
  // the recorder reports (exit status 6, the stream goes on), not kill the whole run.
  std::signal(SIGXFSZ, SIG_IGN);
  // Every file is closed by its owner. libhdf5 1.10's own clean-up at exit crashes (SIGSEGV in
  // H5F__close_cb) on a file whose close failed, e.g. a recording that hit a full disk; without
  // it a failed recording ends the run with its real exit status. First HDF5 call, as required.
  H5dont_atexit();
  CLI::App app{
      "eitstream: real-time electrical impedance tomography reconstruction.\n"
      "Frames from a device, a recording or a synthetic phantom are reconstructed with a\n"
      "precomputed matrix (CPU or CUDA) and published over ZeroMQ.\n"
      "Run `eitstream run` with no arguments to stream the built-in phantom."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "eitstream 0.1.0");
  auto& registry = eit::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& command : registry) command.attach(app);
  eit::cli::check_whole_numbers(app);
  if (const std::string why = eit::cli::unknown_command(app, argc, argv); !why.empty()) {
    fmt::print(stderr, "eitstream: {}\n", why);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 returns 0 for --help and its own code (100-115) per kind of mistake; scripts get the
    // usual usage status instead, so that 3-6 keep their run-time meanings.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const eit::cli::CommandError& e) {
    fmt::print(stderr, "eitstream: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "eitstream: {}\n", e.what());
    return 1;
  }
  return 0;
}
