// Device link over a pseudo-terminal: openpty() gives a master (written here) and a slave that a
// receiver opens like a serial port. Both ends are set raw (no echo, no CR/LF translation) so
// the bytes arrive unchanged. The slave stays open here too, so a receiver may come late (what
// was written waits in the pty) or reopen without the pty being hung up.
#include <cerrno>
#include <climits>
#include <cstring>

#include <thread>

#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <fmt/format.h>

#include "device_links.hpp"

namespace eit::acquisition::detail {
namespace {

class PtyLink final : public DeviceLink {
 public:
  PtyLink() {
    termios raw{};
    cfmakeraw(&raw);
    cfsetispeed(&raw, B115200);
    cfsetospeed(&raw, B115200);
    char name[PATH_MAX] = {};
    if (openpty(&master_, &slave_, name, &raw, nullptr) != 0) {
      throw std::runtime_error(fmt::format(
          "pty: openpty failed ({}); expected /dev/ptmx to be usable", std::strerror(errno)));
    }
    ::fcntl(master_, F_SETFD, FD_CLOEXEC);
    ::fcntl(slave_, F_SETFD, FD_CLOEXEC);
    path_ = name;
  }
  ~PtyLink() override {
    ::close(master_);
    ::close(slave_);
  }

  std::string describe() const override { return "pty " + path_; }
  std::string endpoint() const override { return path_; }
  std::string receiver_uri() const override { return "serial://" + path_; }
  bool wait_for_receiver(std::chrono::milliseconds) override { return true; }

  bool drain(std::chrono::milliseconds timeout) override {
    // Bytes still waiting on the slave side to be read by the receiver. The count can read 0
    // for a moment while the pty moves a large write into the slave's buffer, so it has to stay
    // 0 for a while before the link counts as drained.
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    auto empty_since = Clock::now();
    bool empty = false;
    for (;;) {
      int waiting = 0;
      if (::ioctl(slave_, TIOCINQ, &waiting) != 0) return true;
      const auto now = Clock::now();
      if (waiting != 0) {
        empty = false;
      } else if (!empty) {
        empty = true;
        empty_since = now;
      } else if (now - empty_since >= std::chrono::milliseconds(100)) {
        return true;
      }
      if (now >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  bool send(std::span<const uint8_t> bytes) override {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        count_dropped();
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int master_ = -1, slave_ = -1;
  std::string path_;
};

class FileLink final : public DeviceLink {
 public:
  explicit FileLink(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) {
      throw std::runtime_error(fmt::format(
          "file://{}: cannot create ({}); expected a writable path", path, std::strerror(errno)));
    }
  }
  ~FileLink() override { std::fclose(file_); }

  std::string describe() const override { return "file://" + path_; }
  std::string endpoint() const override { return path_; }
  std::string receiver_uri() const override { return "file://" + path_; }
  bool wait_for_receiver(std::chrono::milliseconds) override { return true; }

  bool send(std::span<const uint8_t> bytes) override {
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() || std::fflush(file_)) {
      count_dropped();
      return false;
    }
    return true;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceLink> make_pty_link() { return std::make_unique<PtyLink>(); }
std::unique_ptr<DeviceLink> make_file_link(const std::string& path) {
  return std::make_unique<FileLink>(path);
}

}  // namespace eit::acquisition::detail
