#pragma once
// FileHandle: a read-only file for random-access reads by offset (pread), so a reader can fetch
// frame i without seeking state or allocation. Opening throws naming the file; read_at() never
// throws and reports a short read as false. Private to eit_acquisition.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace eit::acquisition::detail {

class FileHandle {
 public:
  explicit FileHandle(const std::filesystem::path& path);
  ~FileHandle();
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;

  uint64_t size() const noexcept { return size_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  // Reads exactly n bytes at offset; false on a short read or an I/O error.
  bool read_at(uint64_t offset, void* buffer, size_t n) const noexcept;
  // Reads up to n bytes at offset; returns the count (0 at the end, -1 on error).
  long read_some(uint64_t offset, void* buffer, size_t n) const noexcept;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The file's name for messages ("draeger_ID_SC_10_60.eit").
inline std::string file_label(const std::filesystem::path& path) {
  return path.filename().string();
}

}  // namespace eit::acquisition::detail
