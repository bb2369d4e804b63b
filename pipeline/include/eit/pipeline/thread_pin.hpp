#pragma once
// pin_this_thread(): binds the calling thread to one CPU. Used by the stage threads
// (PipelineOptions::cpus) and by whatever runs beside a pipeline that wants the same (the bench's
// subscriber and reference loops). Any thread; no allocation.
// allowed_cpus(): the CPUs a thread may run on, as the kernel says (sched_getaffinity): to check
// a pinning, or to choose CPUs. Allocates: set-up and tests only.
// name_this_thread(): the name `top -H`, `ps -L` and perf show for the calling thread, so an
// operator can tell the stages apart (each `eitstream` otherwise).
#include <sys/types.h>

#include <string_view>
#include <vector>

namespace eit::pipeline {

// 0 when pinned, else the error number: EINVAL for a CPU outside 0..CPU_SETSIZE-1 or one the
// thread may not use (a container's cpuset), ENOSYS where the platform cannot pin.
int pin_this_thread(int cpu) noexcept;

// Ascending; `thread` is a thread id (of any process) or 0 for the calling thread. Empty when
// the thread does not exist (or the platform cannot tell).
std::vector<int> allowed_cpus(pid_t thread = 0);

// Cut to the kernel's 15 characters; no allocation. Best effort: a platform without thread names
// keeps the process's.
void name_this_thread(std::string_view name) noexcept;

}  // namespace eit::pipeline
