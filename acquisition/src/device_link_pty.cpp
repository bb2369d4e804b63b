// Device link over a pseudo-terminal: openpty() gives a master (written here) and a slave that a
// receiver opens like a serial port. Both ends are set raw (no echo, no CR/LF translation) so
// the bytes arrive unchanged; the settings stay with the pty when the slave is reopened.
//
// Linux takes writes to the master whether or not anyone has the slave open: they wait in the
// slave's input buffer (some 20 KiB) and a receiver that opens the port later reads a stale
// burst. So the slave is closed here once set up, and the master's poll() reports POLLHUP
// exactly while no receiver has it open: wait_for_receiver() waits for POLLHUP to clear, send()
// drops (and counts) frames while it is set, and when a receiver goes, what it left unread is
// flushed so the next one starts with fresh frames. The master is non-blocking; a write waits
// in poll() for room, so a receiver that closes while the buffer is full does not hang send().
// The sizes of the latest messages written tell how many messages the bytes still unread in the
// slave's read buffer belong to (messages_unread()); bytes the pty holds before that buffer are
// not counted by the kernel.
#include <poll.h>

#include <algorithm>
#include <array>
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
    int slave = -1;
    if (openpty(&master_, &slave, name, &raw, nullptr) != 0) {
      throw std::runtime_error(fmt::format(
          "pty: openpty failed ({}); expected /dev/ptmx to be usable", std::strerror(errno)));
    }
    ::close(slave);  // from now on POLLHUP on the master means: no receiver
    ::fcntl(master_, F_SETFD, FD_CLOEXEC);
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
    path_ = name;
  }
  ~PtyLink() override { ::close(master_); }

  std::string describe() const override { return "pty " + path_; }
  std::string endpoint() const override { return path_; }
  std::string receiver_uri() const override { return "serial://" + path_; }

  bool wait_for_receiver(std::chrono::milliseconds timeout) override {
    // The kernel gives no event for "the slave was opened": look every few milliseconds.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!receiver_present()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    had_receiver_ = true;
    return true;
  }

  bool send(std::span<const uint8_t> bytes) override {
    if (!receiver_present()) return drop_for_no_receiver();
    had_receiver_ = true;
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EAGAIN) {  // the receiver is slow: wait for room, or for it to go
        pollfd p{master_, POLLOUT, 0};
        const int ready = ::poll(&p, 1, -1);
        if (ready > 0 && !(p.revents & POLLHUP)) continue;
        if (ready > 0) {
          note_written(done);
          return drop_for_no_receiver();
        }
      }
      // A signal (the command is asked to stop) or a write error: this message is given up.
      note_written(done);
      count_dropped();
      return false;
    }
    note_written(done);
    return true;
  }

  uint64_t messages_unread() const override {
    int left = bytes_unread();
    uint64_t messages = 0;
    for (size_t i = 0; i < written_count_ && left > 0; ++i, ++messages)
      left -= static_cast<int>(written_[(written_next_ + kWritten - 1 - i) % kWritten]);
    return messages;
  }

 protected:
  bool wait_drained(std::chrono::milliseconds timeout,
                    const std::function<bool()>& give_up) override {
    // Bytes still waiting on the slave side to be read by the receiver, counted through a slave
    // descriptor of our own (TIOCGPTPEER) opened only for the look, so POLLHUP keeps its meaning.
    // The count can read 0 for a moment while the pty moves a large write into the slave's
    // buffer, so it has to stay 0 for a while before the link counts as drained.
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    auto empty_since = Clock::now();
    bool empty = false;
    for (;;) {
      const bool present = receiver_present();
      const int waiting = bytes_unread();
      if (waiting < 0) return true;
      if (!present) return waiting == 0;  // nobody left to read them
      const auto now = Clock::now();
      if (waiting != 0) {
        empty = false;
      } else if (!empty) {
        empty = true;
        empty_since = now;
      } else if (now - empty_since >= std::chrono::milliseconds(100)) {
        return true;
      }
      if (now >= deadline || (give_up && give_up())) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

 private:
  bool receiver_present() const noexcept {
    pollfd p{master_, POLLOUT, 0};
    return ::poll(&p, 1, 0) >= 0 && !(p.revents & POLLHUP);
  }

  // Bytes of one message that went into the slave's buffer (all of it, or the part written before
  // a signal or the receiver's leaving).
  void note_written(size_t bytes) noexcept {
    if (bytes == 0) return;
    written_[written_next_] = bytes;
    written_next_ = (written_next_ + 1) % kWritten;
    written_count_ = std::min(written_count_ + 1, kWritten);
  }

  // A receiver that has closed the slave left bytes in its buffer (the rest of a frame, frames
  // it did not read): flushed once, so the next receiver does not read them as new.
  bool drop_for_no_receiver() noexcept {
    if (had_receiver_) {
      had_receiver_ = false;
      const int peer = ::ioctl(master_, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
      if (peer >= 0) {
        ::tcflush(peer, TCIFLUSH);
        ::close(peer);
      }
    }
    count_dropped();
    return false;
  }

  // Bytes in the slave's input buffer; -1 when they cannot be counted.
  int bytes_unread() const noexcept {
    const int peer = ::ioctl(master_, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (peer < 0) return -1;
    int waiting = 0;
    const int rc = ::ioctl(peer, TIOCINQ, &waiting);
    ::close(peer);
    return rc == 0 ? waiting : -1;
  }

  // The read buffer that bytes_unread() counts holds 4 KiB at most: as many sizes cover it even
  // for 1-byte messages.
  static constexpr size_t kWritten = 4096;
  int master_ = -1;
  bool had_receiver_ = false;
  std::string path_;
  std::array<size_t, kWritten> written_{};  // a ring of message sizes, the newest before next
  size_t written_next_ = 0, written_count_ = 0;
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
