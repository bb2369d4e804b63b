#pragma once
// Runs this process out of file descriptors for a while: lowers the soft RLIMIT_NOFILE a little
// above the descriptors in use, then fills what is left with /dev/null, so the next accept() or
// open() fails with EMFILE. The destructor closes them and restores the limit.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

namespace eit::test {

class FdExhaustion {
 public:
  FdExhaustion() {
    if (::getrlimit(RLIMIT_NOFILE, &saved_) != 0) throw std::runtime_error("getrlimit failed");
    const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (probe < 0) throw std::runtime_error("cannot open /dev/null");
    ::close(probe);
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(probe) + 16;  // room for a few, then none
    if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) throw std::runtime_error("setrlimit failed");
    for (;;) {
      const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      fillers_.push_back(fd);
    }
    if (errno != EMFILE) throw std::runtime_error("filling descriptors did not end in EMFILE");
  }
  ~FdExhaustion() {
    for (const int fd : fillers_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  FdExhaustion(const FdExhaustion&) = delete;
  FdExhaustion& operator=(const FdExhaustion&) = delete;

 private:
  rlimit saved_{};
  std::vector<int> fillers_;
};

}  // namespace eit::test
