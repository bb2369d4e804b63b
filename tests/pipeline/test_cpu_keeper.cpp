// CpuKeeper: a spinner on the CPU asked for, alone there, at SCHED_IDLE (so any other thread woken
// on that CPU preempts it), gone at destruction; a CPU it may not use is refused with the reason.
#include <doctest/doctest.h>

#include <sched.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "eit/pipeline/cpu_keeper.hpp"
#include "eit/pipeline/thread_pin.hpp"

namespace {

bool thread_exists(pid_t tid) {
  return std::filesystem::exists("/proc/self/task/" + std::to_string(tid));
}

bool thread_gone_within_5s(pid_t tid) {
  for (int ms = 0; ms < 5000 && thread_exists(tid); ++ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return !thread_exists(tid);
}

}  // namespace

TEST_CASE("CpuKeeper spins on its CPU alone at SCHED_IDLE and ends with its owner") {
  const std::vector<int> mine = eit::pipeline::allowed_cpus();
  REQUIRE_FALSE(mine.empty());
  const int cpu = mine.back();
  pid_t tid = 0;
  {
    const eit::pipeline::CpuKeeper keeper(cpu);
    CHECK(keeper.keeping());
    CHECK(keeper.describe() == "keeping CPU " + std::to_string(cpu) + " (SCHED_IDLE spinner)");
    tid = keeper.thread_id();
    REQUIRE(tid > 0);
    CHECK(::sched_getscheduler(tid) == SCHED_IDLE);
    CHECK(eit::pipeline::allowed_cpus(tid) == std::vector<int>{cpu});
    CHECK(thread_exists(tid));
  }
  // Joined; the kernel drops the thread's /proc entry a moment after join() returns (the join
  // wakes on the thread clearing its id, before the task is released).
  CHECK(thread_gone_within_5s(tid));
}

TEST_CASE("CpuKeeper refuses a CPU the process may not use, names it and why, and spins nowhere") {
  const eit::pipeline::CpuKeeper keeper(100000);  // beyond CPU_SETSIZE
  CHECK_FALSE(keeper.keeping());
  CHECK(keeper.describe() == "not keeping CPU 100000: pinning: Invalid argument");
  // The thread ended at once rather than spin unpinned (joined at destruction).
  CHECK(thread_gone_within_5s(keeper.thread_id()));
}
