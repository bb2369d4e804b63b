#include "shm_segment.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "eit/sinks/shm_layout.hpp"

namespace eit::sinks {
namespace {

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

[[noreturn]] void fail(const std::string& what, const std::string& object, int err) {
  throw std::runtime_error(fmt::format("shm {}: {}: {}", object, what, std::strerror(err)));
}

}  // namespace

bool is_shm_uri(std::string_view uri) noexcept { return uri.starts_with("shm://"); }

std::string shm_name_of(std::string_view uri) {
  std::string_view name = uri;
  if (name.starts_with("shm://")) name.remove_prefix(6);
  bool ok = !name.empty() && name.size() <= 200 && name != "." && name != "..";
  for (char c : name) ok = ok && valid_name_char(c);
  if (!ok)
    throw std::invalid_argument(fmt::format(
        "shm name '{}' (from '{}'): expected 1-200 characters of A-Z a-z 0-9 . _ -", name, uri));
  return std::string(name);
}

std::string shm_object_name(std::string_view name) { return fmt::format("/eit.{}", name); }

ShmMapping& ShmMapping::operator=(ShmMapping&& other) noexcept {
  if (this != &other) {
    if (base_) ::munmap(base_, bytes_);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    inode_ = std::exchange(other.inode_, 0);
  }
  return *this;
}

ShmMapping::~ShmMapping() {
  if (base_) ::munmap(base_, bytes_);
}

ShmMapping create_shm(const std::string& object, size_t bytes, bool* exists) {
  *exists = false;
  const int fd = ::shm_open(object.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    *exists = true;
    return {};
  }
  if (fd < 0) fail("shm_open (create)", object, errno);
  struct stat st {};
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0 || ::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    ::shm_unlink(object.c_str());
    fail(fmt::format("ftruncate to {} bytes", bytes), object, err);
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    ::shm_unlink(object.c_str());
    fail(fmt::format("mmap of {} bytes", bytes), object, err);
  }
  return {base, bytes, st.st_ino};
}

ShmMapping open_shm(const std::string& object, bool writable, bool* absent) {
  *absent = false;
  const int fd = ::shm_open(object.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC, 0);
  if (fd < 0 && errno == ENOENT) {
    *absent = true;
    return {};
  }
  if (fd < 0) fail("shm_open", object, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail("fstat", object, err);
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  if (bytes < sizeof(ShmRingHeader)) {
    ::close(fd);
    throw std::runtime_error(fmt::format(
        "shm {}: {} bytes, smaller than the {}-byte ring header (not an eitstream ring, or its "
        "publisher is still creating it)",
        object, bytes, sizeof(ShmRingHeader)));
  }
  void* base =
      ::mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (base == MAP_FAILED) fail(fmt::format("mmap of {} bytes", bytes), object, err);
  return {base, bytes, st.st_ino};
}

ino_t shm_inode(const std::string& object) noexcept {
  const int fd = ::shm_open(object.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return 0;
  struct stat st {};
  const ino_t ino = ::fstat(fd, &st) == 0 ? st.st_ino : 0;
  ::close(fd);
  return ino;
}

// Raw syscalls: std::atomic::wait in libstdc++ uses FUTEX_PRIVATE, which cannot wake another
// process. Both sides use the shared variant on the word in the mapping.
bool futex_wait_shared(std::atomic<uint32_t>& word, uint32_t expected,
                       int64_t timeout_ns) noexcept {
  if (timeout_ns <= 0) return false;
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000),
              static_cast<long>(timeout_ns % 1'000'000'000)};
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts,
                   nullptr, 0) == 0;
}

void futex_wake_shared(std::atomic<uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
            0);
}

}  // namespace eit::sinks
