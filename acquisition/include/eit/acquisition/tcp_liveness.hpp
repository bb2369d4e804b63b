#pragma once
// TcpLiveness: how the TCP transports (tcp:// client, tcp-listen:// server) notice a peer that
// stops sending. Two mechanisms:
//   - an idle timeout: no byte for `idle` closes the connection (the server then accepts the next
//     one, so a newer connection waiting in the backlog takes over from a silent one; the client
//     reconnects with backoff). A device streams frames continuously, so a few frame periods of
//     silence means it is gone, stuck, or not a device at all.
//   - TCP keepalive (SO_KEEPALIVE with short probe times) for a peer whose host vanished without
//     closing the connection, when the idle timeout is off.
// Plain data and one set-up function; no allocation, any thread.
#include <chrono>

namespace eit::acquisition {

struct TcpLiveness {
  std::chrono::milliseconds idle{2000};  // no byte for this long closes the connection; 0: never
  bool keepalive = true;                 // probes after keepalive_idle_s of silence
  int keepalive_idle_s = 5;              // TCP_KEEPIDLE
  int keepalive_interval_s = 1;          // TCP_KEEPINTVL
  int keepalive_count = 3;               // TCP_KEEPCNT: unanswered probes before the reset
};

// The default idle timeout for a source of `rate_hz` frames per second: five frame periods, at
// least 250 ms (scheduling jitter); 2 s when the rate is unknown (rate_hz <= 0).
std::chrono::milliseconds default_idle_timeout(double rate_hz) noexcept;

// Applies liveness.keepalive and its probe times to a connected TCP socket. Returns false when
// the kernel refused an option (the connection still works, only without keepalive).
bool apply_tcp_keepalive(int fd, const TcpLiveness& liveness) noexcept;

}  // namespace eit::acquisition
