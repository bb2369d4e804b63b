#pragma once
// ByteTransport: where a StreamSource's bytes come from (a TCP connection it makes or accepts,
// UDP datagrams, a serial port). A transport hides connecting, accepting and reconnecting with
// backoff; it reports each new connection so the decoder can drop a partial frame, and counts
// reconnections with the reason in words.
//
// Threading: one thread calls read(); stop(), stats() and endpoint() may be called from any
// thread, and stop() makes a blocked read() return kStopped promptly. read() does not allocate
// once connected (Boost.Asio recycles its per-operation memory); it may block until `deadline`.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>

namespace eit::acquisition {

// Set-up found the device or its link absent (a host name that does not resolve, a serial device
// that is not there), as opposed to a URI or option that is wrong (std::invalid_argument): the
// command's configuration may be right, and trying again later may work.
class SourceUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TransportStatus {
  kData,     // `size` bytes were read (for datagram transports: one whole datagram)
  kTimeout,  // nothing before the deadline (perhaps still connecting); call again
  kStopped,  // stop() was called
  kEnd,      // the bytes ended for good (end of a file that does not loop)
};

struct TransportRead {
  TransportStatus status = TransportStatus::kTimeout;
  size_t size = 0;
  bool new_connection = false;  // first bytes of a new connection: drop any partial frame
  // The connection was lost since the last read returned: a frame it broke off is lost now (set
  // on the first read after the loss, whatever it returns, so a device that never comes back is
  // still counted).
  bool connection_lost = false;
};

struct TransportStats {
  uint64_t reconnects = 0;  // connections made or accepted after the first one
  uint64_t datagrams_truncated = 0;
  uint64_t idle_timeouts = 0;  // connections closed because the peer sent nothing for too long
  std::string last_error;      // most recent problem, with what was done about it
};

// How a transport that lost its peer tries again: waits initial, then ×factor up to max. A TCP
// connect that has not completed after connect_timeout is abandoned and counts as failed; it
// outlasts read deadlines, so that a device a long round trip away can still be reached.
struct ReconnectPolicy {
  std::chrono::milliseconds initial{50};
  std::chrono::milliseconds max{2000};
  double factor = 2.0;
  std::chrono::milliseconds connect_timeout{3000};
};

class ByteTransport {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~ByteTransport() = default;
  // "tcp://127.0.0.1:5000 (client)" and the like.
  virtual std::string describe() const = 0;
  // The local address a listening transport is bound to ("127.0.0.1:40211"), so a peer (or a
  // test) can find an ephemeral port; the remote address for a client; the path for serial.
  virtual std::string endpoint() const = 0;
  // True when every kData read is exactly one datagram (frames never span two reads).
  virtual bool datagrams() const noexcept { return false; }
  virtual TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) = 0;
  virtual void stop() noexcept = 0;

  TransportStats stats() const {
    TransportStats s;
    s.reconnects = reconnects_.load(std::memory_order_relaxed);
    s.datagrams_truncated = truncated_.load(std::memory_order_relaxed);
    s.idle_timeouts = idle_timeouts_.load(std::memory_order_relaxed);
    std::lock_guard lock(error_mutex_);  // only ever held to copy or replace the string
    s.last_error = last_error_;
    return s;
  }

 protected:
  // Called on connection events, never per frame.
  void note_error(std::string message) {
    std::lock_guard lock(error_mutex_);
    last_error_ = std::move(message);
  }
  void count_reconnect() noexcept {
    reconnects_.store(reconnects_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void count_idle_timeout() noexcept {
    idle_timeouts_.store(idle_timeouts_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  }
  void count_truncated() noexcept {
    truncated_.store(truncated_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> reconnects_{0}, truncated_{0}, idle_timeouts_{0};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace eit::acquisition
