// TcpLiveness: the default idle timeout and the keepalive socket options (Linux names).
#include "eit/acquisition/tcp_liveness.hpp"

#include <algorithm>
#include <cmath>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace eit::acquisition {

std::chrono::milliseconds default_idle_timeout(double rate_hz) noexcept {
  if (!(rate_hz > 0) || !std::isfinite(rate_hz)) return std::chrono::milliseconds(2000);
  const double ms = std::max(250.0, 5.0 * 1000.0 / rate_hz);
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(ms, 3.6e6)));
}

bool apply_tcp_keepalive(int fd, const TcpLiveness& l) noexcept {
  const int on = l.keepalive ? 1 : 0;
  bool ok = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) == 0;
  if (!l.keepalive) return ok;
  const int idle = std::max(1, l.keepalive_idle_s);
  const int interval = std::max(1, l.keepalive_interval_s);
  const int count = std::max(1, l.keepalive_count);
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == 0;
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval)) == 0;
  ok &= setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count)) == 0;
  return ok;
}

}  // namespace eit::acquisition
