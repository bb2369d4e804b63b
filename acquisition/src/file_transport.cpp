// File transport: a byte-stream capture read sequentially in buffer-sized chunks, so a
// StreamDecoder replays it exactly as it would the live link. Blocking reads of a local file
// return quickly, so the deadline only matters through stop().
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "eit/acquisition/transports.hpp"

namespace eit::acquisition {
namespace {

class FileTransport final : public ByteTransport {
 public:
  FileTransport(const std::string& path, bool loop) : path_(path), loop_(loop) {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) {
      throw std::runtime_error(fmt::format("{}: cannot open ({}); expected a readable capture file",
                                           path, std::strerror(errno)));
    }
  }
  ~FileTransport() override { std::fclose(file_); }

  std::string describe() const override { return "file://" + path_ + (loop_ ? " (loop)" : ""); }
  std::string endpoint() const override { return path_; }
  void stop() noexcept override { stopped_.store(true, std::memory_order_release); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point) override {
    for (;;) {
      if (stopped_.load(std::memory_order_acquire)) return {TransportStatus::kStopped};
      const size_t n = std::fread(buffer.data(), 1, buffer.size(), file_);
      if (n > 0) {
        read_any_ = true;
        TransportRead r{TransportStatus::kData, n, fresh_};
        fresh_ = false;
        return r;
      }
      if (std::ferror(file_)) {
        note_error(fmt::format("file://{}: read failed ({})", path_, std::strerror(errno)));
        return {TransportStatus::kEnd};
      }
      if (!loop_ || !read_any_) return {TransportStatus::kEnd};
      std::rewind(file_);
      fresh_ = true;  // the capture starts over: a partial frame at its end is dropped
      read_any_ = false;
      continue;
    }
  }

 private:
  std::string path_;
  bool loop_;
  std::FILE* file_ = nullptr;
  std::atomic<bool> stopped_{false};
  bool fresh_ = true, read_any_ = false;
};

}  // namespace

std::unique_ptr<ByteTransport> make_file_transport(const std::string& path, bool loop) {
  return std::make_unique<FileTransport>(path, loop);
}

}  // namespace eit::acquisition
