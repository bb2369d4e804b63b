#include "file_handle.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::acquisition::detail {

FileHandle::FileHandle(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw std::runtime_error(
        fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw std::runtime_error(fmt::format("{}: not a regular file", path.string()));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

long FileHandle::read_some(uint64_t offset, void* buffer, size_t n) const noexcept {
  for (;;) {
    const ssize_t got = ::pread(fd_, buffer, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    return static_cast<long>(got);
  }
}

bool FileHandle::read_at(uint64_t offset, void* buffer, size_t n) const noexcept {
  auto* p = static_cast<char*>(buffer);
  while (n > 0) {
    const long got = read_some(offset, p, n);
    if (got <= 0) return false;
    p += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace eit::acquisition::detail
