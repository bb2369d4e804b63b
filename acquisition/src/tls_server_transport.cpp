// TLS server transport with client certificates (see tls_transport.hpp).
#include <optional>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include "asio_loop.hpp"
#include "eit/acquisition/tcp_liveness.hpp"
#include "eit/acquisition/tls_transport.hpp"
#include "idle_watch.hpp"
#include "reconnect_wait.hpp"
#include "tls_context.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

class TlsServer final : public TlsServerTransport {
 public:
  TlsServer(const std::string& host, uint16_t port, const TlsFiles& files, TcpLiveness liveness,
            std::chrono::milliseconds handshake_timeout)
      : liveness_(liveness), handshake_timeout_(handshake_timeout) {
    const std::string uri = fmt::format("tls-listen://{}:{}", host, port);
    detail::configure_tls_context(ssl_, uri, files, detail::TlsRole::kServer, true);
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec)
      throw std::runtime_error(fmt::format(
          "{}: '{}' is not an IP address ({}); expected e.g. 127.0.0.1", uri, host, ec.message()));
    const tcp::endpoint where(address, port);
    acceptor_.open(where.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(where, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      throw std::runtime_error(
          fmt::format("{}: cannot listen ({}); expected a free local port", uri, ec.message()));
    const auto bound = acceptor_.local_endpoint();
    endpoint_ = fmt::format("{}:{}", bound.address().to_string(), bound.port());
  }

  std::string describe() const override { return "tls-listen://" + endpoint_ + " (server)"; }
  std::string endpoint() const override { return endpoint_; }
  void stop() noexcept override { loop_.stop(); }
  uint64_t refused() const noexcept override { return refused_.load(std::memory_order_relaxed); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return {TransportStatus::kStopped};
      if (!connected_) {
        if (!connect(deadline)) {
          if (loop_.stopped()) return {TransportStatus::kStopped};
          if (Clock::now() >= deadline) return {TransportStatus::kTimeout};
          if (accept_failed_) {
            if (const auto status =
                    detail::pause_after_failed_accept(loop_, retry_timer_, completion_, deadline))
              return {*status};
          }
          continue;
        }
      }
      stream_->async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, idle_.read_until(deadline), [this] {
        boost::system::error_code ignored;
        stream_->next_layer().cancel(ignored);
      });
      auto read = detail::settle_connected_read(completion_, idle_, loop_, fresh_);
      if (read.result) return *read.result;
      if (read.went_idle) count_idle_timeout();
      lost_reason_ = std::move(read.lost_reason);
      note_error(fmt::format("tls-listen://{}: device connection closed ({}); waiting for the next",
                             endpoint_, lost_reason_));
      close();
    }
  }

 private:
  // Accepts one connection and completes its TLS handshake; false on timeout, stop or refusal.
  // The handshake is bounded by handshake_timeout_, not by this read's deadline: one that is not
  // done by the deadline stays in flight and the next read goes on with it, so a peer that
  // connects and says nothing cannot hold a read for seconds.
  bool connect(Clock::time_point deadline) {
    if (!handshaking_ && !accept(deadline)) return false;
    const auto cancel = [this] {
      boost::system::error_code e;
      stream_->next_layer().cancel(e);
    };
    if (!loop_.run_part(completion_, std::min(deadline, handshake_until_), cancel)) {
      if (Clock::now() < handshake_until_) return false;  // this read's deadline came first
      loop_.finish(completion_, cancel);                  // the handshake's own came first
    }
    handshaking_ = false;
    if (loop_.stopped()) return false;
    if (!completion_.ok()) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      note_error(
          fmt::format("tls-listen://{}: refused {} ({}); {} refused in all (expected a client "
                      "certificate signed by the ca= file)",
                      endpoint_, peer_,
                      detail::tls_failure(completion_.ec, stream_->native_handle()), refused()));
      close();
      return false;
    }
    if (ever_connected_) {
      count_reconnect();
      note_error(
          fmt::format("tls-listen://{}: accepted a new device after the previous one "
                      "closed ({})",
                      endpoint_, lost_reason_));
    }
    idle_.heard();
    ever_connected_ = connected_ = fresh_ = true;
    return true;
  }

  // Accepts one TCP connection and starts its handshake; false on timeout, stop or failure.
  bool accept(Clock::time_point deadline) {
    stream_.emplace(loop_.io(), ssl_);
    acceptor_.async_accept(stream_->next_layer(), completion_.handler());
    loop_.run(completion_, deadline, [this] {
      boost::system::error_code ignored;
      acceptor_.cancel(ignored);
    });
    accept_failed_ = !completion_.ok() && completion_.ec != asio::error::operation_aborted;
    if (!completion_.ok()) {
      if (accept_failed_)
        note_error(fmt::format("tls-listen://{}: accept failed ({})", endpoint_,
                               completion_.ec.message()));
      stream_.reset();
      return false;
    }
    boost::system::error_code ignored;
    stream_->next_layer().set_option(tcp::no_delay(true), ignored);
    apply_tcp_keepalive(stream_->next_layer().native_handle(), liveness_);
    const auto peer = stream_->next_layer().remote_endpoint(ignored);
    peer_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
    stream_->async_handshake(ssl::stream_base::server, completion_.handler());
    handshaking_ = true;
    handshake_until_ = Clock::now() + handshake_timeout_;
    return true;
  }

  void close() {
    connected_ = handshaking_ = false;
    if (!stream_) return;
    boost::system::error_code ignored;
    stream_->next_layer().close(ignored);
    stream_.reset();
  }

  TcpLiveness liveness_;
  detail::IdleWatch idle_{liveness_.idle};
  std::chrono::milliseconds handshake_timeout_;
  detail::IoLoop loop_;
  ssl::context ssl_{ssl::context::tls_server};
  tcp::acceptor acceptor_{loop_.io()};
  std::optional<ssl::stream<tcp::socket>> stream_;
  asio::steady_timer retry_timer_{loop_.io()};
  detail::Completion completion_;
  std::string endpoint_, lost_reason_;
  std::string peer_;  // the connection being handshaken, "ADDRESS:PORT"
  bool ever_connected_ = false, connected_ = false, fresh_ = false;
  bool handshaking_ = false;  // a handshake is in flight (it may outlast a read's deadline)
  Clock::time_point handshake_until_{};
  bool accept_failed_ = false;  // the last accept() failed before any handshake
  std::atomic<uint64_t> refused_{0};
};

}  // namespace

std::unique_ptr<TlsServerTransport> make_tls_server_transport(
    const std::string& host, uint16_t port, const TlsFiles& files, TcpLiveness liveness,
    std::chrono::milliseconds handshake_timeout) {
  return std::make_unique<TlsServer>(host, port, files, liveness, handshake_timeout);
}

}  // namespace eit::acquisition
