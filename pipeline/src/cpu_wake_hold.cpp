#include "eit/pipeline/cpu_wake_hold.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace eit::pipeline {

namespace {
constexpr const char* kPath = "/dev/cpu_dma_latency";
}

CpuWakeHold::CpuWakeHold(int32_t max_latency_us) {
  const int fd = ::open(kPath, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    text_ = fmt::format("not held: {}: {}", kPath, std::strerror(errno));
    return;
  }
  // The kernel takes a binary 32-bit value; the request lasts while the file is open.
  if (::write(fd, &max_latency_us, sizeof max_latency_us) !=
      static_cast<ssize_t>(sizeof max_latency_us)) {
    text_ = fmt::format("not held: writing {}: {}", kPath, std::strerror(errno));
    ::close(fd);
    return;
  }
  fd_ = fd;
  text_ = fmt::format("held ({} {} µs)", kPath, max_latency_us);
}

CpuWakeHold::~CpuWakeHold() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace eit::pipeline
