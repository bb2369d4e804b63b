// TCP client transport: connects to a device server, reads whatever arrives, and after losing
// the connection, failing to make it (refused, or unanswered for the connect timeout, which may
// span many reads), or hearing nothing for the idle timeout, tries again after
// initial, 2×, 4×, … max backoff. The backoff resets only once bytes flow again, so a device
// that accepts connections but stays silent is not hammered. With a TLS context (tls-connect://) each
// connection is a TLS session over the same socket: a failed handshake is counted in refused()
// and retried like a failed connect.
#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>

#include "asio_loop.hpp"
#include "connection_loss.hpp"
#include "eit/acquisition/tls_transport.hpp"
#include "eit/acquisition/transports.hpp"
#include "idle_watch.hpp"
#include "reconnect_wait.hpp"
#include "tls_context.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

// TLS for a client connection: the context, the name the server's certificate must carry, and
// how long a handshake may take.
struct ClientTls {
  ssl::context context{ssl::context::tls_client};
  std::string peer_name;
  std::chrono::milliseconds handshake_timeout{5000};
};

class TcpClientTransport final : public TlsClientTransport {
 public:
  TcpClientTransport(const std::string& host, uint16_t port, ReconnectPolicy policy,
                     TcpLiveness liveness, std::unique_ptr<ClientTls> tls = nullptr)
      : name_(fmt::format("{}://{}:{}", tls ? "tls-connect" : "tcp", host, port)),
        policy_(policy),
        liveness_(liveness),
        tls_(std::move(tls)) {
    boost::system::error_code ec;
    tcp::resolver resolver(loop_.io());
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw SourceUnavailable(
          fmt::format("{}: cannot resolve host '{}' ({}); expected a host "
                      "name or IP address",
                      name_, host, ec ? ec.message() : "no addresses"));
    }
    for (const auto& r : results) endpoints_.push_back(r.endpoint());
    backoff_ = policy_.initial;
  }

  ~TcpClientTransport() override {
    // A connect left in flight by the last read() must end before its Completion is destroyed.
    if (connecting_) {
      loop_.finish(completion_, [this] {
        boost::system::error_code ignored;
        socket_.close(ignored);
      });
    }
  }

  std::string describe() const override { return name_ + " (client)"; }
  std::string endpoint() const override { return name_.substr(name_.find("://") + 3); }
  void stop() noexcept override { loop_.stop(); }
  uint64_t refused() const noexcept override { return refused_.load(std::memory_order_relaxed); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return {TransportStatus::kStopped};
      if (!connected_) {
        auto status = connect(deadline);
        if (status != TransportStatus::kData) return loss_.told({status});
        continue;
      }
      if (stream_)
        stream_->async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      else
        socket_.async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, idle_.read_until(deadline), [this] { socket_.cancel(); });
      auto read = detail::settle_connected_read(completion_, idle_, loop_, fresh_);
      if (read.result) {
        // Bytes flow: the connection is healthy again.
        if (read.result->status == TransportStatus::kData) backoff_ = policy_.initial;
        return loss_.told(*read.result);
      }
      if (read.went_idle) count_idle_timeout();
      loss_.lost();
      lost_reason_ = std::move(read.lost_reason);
      note_error(fmt::format("{}: connection lost ({}); reconnecting in {} ms", name_, lost_reason_,
                             backoff_.count()));
      close();
      connected_ = false;
      next_attempt_ = Clock::now() + backoff_;
      grow_backoff();
    }
  }

 private:
  void close() {
    stream_.reset();  // the TLS session over socket_ (the socket itself is closed below)
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  // Starts the TLS handshake on a fresh connection. It is bounded by its own timeout (a server
  // that accepts and stays silent is cut), not by a read's deadline: like the connect, it stays
  // in flight across reads.
  void start_handshake() {
    stream_.emplace(socket_, tls_->context);
    detail::set_tls_peer_name(*stream_, tls_->peer_name);
    stream_->async_handshake(ssl::stream_base::client, completion_.handler());
    handshaking_ = true;
    connect_deadline_ = Clock::now() + tls_->handshake_timeout;
  }

  // A handshake that ended without success: refused (counted, the socket closed, the next try
  // scheduled with backoff), or stopped.
  void handshake_failed() {
    const bool stopped = loop_.stopped();
    const std::string why = detail::tls_failure(completion_.ec, stream_->native_handle());
    close();
    if (stopped) return;
    refused_.fetch_add(1, std::memory_order_relaxed);
    if (lost_reason_.empty()) lost_reason_ = "TLS handshake failed: " + why;
    note_error(fmt::format("{}: TLS handshake refused ({}); {} refused in all (expected a server "
                           "certificate signed by ca= for the name '{}'); retrying in {} ms",
                           name_, why, refused(), tls_->peer_name, backoff_.count()));
    next_attempt_ = Clock::now() + backoff_;
    grow_backoff();
  }

  void grow_backoff() { backoff_ = detail::grown_backoff(backoff_, policy_); }

  // kData once connected; kTimeout or kStopped otherwise. A connect (or TLS handshake) in flight
  // at the read's deadline stays in flight (kTimeout): the next read() goes on waiting for it, up
  // to policy_.connect_timeout (the handshake timeout), so a round trip longer than a read's
  // deadline still connects.
  TransportStatus connect(Clock::time_point deadline) {
    for (;;) {
      if (!connecting_) {
        if (auto status =
                detail::wait_for_attempt(loop_, timer_, completion_, next_attempt_, deadline))
          return *status;
        target_ = endpoints_[attempt_++ % endpoints_.size()];
        socket_.async_connect(target_, completion_.handler());
        connecting_ = true;
        handshaking_ = false;
        connect_deadline_ = Clock::now() + policy_.connect_timeout;
      }
      const auto close_socket = [this] {
        boost::system::error_code ignored;
        socket_.close(ignored);
      };
      if (!loop_.run_part(completion_, std::min(deadline, connect_deadline_), close_socket)) {
        if (Clock::now() < connect_deadline_) return TransportStatus::kTimeout;
        loop_.finish(completion_, close_socket);
      }
      if (completion_.ok() && tls_ && !handshaking_) {
        start_handshake();  // still connecting_
        continue;
      }
      connecting_ = false;
      if (handshaking_) {
        handshaking_ = false;
        if (!completion_.ok()) {
          handshake_failed();  // refused: counted, retried later
          continue;
        }
      }
      if (completion_.ok()) {
        boost::system::error_code ignored;
        socket_.set_option(tcp::no_delay(true), ignored);
        apply_tcp_keepalive(socket_.native_handle(), liveness_);
        idle_.heard();
        if (ever_connected_) {
          count_reconnect();
          note_error(fmt::format("{}: reconnected after connection lost ({})", name_,
                                 lost_reason_.empty() ? "connect failed" : lost_reason_));
        }
        lost_reason_.clear();
        ever_connected_ = connected_ = fresh_ = true;
        return TransportStatus::kData;
      }
      close_socket();
      if (loop_.stopped()) return TransportStatus::kStopped;
      // The only cancellation left is the connect's own timeout (a stop returned above).
      const bool timed_out = completion_.ec == asio::error::operation_aborted;
      const std::string why = timed_out ? fmt::format("connect to {}:{} timed out after {} ms",
                                                      target_.address().to_string(), target_.port(),
                                                      policy_.connect_timeout.count())
                                        : completion_.ec.message();
      note_error(fmt::format("{}: {}; retrying in {} ms", name_,
                             timed_out ? why : fmt::format("connect failed ({})", why),
                             backoff_.count()));
      if (lost_reason_.empty()) lost_reason_ = why;
      next_attempt_ = Clock::now() + backoff_;
      grow_backoff();
    }
  }

  std::string name_;
  ReconnectPolicy policy_;
  TcpLiveness liveness_;
  detail::IdleWatch idle_{liveness_.idle};
  detail::IoLoop loop_;
  tcp::socket socket_{loop_.io()};
  std::unique_ptr<ClientTls> tls_;
  std::optional<ssl::stream<tcp::socket&>> stream_;  // the TLS session of a tls-connect:// connection
  std::atomic<uint64_t> refused_{0};
  asio::steady_timer timer_{loop_.io()};
  detail::Completion completion_;
  std::vector<tcp::endpoint> endpoints_;
  size_t attempt_ = 0;
  tcp::endpoint target_;                // the address being (or last) connected to
  Clock::time_point connect_deadline_;  // when the connect in flight is abandoned
  bool connecting_ = false, connected_ = false, ever_connected_ = false, fresh_ = false;
  bool handshaking_ = false;  // the operation in flight is the TLS handshake, not the connect
  std::string lost_reason_;
  detail::ConnectionLoss loss_;  // told on the next read after a lost connection
  std::chrono::milliseconds backoff_;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<ByteTransport> make_tcp_client_transport(const std::string& host, uint16_t port,
                                                         ReconnectPolicy reconnect,
                                                         TcpLiveness liveness) {
  if (port == 0) {
    throw std::invalid_argument(
        fmt::format("tcp://{}:0: a client needs the device's port; expected 1..65535", host));
  }
  return std::make_unique<TcpClientTransport>(host, port, reconnect, liveness);
}

std::unique_ptr<TlsClientTransport> make_tls_client_transport(
    const std::string& host, uint16_t port, const TlsFiles& files, ReconnectPolicy reconnect,
    TcpLiveness liveness, std::chrono::milliseconds handshake_timeout) {
  const std::string uri = fmt::format("tls-connect://{}:{}", host, port);
  if (port == 0)
    throw std::invalid_argument(uri + ": a client needs the device's port; expected 1..65535");
  auto tls = std::make_unique<ClientTls>();
  detail::configure_tls_context(tls->context, uri, files, detail::TlsRole::kClient, true);
  tls->peer_name = files.name.empty() ? host : files.name;
  tls->handshake_timeout = handshake_timeout;
  return std::make_unique<TcpClientTransport>(host, port, reconnect, liveness, std::move(tls));
}

}  // namespace eit::acquisition
