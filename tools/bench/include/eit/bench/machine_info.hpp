#pragma once
// What a benchmark ran on, recorded with its results: CPU, cores, kernel, OS, compiler, library
// versions, the GPU and driver (filled in by the caller when the CUDA backend is built), the
// clock's resolution and the exact command line. Collected once, before a run; reads /proc and
// /etc, never throws (unknown fields say "unknown").
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace eit::bench {

struct MachineInfo {
  std::string hostname;
  std::string cpu_model;            // /proc/cpuinfo "model name"
  unsigned logical_cpus = 0;        // online CPUs
  unsigned usable_cpus = 0;         // CPUs this process may run on (affinity mask)
  std::string kernel;               // uname: sysname release machine
  std::string os;                   // /etc/os-release PRETTY_NAME
  std::string compiler;             // the compiler that built eitstream
  std::string build_type;           // "Release", …
  std::string gpu;                  // cuda_device_description(), or "not probed …"
  int64_t clock_resolution_ns = 0;  // clock_getres(CLOCK_MONOTONIC)
  std::string started_utc;          // ISO 8601
  std::string command_line;         // argv joined, shell-quoted where needed
  std::vector<std::pair<std::string, std::string>> versions;  // name → version
};

// Fills everything it can find on this machine; `gpu` and extra versions are the caller's.
MachineInfo collect_machine_info(int argc, const char* const* argv);

// Same, with the command line read from /proc/self/cmdline (for code that has no argv).
MachineInfo collect_machine_info();

// argv joined with single quotes around arguments that need them.
std::string quote_command_line(int argc, const char* const* argv);

}  // namespace eit::bench
