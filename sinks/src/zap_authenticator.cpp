// ZAP handler with a CURVE allow list (see zap_authenticator.hpp).
#include "eit/sinks/zap_authenticator.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <zmq.h>
#include <zmq_addon.hpp>

namespace eit::sinks {

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context,
                                   const std::vector<std::string>& allowed_z85)
    : socket_(context, zmq::socket_type::rep) {
  for (const auto& key : allowed_z85) {
    uint8_t bytes[32];
    if (key.size() != 40 || !zmq_z85_decode(bytes, key.c_str()))
      throw std::runtime_error(fmt::format(
          "ZAP allow list: '{}' is not a CURVE public key; expected 40 z85 characters", key));
    allowed_.emplace(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  socket_.set(zmq::sockopt::linger, 0);
  try {
    socket_.bind("inproc://zeromq.zap.01");
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(fmt::format(
        "ZAP handler: cannot bind inproc://zeromq.zap.01 ({}); expected one handler per "
        "ZeroMQ context",
        e.what()));
  }
  thread_ = std::thread([this] { run(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

// RFC 27 request: version, request id, domain, address, identity, mechanism, credentials…
// For CURVE the one credential is the client's 32-byte public key.
bool ZapAuthenticator::admit(const std::vector<zmq::message_t>& r) const {
  if (r.size() < 7 || r[0].to_string_view() != "1.0") return false;
  if (r[5].to_string_view() != "CURVE") return false;
  return r[6].size() == 32 && allowed_.contains(r[6].to_string());
}

void ZapAuthenticator::run() {
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  std::vector<zmq::message_t> request;
  while (!stop_.load(std::memory_order_relaxed)) {
    try {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(50)) == 0) continue;
      request.clear();
      if (!zmq::recv_multipart(socket_, std::back_inserter(request), zmq::recv_flags::dontwait))
        continue;
      const bool ok = admit(request);
      (ok ? accepted_ : refused_).fetch_add(1, std::memory_order_relaxed);
      const std::string id = request.size() > 1 ? request[1].to_string() : std::string();
      std::vector<zmq::const_buffer> reply = {
          zmq::str_buffer("1.0"),
          zmq::buffer(id),
          ok ? zmq::str_buffer("200") : zmq::str_buffer("400"),
          ok ? zmq::str_buffer("OK") : zmq::str_buffer("key not on the allow list"),
          zmq::str_buffer(""),
          zmq::str_buffer("")};
      zmq::send_multipart(socket_, reply);
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      // EINTR and the like: keep serving.
    }
  }
}

}  // namespace eit::sinks
