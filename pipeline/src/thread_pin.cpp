#include "eit/pipeline/thread_pin.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace eit::pipeline {

int pin_this_thread(int cpu) noexcept {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
  (void)cpu;
  return ENOSYS;
#endif
}

std::vector<int> allowed_cpus(pid_t thread) {
  std::vector<int> out;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(thread, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
#else
  (void)thread;
#endif
  return out;
}

void name_this_thread(std::string_view name) noexcept {
#if defined(__linux__)
  char buf[16];  // the kernel's TASK_COMM_LEN, terminator included
  const size_t n = std::min(name.size(), sizeof buf - 1);
  std::memcpy(buf, name.data(), n);
  buf[n] = '\0';
  pthread_setname_np(pthread_self(), buf);
#else
  (void)name;
#endif
}

}  // namespace eit::pipeline
