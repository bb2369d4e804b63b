#include "eit/pipeline/cpu_keeper.hpp"

#include <cstring>
#include <future>
#include <thread>

#include <fmt/format.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

#include "eit/pipeline/thread_pin.hpp"

namespace eit::pipeline {

namespace {

// 0, or the errno of making the calling thread SCHED_IDLE.
int become_idle_priority() noexcept {
#if defined(__linux__) && defined(SCHED_IDLE)
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
#else
  return ENOSYS;
#endif
}

}  // namespace

CpuKeeper::CpuKeeper(int cpu) : cpu_(cpu) {
  std::promise<std::string> started;  // "" when keeping, else why not
  std::future<std::string> outcome = started.get_future();
  thread_ = std::thread([this, &started] {
    tid_ = ::gettid();  // read by the constructor after the promise is set
    name_this_thread("eit-cpu-keeper");
    if (const int e = pin_this_thread(cpu_); e != 0) {
      started.set_value(fmt::format("pinning: {}", std::strerror(e)));
      return;
    }
    if (const int e = become_idle_priority(); e != 0) {
      started.set_value(fmt::format("SCHED_IDLE: {}", std::strerror(e)));
      return;
    }
    started.set_value("");
    // Into the kernel on every turn (cpu_keeper.hpp): a wake-up never waits for a tick.
    while (!stop_.load(std::memory_order_relaxed)) std::this_thread::yield();  // sched_yield()
  });
  const std::string why_not = outcome.get();
  keeping_ = why_not.empty();
  text_ = keeping_ ? fmt::format("keeping CPU {} (SCHED_IDLE spinner)", cpu_)
                   : fmt::format("not keeping CPU {}: {}", cpu_, why_not);
}

CpuKeeper::~CpuKeeper() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

}  // namespace eit::pipeline
