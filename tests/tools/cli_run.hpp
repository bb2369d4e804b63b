#pragma once
// Runs the real eitstream binary (EITSTREAM_BIN) to completion through the shell and keeps its
// exit code and everything it printed (stdout and stderr together), for CLI tests that check a
// command's result; subprocess.hpp is for those that must watch or signal it while it runs.
#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace eit::test {

struct CliResult {
  int code = -1;       // the exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// `eitstream <args>`; args go through the shell as written.
inline CliResult run_eitstream(const std::string& args) {
  CliResult r;
  FILE* pipe = ::popen(fmt::format("{} {} 2>&1", EITSTREAM_BIN, args).c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// <temp>/<prefix>_<pid>_<name>: one name per test process, so parallel CTest runs do not collide.
inline std::filesystem::path cli_temp_path(std::string_view prefix, std::string_view name) {
  return std::filesystem::temp_directory_path() / fmt::format("{}_{}_{}", prefix, ::getpid(), name);
}

// A fresh, empty folder <temp>/eit_<prefix>_<pid> for one test's files (emptied if it exists).
inline std::filesystem::path fresh_work_dir(std::string_view prefix) {
  const auto d =
      std::filesystem::temp_directory_path() / fmt::format("eit_{}_{}", prefix, ::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace eit::test
