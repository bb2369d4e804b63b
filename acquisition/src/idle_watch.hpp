#pragma once
// The idle timeout of one TCP device connection (TcpLiveness::idle; 0: off), shared by the TCP
// client and server transports: how long a read may wait, and whether a read that reached its
// deadline did so because the device went quiet. No allocation except reason().
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "asio_loop.hpp"
#include "eit/acquisition/byte_transport.hpp"

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

// How a read of a connected stream under idle.read_until(deadline) ended: `result` is what read()
// returns (data, marked fresh on a new connection's first bytes; a timeout; stop); without it the
// connection is lost, `lost_reason` says why and `went_idle` whether the idle timeout closed it.
struct ConnectedRead {
  std::optional<TransportRead> result;
  bool went_idle = false;
  std::string lost_reason;
};

inline ConnectedRead settle_connected_read(const Completion& c, IdleWatch& idle, const IoLoop& loop,
                                           bool& fresh) {
  if (c.ok()) {
    idle.heard();
    const TransportRead r{TransportStatus::kData, c.bytes, fresh};
    fresh = false;
    return {r, false, {}};
  }
  if (c.ec == boost::asio::error::operation_aborted) {
    if (loop.stopped()) return {TransportRead{TransportStatus::kStopped}, false, {}};
    if (!idle.expired()) return {TransportRead{TransportStatus::kTimeout}, false, {}};
    return {std::nullopt, true, idle.reason()};
  }
  return {std::nullopt, false, c.ec.message()};
}

}  // namespace eit::acquisition::detail
