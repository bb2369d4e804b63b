#include "eit/bench/machine_info.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <Eigen/Core>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <zmq.h>

namespace eit::bench {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\"");
  const auto e = s.find_last_not_of(" \t\"\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The value after "key<sep>" on the first matching line of `path`, or "".
std::string field_of(const char* path, std::string_view key, char sep) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto pos = line.find(sep, key.size());
    if (pos != std::string::npos) return trim(line.substr(pos + 1));
  }
  return {};
}

std::string or_unknown(std::string s) { return s.empty() ? std::string("unknown") : s; }

}  // namespace

std::string quote_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i) out += ' ';
    const bool plain =
        !a.empty() && a.find_first_not_of(
                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                          "OPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string_view::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

MachineInfo collect_machine_info(int argc, const char* const* argv) {
  MachineInfo m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  m.cpu_model = or_unknown(field_of("/proc/cpuinfo", "model name", ':'));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.logical_cpus = online > 0 ? static_cast<unsigned>(online) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) m.usable_cpus = CPU_COUNT(&set);
  utsname u{};
  if (uname(&u) == 0) m.kernel = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  m.os = or_unknown(field_of("/etc/os-release", "PRETTY_NAME", '='));
#if defined(__clang__)
  m.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  m.compiler = fmt::format("gcc {}", __VERSION__);
#else
  m.compiler = "unknown";
#endif
#ifdef EIT_BUILD_TYPE
  m.build_type = EIT_BUILD_TYPE;
#else
  m.build_type = "unknown";
#endif
  // The CUDA plugin loads only for runs that use it (cmd_bench fills this in for them); no
  // probe here, so that a CPU-only bench never pays for it.
  m.gpu = "not probed (no cuda run)";
  timespec res{};
  if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
    m.clock_resolution_ns = int64_t{res.tv_sec} * 1'000'000'000 + res.tv_nsec;
  m.started_utc = fmt::format(
      "{:%Y-%m-%dT%H:%M:%SZ}",
      fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  m.command_line = quote_command_line(argc, argv);
#ifdef EIT_VERSION
  m.versions.emplace_back("eitstream", EIT_VERSION);
#endif
  m.versions.emplace_back("eigen", fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                                               EIGEN_MINOR_VERSION));
  int zmaj = 0, zmin = 0, zpatch = 0;
  zmq_version(&zmaj, &zmin, &zpatch);
  m.versions.emplace_back("libzmq", fmt::format("{}.{}.{}", zmaj, zmin, zpatch));
  m.versions.emplace_back("fmt", fmt::format("{}.{}.{}", FMT_VERSION / 10000,
                                             FMT_VERSION / 100 % 100, FMT_VERSION % 100));
  return m;
}

MachineInfo collect_machine_info() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t pos = 0; pos < all.size();) {
    const size_t end = all.find('\0', pos);
    args.push_back(all.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return collect_machine_info(static_cast<int>(argv.size()), argv.data());
}

}  // namespace eit::bench
