// ZeroMQ's I/O threads on a chosen CPU (zmq_io_placement.hpp).
#include "eit/sinks/zmq_io_placement.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace eit::sinks {
namespace {

// Thread names hold 15 characters: "9999/ZMQbg/IO/0" is the longest a tag below 10,000 makes.
constexpr int kTagLimit = 10'000;

// "0-2,5" (a Cpus_allowed_list line) → {0, 1, 2, 5}.
std::vector<int> parse_cpu_ranges(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    const int first = std::stoi(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  return cpus;
}

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

bool is_io_thread(const std::string& name, int tag) {
  const std::string suffix = "ZMQbg/IO/";
  const size_t at = name.find(suffix);
  if (at == std::string::npos) return false;
  return tag == kAnyTag || name.substr(0, at) == std::to_string(tag) + "/";
}

std::vector<int> scan(pid_t pid, int tag) {
  const std::filesystem::path tasks =
      std::filesystem::path("/proc") / (pid == 0 ? "self" : std::to_string(pid)) / "task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    if (!is_io_thread(first_line(task.path() / "comm"), tag)) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      const std::string key = "Cpus_allowed_list:";
      if (line.rfind(key, 0) == 0) return parse_cpu_ranges(line.substr(key.size()));
    }
  }
  return {};
}

}  // namespace

int place_io_threads(zmq::context_t& context, int cpu) {
  static std::atomic<int> next_tag{1};
  const int tag = next_tag.fetch_add(1) % kTagLimit;
  context.set(zmq::ctxopt::thread_name_prefix, tag);
  context.set(zmq::ctxopt::thread_affinity_cpu_add, cpu);
  return tag;
}

std::vector<int> io_thread_cpus(pid_t pid, int tag, int expect_cpu, int wait_ms) {
  // A thread pins itself as it starts: until then it shows the CPUs it was created with.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    std::vector<int> cpus = scan(pid, tag);
    const bool settled =
        !cpus.empty() && (expect_cpu < 0 || (cpus.size() == 1 && cpus.front() == expect_cpu));
    if (settled || std::chrono::steady_clock::now() >= deadline) return cpus;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace eit::sinks
