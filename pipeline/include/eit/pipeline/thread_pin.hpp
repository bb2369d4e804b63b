#pragma once
// pin_this_thread(): binds the calling thread to one CPU. Used by the stage threads
// (PipelineOptions::cpus) and by whatever runs beside a pipeline that wants the same (the bench's
// subscriber and reference loops). Any thread; no allocation.
namespace eit::pipeline {

// 0 when pinned, else the error number: EINVAL for a CPU outside 0..CPU_SETSIZE-1 or one the
// thread may not use (a container's cpuset), ENOSYS where the platform cannot pin.
int pin_this_thread(int cpu) noexcept;

}  // namespace eit::pipeline
