#pragma once
// PeerGuard: watches the TCP connections of one bound ZeroMQ socket (PUB or PUSH) and defends the
// publisher against its peers, which are unauthenticated unless CURVE is on.
//  - A peer that has sent more than its inbound byte budget (subscriptions, or anything, since a
//    PULL consumer sends nothing after the handshake) is disconnected and counted: libzmq keeps
//    every subscription a peer sends, so without this a flood of distinct subscriptions grows the
//    publisher's memory without bound. ZMQ_MAXMSGSIZE (set by the publisher) bounds each message.
//  - More than max_peers connections: the newest is refused (disconnected) and counted.
//  - A peer whose TCP send queue is full and not moving is "stalled"; frames published while any
//    peer is stalled are counted (once each, however many peers are stalled) (PUB drops per
//    subscriber inside libzmq and does not say so; this makes it visible). Healthy peers are
//    unaffected: PUB queues and drops per subscriber.
// Mechanism: a libzmq socket monitor (inproc PAIR) reports each accepted connection's fd;
// TCP_INFO on that fd gives bytes received, bytes acked and the unsent backlog. Disconnecting is
// shutdown(fd), after which libzmq closes the connection and drops its subscriptions.
// Caveat: an fd closed and reused between two polls could be mistaken for its predecessor; every
// poll reads the monitor's events first, which keeps that window to one poll interval.
//
// Threads: construct, poll() and drained() on the publisher's thread only; stats() from any
// thread. Allocation: the peer table is preallocated; monitor events (connect/disconnect only,
// never per frame) are received into small messages.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace eit::sinks {

struct PeerGuardOptions {
  size_t max_peers = 64;                  // simultaneous connections; more are refused
  uint64_t inbound_budget_bytes = 16384;  // what a peer may send in its first second
  uint64_t inbound_bytes_per_s = 256;     // ... plus this per second connected (heartbeats)
};

struct PeerGuardStats {
  uint64_t peers = 0;                 // connected now
  uint64_t stalled = 0;               // of those, with a full send queue that is not moving
  uint64_t accepted = 0;              // connections accepted in total
  uint64_t abusers = 0;               // disconnected for exceeding the inbound byte budget
  uint64_t refused = 0;               // disconnected for exceeding max_peers
  uint64_t frames_while_stalled = 0;  // frames published while at least one peer was stalled
  uint64_t handshakes_failed = 0;     // security handshakes failed (CURVE: refused peers)
};

class PeerGuard {
 public:
  // Call before socket.bind() so that no accept event is missed.
  PeerGuard(zmq::context_t& context, zmq::socket_t& socket, PeerGuardOptions options);
  ~PeerGuard();

  // Reads monitor events and checks every peer. frames_published: the publisher's running total.
  void poll(int64_t now_ns, uint64_t frames_published) noexcept;
  // True when every connected peer's kernel send queue is empty and acknowledged.
  bool drained() noexcept;
  PeerGuardStats stats() const noexcept;

 private:
  struct Peer {
    int fd = -1;
    int64_t since_ns = 0;
    uint64_t last_acked = 0;
    bool stalled = false;
  };
  void read_events(int64_t now_ns) noexcept;
  void add_peer(int fd, int64_t now_ns) noexcept;
  void remove_peer(int fd) noexcept;

  PeerGuardOptions options_;
  zmq::socket_t monitor_;
  std::vector<Peer> peers_;  // capacity max_peers, reserved up front
  uint64_t last_frames_ = 0;
  std::atomic<uint64_t> n_peers_{0}, n_stalled_{0}, accepted_{0}, abusers_{0}, refused_{0},
      frames_while_stalled_{0};
  std::atomic<uint64_t> handshakes_failed_{0};
};

}  // namespace eit::sinks
