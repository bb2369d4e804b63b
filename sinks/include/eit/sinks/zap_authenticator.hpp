#pragma once
// ZapAuthenticator: a ZeroMQ authentication (ZAP, RFC 27) handler that admits CURVE clients
// whose public key is on an allow list and refuses every other connection (any other mechanism,
// any other key). libzmq asks it during each handshake on every socket of `context` that has a
// security mechanism; a refused peer never completes the handshake and gets nothing.
//
// One per context (it binds inproc://zeromq.zap.01); construct it before the sockets it guards
// bind. Threads: one handler thread (constructor to destructor); accepted()/refused() from any
// thread. Set-up errors (the ZAP endpoint already bound) throw std::runtime_error.
#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace eit::sinks {

class ZapAuthenticator {
 public:
  // `allowed_z85`: client public keys, z85 (40 characters each).
  ZapAuthenticator(zmq::context_t& context, const std::vector<std::string>& allowed_z85);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  uint64_t accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  size_t allowed_keys() const noexcept { return allowed_.size(); }

 private:
  void run();
  bool admit(const std::vector<zmq::message_t>& request) const;

  zmq::socket_t socket_;
  std::set<std::string> allowed_;  // 32-byte binary keys
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> accepted_{0}, refused_{0};
  std::thread thread_;
};

}  // namespace eit::sinks
