#pragma once
// The operating-system side of the shm:// ring (shm_layout.hpp): a mapped POSIX shared-memory
// object owned by RAII, and the shared futex on the ring's 32-bit wake word. Private to eit_sinks
// (ShmPublisher, ShmReader). Set-up calls throw std::runtime_error naming the object and errno's
// text; futex calls never throw or allocate.
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace eit::sinks {

class ShmMapping {
 public:
  ShmMapping() = default;
  ShmMapping(void* base, size_t bytes, ino_t inode) : base_(base), bytes_(bytes), inode_(inode) {}
  ShmMapping(ShmMapping&& other) noexcept { *this = std::move(other); }
  ShmMapping& operator=(ShmMapping&& other) noexcept;
  ~ShmMapping();

  std::byte* data() const noexcept { return static_cast<std::byte*>(base_); }
  size_t size() const noexcept { return bytes_; }
  ino_t inode() const noexcept { return inode_; }
  explicit operator bool() const noexcept { return base_ != nullptr; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  ino_t inode_ = 0;
};

// Creates `object` (O_EXCL, mode 0600) of `bytes`, zero-filled, mapped read-write. Throws with
// errno's text; EEXIST is reported as "exists" so the caller can decide about a stale object.
ShmMapping create_shm(const std::string& object, size_t bytes, bool* exists);
// Maps an existing object: read-only (readers) or read-write. `absent` is set (and nothing
// thrown) when no object has that name.
ShmMapping open_shm(const std::string& object, bool writable, bool* absent);
// The inode of the object now bound to `object`, 0 when there is none.
ino_t shm_inode(const std::string& object) noexcept;

// FUTEX_WAIT (shared) on `word` while it holds `expected`, at most timeout_ns (≤ 0: no wait).
// True when a FUTEX_WAKE ended the wait (not the timeout, not a changed word).
bool futex_wait_shared(std::atomic<uint32_t>& word, uint32_t expected, int64_t timeout_ns) noexcept;
void futex_wake_shared(std::atomic<uint32_t>& word) noexcept;

}  // namespace eit::sinks
