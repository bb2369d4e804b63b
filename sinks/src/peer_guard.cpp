#include "peer_guard.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/tcp.h>

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::sinks {
namespace {

void bump(std::atomic<uint64_t>& c, uint64_t by = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

bool tcp_info_of(int fd, tcp_info& info) noexcept {
  socklen_t len = sizeof info;
  std::memset(&info, 0, sizeof info);
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0;
}

// A peer whose security handshake failed: wrong mechanism (plaintext against CURVE), refused by
// the ZAP handler, or a malformed handshake.
constexpr int kHandshakeFailed = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

}  // namespace

PeerGuard::PeerGuard(zmq::context_t& context, zmq::socket_t& socket, PeerGuardOptions options)
    : options_(options) {
  const std::string endpoint = fmt::format("inproc://eit-peer-guard-{}", fmt::ptr(this));
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(),
                         ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED |
                             kHandshakeFailed) != 0)
    throw std::runtime_error(
        fmt::format("cannot monitor the publisher's socket: {}", zmq_strerror(zmq_errno())));
  monitor_ = zmq::socket_t(context, zmq::socket_type::pair);
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(endpoint);
  peers_.reserve(options_.max_peers);
}

PeerGuard::~PeerGuard() = default;

void PeerGuard::add_peer(int fd, int64_t now_ns) noexcept {
  bump(accepted_);
  if (peers_.size() >= options_.max_peers) {
    bump(refused_);
    shutdown(fd, SHUT_RDWR);
    return;
  }
  peers_.push_back({fd, now_ns, 0, false});  // within the reserved capacity: no allocation
}

void PeerGuard::remove_peer(int fd) noexcept {
  for (size_t i = 0; i < peers_.size(); ++i) {
    if (peers_[i].fd != fd) continue;
    peers_[i] = peers_.back();
    peers_.pop_back();
    return;
  }
}

void PeerGuard::read_events(int64_t now_ns) noexcept {
  for (int n = 0; n < 256; ++n) {
    zmq::message_t event, address;
    try {
      if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
      if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    } catch (const zmq::error_t&) {
      return;
    }
    if (event.size() < 6) continue;
    uint16_t id;
    uint32_t value;
    std::memcpy(&id, event.data(), 2);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
    const int fd = static_cast<int>(value);
    if (id == ZMQ_EVENT_ACCEPTED)
      add_peer(fd, now_ns);
    else if (id == ZMQ_EVENT_DISCONNECTED || id == ZMQ_EVENT_CLOSED)
      remove_peer(fd);
    else if (id & kHandshakeFailed)
      bump(handshakes_failed_);
  }
}

void PeerGuard::poll(int64_t now_ns, uint64_t frames_published) noexcept {
  read_events(now_ns);
  const uint64_t new_frames = frames_published - last_frames_;
  last_frames_ = frames_published;
  uint64_t stalled = 0;
  for (size_t i = 0; i < peers_.size();) {
    Peer& p = peers_[i];
    tcp_info info;
    if (!tcp_info_of(p.fd, info)) {
      ++i;
      continue;
    }
    const double age_s = static_cast<double>(now_ns - p.since_ns) / 1e9;
    const uint64_t budget =
        options_.inbound_budget_bytes +
        static_cast<uint64_t>(age_s * static_cast<double>(options_.inbound_bytes_per_s));
    if (info.tcpi_bytes_received > budget) {
      bump(abusers_);
      shutdown(p.fd, SHUT_RDWR);
      p = peers_.back();
      peers_.pop_back();
      continue;
    }
    p.stalled = info.tcpi_bytes_acked == p.last_acked && info.tcpi_notsent_bytes > 0;
    p.last_acked = info.tcpi_bytes_acked;
    if (p.stalled) ++stalled;
    ++i;
  }
  // Frames, not peer-frames: three stalled peers over 100 frames are 100, so the count stays a
  // part of what was published.
  if (stalled > 0) bump(frames_while_stalled_, new_frames);
  n_peers_.store(peers_.size(), std::memory_order_relaxed);
  n_stalled_.store(stalled, std::memory_order_relaxed);
}

bool PeerGuard::drained() noexcept {
  for (const Peer& p : peers_) {
    tcp_info info;
    if (!tcp_info_of(p.fd, info)) continue;
    if (info.tcpi_notsent_bytes > 0 || info.tcpi_unacked > 0) return false;
  }
  return true;
}

PeerGuardStats PeerGuard::stats() const noexcept {
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {r(n_peers_), r(n_stalled_), r(accepted_),
          r(abusers_), r(refused_),   r(frames_while_stalled_), r(handshakes_failed_)};
}

}  // namespace eit::sinks
