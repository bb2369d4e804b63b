// `eitstream keygen NAME`: a ZeroMQ CURVE key pair in ZeroMQ's certificate format: NAME (the
// public key, to hand out: servers' to clients, clients' into the server's --curve-allow folder)
// and NAME_secret (both keys, mode 0600, stays with its owner). docs/security.md.
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "eit/sinks/curve_keys.hpp"

namespace eit::cli {
namespace {

struct KeygenOptions {
  std::string path;
  bool force = false;
};

void keygen(const KeygenOptions& o) {
  const std::filesystem::path pub(o.path);
  if (pub.has_parent_path()) std::filesystem::create_directories(pub.parent_path());
  try {
    const auto keys = sinks::generate_curve_keypair();
    sinks::write_curve_certificates(pub, keys, o.force);
    fmt::print("public key {} → {}\nsecret key → {}_secret (mode 0600)\n", keys.public_z85,
               pub.string(), pub.string());
  } catch (const std::runtime_error& e) {
    throw CommandError(e.what());
  }
}

const RegisterCommand kKeygen{
    45, [](CLI::App& app) {
      auto o = std::make_shared<KeygenOptions>();
      auto* cmd = app.add_subcommand(
          "keygen",
          "Write a ZeroMQ CURVE key pair: NAME (public certificate) and NAME_secret (mode 0600) "
          "for run --curve-secret/--curve-allow and listen/view --curve-server-key/--curve-secret");
      cmd->add_option("name", o->path, "Path of the public certificate, e.g. keys/server")
          ->required();
      cmd->add_flag("--force", o->force, "Overwrite existing files");
      cmd->footer(std::string("Exit status: 0 the key pair was written; 1 a file exists (without "
                              "--force) or cannot be written; 2 a command line that does not "
                              "parse.") +
                  kExitBySignal);
      cmd->callback([o] { keygen(*o); });
    }};

}  // namespace
}  // namespace eit::cli
