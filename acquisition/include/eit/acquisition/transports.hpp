#pragma once
// The ByteTransports eitstream ships (Boost.Asio underneath, hidden here). Each factory checks
// its arguments and does the set-up that can fail for good (resolving a host name, binding a
// port, opening a serial device, opening a file) and throws std::runtime_error naming the
// address or path, what went wrong and what was expected. Connection problems that can heal
// (refused, reset, a peer that goes away) are retried inside read() with ReconnectPolicy backoff
// and reported through ByteTransport::stats().
#include <cstdint>
#include <memory>
#include <string>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/acquisition/tcp_liveness.hpp"

namespace eit::acquisition {

// Connects to a device that listens (tcp://host:port); reconnects after a loss, and after
// liveness.idle of silence, with backoff (reset once bytes flow again).
std::unique_ptr<ByteTransport> make_tcp_client_transport(const std::string& host, uint16_t port,
                                                         ReconnectPolicy reconnect = {},
                                                         TcpLiveness liveness = {});

// Listens on host:port (port 0: an ephemeral port, see endpoint()) and accepts one device
// connection at a time; after it closes, or has sent nothing for liveness.idle, accepts the next
// (so a newer connection takes over from a silent one).
std::unique_ptr<ByteTransport> make_tcp_server_transport(const std::string& host, uint16_t port,
                                                         TcpLiveness liveness = {});

// Receives datagrams on host:port (port 0: ephemeral). Each read is one datagram.
std::unique_ptr<ByteTransport> make_udp_transport(const std::string& host, uint16_t port);

struct SerialOptions {
  std::string path;  // /dev/ttyUSB0, a pty slave, …
  unsigned baud = 115200;
  unsigned data_bits = 8;      // 5..8
  char parity = 'n';           // 'n' none, 'e' even, 'o' odd
  unsigned stop_bits = 1;      // 1 or 2
  bool hardware_flow = false;  // RTS/CTS
  ReconnectPolicy reconnect;   // reopening after the device goes away (unplugged, pty closed)
};
std::unique_ptr<ByteTransport> make_serial_transport(const SerialOptions& options);

// Reads a file sequentially (a capture of a byte stream); at its end starts over when `loop`,
// else reports kEnd.
std::unique_ptr<ByteTransport> make_file_transport(const std::string& path, bool loop = false);

}  // namespace eit::acquisition
