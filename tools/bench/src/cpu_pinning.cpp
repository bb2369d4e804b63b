// CPU pinning of a benchmark run (cpu_pinning.hpp).
#include "eit/bench/cpu_pinning.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eit/sinks/zmq_io_placement.hpp"

namespace eit::bench {
namespace {

cpu_set_t mask_of(const std::vector<int>& cpus) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return set;
}

}  // namespace

std::string CpuRequest::text() const {
  return automatic ? std::string("auto") : fmt::format("{}", fmt::join(list, ","));
}

std::string ThreadCpu::outcome() const {
  if (error == 0) return "pinned";
  if (error == kNotReported) return "not reported";
  return fmt::format("not pinned: {}", std::strerror(error));
}

std::vector<std::string> threads_to_pin(bool reconstructor_thread, bool sink_thread) {
  std::vector<std::string> t{"source", "subscriber"};
  if (reconstructor_thread) t.emplace_back("reconstructor");
  if (sink_thread) t.emplace_back("sink 0");
  return t;
}

std::vector<ThreadCpu> assign_cpus(const CpuRequest& request,
                                   const std::vector<std::string>& threads,
                                   const std::vector<int>& allowed) {
  std::vector<ThreadCpu> out;
  if (!request.any() || threads.empty()) return out;
  std::vector<int> cpus = request.list;
  if (request.automatic) {
    if (allowed.size() < threads.size())
      throw std::invalid_argument(fmt::format(
          "--cpus auto: this run has {} threads to pin ({}) but the process may run on {} CPU(s) "
          "({}); give --cpus LIST to share CPUs, or leave --cpus out",
          threads.size(), fmt::join(threads, ", "), allowed.size(), fmt::join(allowed, ",")));
    // CPU 0 takes most interrupts and housekeeping: leave it out when there is room.
    cpus.clear();
    const bool skip_zero = allowed.size() > threads.size();
    for (int c : allowed)
      if (cpus.size() < threads.size() && !(skip_zero && c == 0)) cpus.push_back(c);
  }
  for (size_t i = 0; i < threads.size(); ++i)
    out.push_back({threads[i], cpus[i % cpus.size()], ThreadCpu::kNotReported});
  return out;
}

int cpu_of(const std::vector<ThreadCpu>& cpus, std::string_view thread) noexcept {
  for (const auto& t : cpus)
    if (t.thread == thread) return t.cpu;
  return -1;
}

ScopedThreadPin::ScopedThreadPin(int cpu) noexcept {
  if (cpu < 0) return;
  try {
    previous_ = allowed_cpus();
  } catch (...) {  // no memory for the list: leave the thread as it is
    return;
  }
  error_ = pin_this_thread(cpu);
}

ScopedThreadPin::~ScopedThreadPin() {
  if (error_ != 0 || previous_.empty()) return;
  const cpu_set_t set = mask_of(previous_);
  (void)::sched_setaffinity(0, sizeof set, &set);
}

std::string describe_cpus(const std::vector<ThreadCpu>& cpus, std::string_view none) {
  if (cpus.empty()) return std::string(none);
  std::string out;
  for (const auto& t : cpus)
    out += fmt::format("{}{} → CPU {} {}", out.empty() ? "" : ", ", t.thread, t.cpu, t.outcome());
  return out;
}

ThreadCpu io_thread_placement(std::string name, pid_t pid, int tag, int cpu) {
  const std::vector<int> seen = sinks::io_thread_cpus(pid, tag, cpu);
  const bool alone = seen.size() == 1 && seen.front() == cpu;
  return {std::move(name), cpu, seen.empty() ? ESRCH : alone ? 0 : EINVAL};
}

}  // namespace eit::bench
