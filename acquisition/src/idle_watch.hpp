#pragma once
// The idle timeout of one TCP device connection (TcpLiveness::idle; 0: off), shared by the TCP
// client and server transports: how long a read may wait, and whether a read that reached its
// deadline did so because the device went quiet. No allocation except reason().
#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>

namespace eit::acquisition::detail {

class IdleWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit IdleWatch(std::chrono::milliseconds idle) noexcept : idle_(idle) {}
  // Bytes arrived, or the connection is new: the quiet time starts again.
  void heard() noexcept { last_ = Clock::now(); }
  // When a read must end: the caller's deadline, or earlier when the device would be idle first.
  Clock::time_point read_until(Clock::time_point deadline) const noexcept {
    return on() ? std::min(deadline, last_ + idle_) : deadline;
  }
  // The device has been quiet for the whole idle timeout.
  bool expired() const noexcept { return on() && Clock::now() >= last_ + idle_; }
  // Why the connection was dropped, once expired().
  std::string reason() const {
    return fmt::format("no bytes for {} ms, idle timeout", idle_.count());
  }

 private:
  bool on() const noexcept { return idle_.count() > 0; }

  std::chrono::milliseconds idle_;
  Clock::time_point last_{};
};

}  // namespace eit::acquisition::detail
