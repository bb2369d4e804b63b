#pragma once
// A consumer's link to a publisher, read from its ZeroMQ socket's monitor events: "connected"
// only once the ZeroMQ handshake succeeded (a TCP connection alone may end in a CURVE refusal,
// or lead to a server that is no ZeroMQ publisher), and otherwise the reason in words: the
// publisher refused this client's CURVE key, a CURVE/plain mismatch, a wrong server key, a
// server that gave no handshake, nothing listening. Shared by `eitstream view` and `listen`.
// Single-threaded: the thread that polls the socket reads the events.
#include <cstdint>
#include <string>

#include <zmq.hpp>

namespace eit::sinks {

enum class LinkState { kConnecting, kConnected, kReconnecting };
const char* to_string(LinkState s);

class ZmqLinkMonitor {
 public:
  // Monitors `socket` (call before it connects) through a PAIR socket on `context`.
  ZmqLinkMonitor(zmq::context_t& context, zmq::socket_t& socket);

  // For zmq::poll beside the data socket: readable while an event waits.
  zmq::socket_t& events() noexcept { return monitor_; }

  // Reads one waiting event, if any; true when the state or the error changed.
  bool on_event();

  LinkState state() const noexcept { return state_; }
  const std::string& error() const noexcept { return error_; }  // "" while none
  uint64_t reconnects() const noexcept { return reconnects_; }  // after a handshake succeeded

 private:
  void set(LinkState state, std::string error);

  zmq::socket_t monitor_;
  LinkState state_ = LinkState::kConnecting;
  std::string error_;
  uint64_t reconnects_ = 0;
  // A TCP connection since the last retry, and a handshake that failed on it (its reason is then
  // the link's error, not what the disconnection after it would say).
  bool tcp_since_retry_ = false, handshake_failed_ = false;
};

// The options a monitored consumer socket wants: reconnect within 100 ms-1 s of a publisher's
// restart (libzmq: 100 ms, then no back-off limit), and a server that takes the connection but
// never answers ZeroMQ's greeting reported after 3 s (libzmq's default: 30 s).
void set_consumer_link_options(zmq::socket_t& socket);

}  // namespace eit::sinks
