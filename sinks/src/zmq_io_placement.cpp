// ZeroMQ's I/O threads on a chosen CPU (zmq_io_placement.hpp).
#include "eit/sinks/zmq_io_placement.hpp"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "eit/pipeline/thread_pin.hpp"

namespace eit::sinks {
namespace {

// Thread names hold 15 characters: "9999/ZMQbg/IO/0" is the longest a tag below 10,000 makes.
constexpr int kTagLimit = 10'000;

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

// The thread id of the first I/O thread of process `pid` named with `tag`; 0 when none is found.
pid_t find_io_thread(pid_t pid, int tag) {
  const std::filesystem::path tasks =
      std::filesystem::path("/proc") / (pid == 0 ? "self" : std::to_string(pid)) / "task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    if (!is_io_thread(first_line(task.path() / "comm"), tag)) continue;
    return static_cast<pid_t>(std::stol(task.path().filename().string()));
  }
  return 0;
}

// Polls `read` (empty or -1: not yet) until `settled` or the deadline; returns the last reading.
template <typename Read, typename Settled>
auto poll_until(int wait_ms, Read&& read, Settled&& settled) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    auto value = read();
    if (settled(value) || std::chrono::steady_clock::now() >= deadline) return value;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

int place_io_threads(zmq::context_t& context, int cpu, IoWake wake) {
  static std::atomic<int> next_tag{1};
  const int tag = next_tag.fetch_add(1) % kTagLimit;
  context.set(zmq::ctxopt::thread_name_prefix, tag);
  context.set(zmq::ctxopt::thread_affinity_cpu_add, cpu);
  // libzmq applies the policy with priority 0 as each thread starts (no privilege needed).
  if (wake == IoWake::kDefer) context.set(zmq::ctxopt::thread_sched_policy, SCHED_BATCH);
  return tag;
}

std::vector<int> io_thread_cpus(pid_t pid, int tag, int expect_cpu, int wait_ms) {
  // A thread pins itself as it starts: until then it shows the CPUs it was created with.
  return poll_until(
      wait_ms,
      [&] {
        const pid_t tid = find_io_thread(pid, tag);
        return tid > 0 ? pipeline::allowed_cpus(tid) : std::vector<int>{};
      },
      [&](const std::vector<int>& cpus) {
        return !cpus.empty() &&
               (expect_cpu < 0 || (cpus.size() == 1 && cpus.front() == expect_cpu));
      });
}

int io_thread_policy(pid_t pid, int tag, int expect_policy, int wait_ms) {
  return poll_until(
      wait_ms,
      [&] {
        const pid_t tid = find_io_thread(pid, tag);
        return tid > 0 ? sched_getscheduler(tid) : -1;
      },
      [&](int policy) { return policy >= 0 && (expect_policy < 0 || policy == expect_policy); });
}

}  // namespace eit::sinks
