#pragma once
// How much memory a set-up step may take before it starts: a matrix that cannot fit is refused
// up front with its size and what is available, instead of std::bad_alloc (or the OOM killer)
// minutes into the work.
#include <cstdint>
#include <string>

namespace eit::cli {

// The kernel's estimate of memory available without swapping (/proc/meminfo MemAvailable), in
// bytes; 0 when unknown.
uint64_t available_memory_bytes();

// Throws CommandError when `bytes` exceed what is available: "{what} needs {bytes} GiB ({how}),
// this machine has {available} GiB available; {advice}". Nothing when the amount is unknown.
void check_fits_in_memory(double bytes, const std::string& what, const std::string& how,
                          const std::string& advice);

}  // namespace eit::cli
