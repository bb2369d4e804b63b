#pragma once
// What the reconnecting transports and device links share: the backoff that grows after each
// failed attempt, and the wait on an asio timer until the next attempt is due.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include <boost/asio/steady_timer.hpp>

#include "asio_loop.hpp"
#include "eit/acquisition/byte_transport.hpp"

namespace eit::acquisition::detail {

// The wait after one more failed attempt: policy.factor times `backoff`, at most policy.max.
inline std::chrono::milliseconds grown_backoff(std::chrono::milliseconds backoff,
                                               const ReconnectPolicy& policy) {
  return std::min(policy.max, std::chrono::milliseconds(static_cast<int64_t>(
                                  static_cast<double>(backoff.count()) * policy.factor)));
}

// Waits on `timer` (through `completion`: no allocation) until `next_attempt` is due. nullopt: an
// attempt is due now; else what read() returns: kTimeout at the deadline, kStopped after stop().
inline std::optional<TransportStatus> wait_for_attempt(IoLoop& loop,
                                                       boost::asio::steady_timer& timer,
                                                       Completion& completion,
                                                       IoLoop::Clock::time_point next_attempt,
                                                       IoLoop::Clock::time_point deadline) {
  for (;;) {
    if (loop.stopped()) return TransportStatus::kStopped;
    const auto now = IoLoop::Clock::now();
    if (now >= deadline) return TransportStatus::kTimeout;
    if (now >= next_attempt) return std::nullopt;
    timer.expires_at(std::min(next_attempt, deadline));
    timer.async_wait(completion.handler());
    loop.run(completion, deadline + std::chrono::seconds(1), [&timer] { timer.cancel(); });
  }
}

// After a failed accept (out of descriptors, say) the listen socket stays readable, so trying
// again at once would spin a core until a descriptor frees up: wait this long first. (The live
// view's server, which does not link this module, keeps its own: ViewServer::Impl.)
inline constexpr std::chrono::milliseconds kAcceptRetryPause{100};

// The pause after a failed accept; nullopt: try again now, else what read() returns.
inline std::optional<TransportStatus> pause_after_failed_accept(
    IoLoop& loop, boost::asio::steady_timer& timer, Completion& completion,
    IoLoop::Clock::time_point deadline) {
  return wait_for_attempt(loop, timer, completion, IoLoop::Clock::now() + kAcceptRetryPause,
                          deadline);
}

}  // namespace eit::acquisition::detail
