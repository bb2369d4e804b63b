// A consumer's link state from ZeroMQ monitor events (zmq_link_monitor.hpp).
#include "eit/sinks/zmq_link_monitor.hpp"

#include <atomic>
#include <cstring>

#include <fmt/format.h>

namespace eit::sinks {
namespace {

// A ZMTP protocol error (ZMQ_PROTOCOL_ERROR_*) in words, with what usually causes it.
std::string handshake_protocol_error(uint32_t code) {
  if (code == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    return "security mismatch: the publisher uses CURVE and this client does not, or the reverse "
           "(--curve-server-key and --curve-secret must match the publisher's --curve-secret)";
  if (code == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC || code == ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE)
    return "CURVE handshake failed: --curve-server-key is not the publisher's public key";
  if (code >= ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED && code < ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED)
    return fmt::format("the publisher's authentication failed (ZAP error {:#x})", code);
  return fmt::format("not a ZeroMQ publisher, or an incompatible one (ZMTP error {:#x})", code);
}

}  // namespace

const char* to_string(LinkState s) {
  switch (s) {
    case LinkState::kConnected:
      return "connected";
    case LinkState::kReconnecting:
      return "reconnecting";
    default:
      return "connecting";
  }
}

ZmqLinkMonitor::ZmqLinkMonitor(zmq::context_t& context, zmq::socket_t& socket) {
  static std::atomic<uint64_t> next{0};
  const std::string inproc = fmt::format("inproc://eit-link-monitor-{}", next.fetch_add(1));
  if (zmq_socket_monitor(socket.handle(), inproc.c_str(), ZMQ_EVENT_ALL) != 0) throw zmq::error_t();
  monitor_ = zmq::socket_t(context, zmq::socket_type::pair);
  monitor_.connect(inproc);
}

void ZmqLinkMonitor::set(LinkState state, std::string error) {
  state_ = state;
  error_ = std::move(error);
}

bool ZmqLinkMonitor::on_event() {
  zmq::message_t event, address;
  if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return false;
  if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
  if (event.size() < 6) return false;
  uint16_t id;
  uint32_t value;
  std::memcpy(&id, event.data(), sizeof id);
  std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof id, sizeof value);
  const LinkState was = state_;
  const std::string had = error_;
  switch (id) {
    case ZMQ_EVENT_CONNECTED:
      tcp_since_retry_ = true;
      break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      handshake_failed_ = false;
      set(LinkState::kConnected, {});  // a past problem is not the link's state any more
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      handshake_failed_ = true;
      set(LinkState::kReconnecting,
          fmt::format("the publisher refused this client's CURVE key (status {}): give "
                      "--curve-secret a key in the publisher's --curve-allow",
                      value));
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      handshake_failed_ = true;
      set(LinkState::kReconnecting, handshake_protocol_error(value));
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      handshake_failed_ = true;
      set(LinkState::kReconnecting,
          fmt::format("ZeroMQ handshake failed ({}): a wrong --curve-server-key, or not a ZeroMQ "
                      "publisher",
                      zmq_strerror(static_cast<int>(value))));
      break;
    case ZMQ_EVENT_DISCONNECTED:
      // After a failed handshake the disconnection is that failure's: keep its reason.
      if (state_ == LinkState::kConnected) {
        ++reconnects_;
        set(LinkState::kReconnecting, "publisher disconnected; reconnecting");
      } else if (!handshake_failed_) {
        set(LinkState::kReconnecting,
            "the server there took the connection but gave no ZeroMQ handshake (not a ZeroMQ "
            "publisher?); retrying");
      }
      break;
    case ZMQ_EVENT_CONNECT_RETRIED:
      // A retry with no TCP connection since the last one: nothing listens there (yet).
      if (state_ != LinkState::kConnected && !tcp_since_retry_) {
        handshake_failed_ = false;
        set(LinkState::kReconnecting, "no publisher accepts connections there (yet); retrying");
      }
      tcp_since_retry_ = false;
      break;
    default:
      break;
  }
  return state_ != was || error_ != had;
}

void set_consumer_link_options(zmq::socket_t& socket) {
  socket.set(zmq::sockopt::reconnect_ivl, 100);
  socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
  socket.set(zmq::sockopt::handshake_ivl, 3000);
}

}  // namespace eit::sinks
