#pragma once
// A loopback port nothing uses right now (bound to port 0, read back, released), for a server a
// test starts later or an address where nothing must listen.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace eit::test {

// `type`: SOCK_STREAM (TCP) or SOCK_DGRAM (UDP).
inline int unused_loopback_port(int type = SOCK_STREAM) {
  const int fd = socket(AF_INET, type, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace eit::test
