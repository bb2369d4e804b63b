// Device links over TCP: a listening device (one receiver at a time, re-accepted after it goes)
// and a connecting device (reconnects with backoff). Sends are blocking writes. Either may be TLS
// (tls-listen://, tls-connect://): each connection then starts with a handshake bounded by
// kHandshakeTimeout, and a connection whose handshake fails is closed as if never made.
#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "asio_loop.hpp"
#include "device_links.hpp"
#include "reconnect_wait.hpp"
#include "tls_context.hpp"

namespace eit::acquisition::detail {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
namespace ssl = asio::ssl;
using Clock = std::chrono::steady_clock;
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);

// One connection's socket and, on a TLS link, its session: the handshake, writes and closing.
class LinkConnection {
 public:
  LinkConnection(IoLoop& loop, ssl::context* tls, std::string peer_name)
      : loop_(loop), socket_(loop.io()), tls_(tls), peer_name_(std::move(peer_name)) {}
  tcp::socket& socket() noexcept { return socket_; }

  // After connect/accept: plain links are ready; TLS links handshake. False: closed.
  bool start(ssl::stream_base::handshake_type side) {
    boost::system::error_code ignored;
    socket_.non_blocking(false, ignored);
    socket_.set_option(tcp::no_delay(true), ignored);
    if (!tls_) return true;
    stream_.emplace(socket_, *tls_);
    if (side == ssl::stream_base::client) set_tls_peer_name(*stream_, peer_name_);
    stream_->async_handshake(side, completion_.handler());
    loop_.run(completion_, Clock::now() + kHandshakeTimeout, [this] {
      boost::system::error_code e;
      socket_.cancel(e);
    });
    if (completion_.ok()) return true;
    close();
    return false;
  }
  // Blocks until every byte is written. False on an error, the connection then closed.
  bool write(std::span<const uint8_t> bytes) {
    boost::system::error_code ec;
    if (stream_)
      asio::write(*stream_, asio::buffer(bytes.data(), bytes.size()), ec);
    else
      asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
    if (!ec) return true;
    close();
    return false;
  }
  void close() {
    stream_.reset();
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  IoLoop& loop_;
  tcp::socket socket_;
  ssl::context* tls_;
  std::string peer_name_;
  std::optional<ssl::stream<tcp::socket&>> stream_;
  Completion completion_;
};

std::unique_ptr<ssl::context> tls_context(const std::string& uri, const TlsFiles* files,
                                          TlsRole role) {
  if (!files) return nullptr;
  auto ctx = std::make_unique<ssl::context>(role == TlsRole::kServer ? ssl::context::tls_server
                                                                     : ssl::context::tls_client);
  configure_tls_context(*ctx, uri, *files, role, !files->ca.empty());
  return ctx;
}

// "127.0.0.1:40211", "[::1]:40211": an address and port as a URI writes them.
std::string host_port(const asio::ip::address& address, uint16_t port) {
  return address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), port)
                         : fmt::format("{}:{}", address.to_string(), port);
}

// What both TCP links do with a frame once connected: write it, and count a failed write as a
// disconnect and a dropped frame.
class TcpLink : public DeviceLink {
 protected:
  bool write_frame(LinkConnection& conn, std::span<const uint8_t> bytes) {
    if (conn.write(bytes)) return true;
    connected_ = false;
    count_disconnect();
    count_dropped();
    return false;
  }

  bool connected_ = false;
};

class TcpListenLink final : public TcpLink {
 public:
  TcpListenLink(const std::string& host, uint16_t port, const TlsFiles* tls)
      : scheme_(tls ? "tls-listen" : "tcp-listen"),
        tls_(tls_context(fmt::format("{}://{}:{}", scheme_, host, port), tls, TlsRole::kServer)),
        conn_(loop_, tls_.get(), "") {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("tcp-listen://{}:{}: '{}' is not an IP address; expected e.g. 127.0.0.1",
                      host, port, host));
    }
    const tcp::endpoint where(address, port);
    acceptor_.open(where.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(where, ec);
    if (!ec) acceptor_.listen(4, ec);
    if (!ec) acceptor_.non_blocking(true, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("tcp-listen://{}:{}: cannot listen ({}); expected a free local port", host,
                      port, ec.message()));
    }
    // The endpoint is what was bound (0.0.0.0:40211 listens on every interface). A receiver
    // cannot connect to an unspecified address, so its URI names this machine's loopback of the
    // same family instead: right on this machine; elsewhere, the host's address replaces it.
    const auto bound = acceptor_.local_endpoint();
    endpoint_ = host_port(bound.address(), bound.port());
    const auto reachable = !bound.address().is_unspecified() ? bound.address()
                           : bound.address().is_v6()
                               ? asio::ip::address(asio::ip::address_v6::loopback())
                               : asio::ip::address(asio::ip::address_v4::loopback());
    receiver_ = (tls_ ? "tls-connect://" : "tcp://") + host_port(reachable, bound.port());
  }

  std::string describe() const override { return scheme_ + "://" + endpoint_; }
  std::string endpoint() const override { return endpoint_; }
  std::string receiver_uri() const override { return receiver_; }

  bool wait_for_receiver(std::chrono::milliseconds timeout) override {
    if (connected_) return true;
    acceptor_.async_accept(conn_.socket(), completion_.handler());
    loop_.run(completion_, Clock::now() + timeout, [this] {
      boost::system::error_code ignored;
      acceptor_.cancel(ignored);
    });
    if (!completion_.ok()) {
      conn_.close();
      return false;
    }
    return on_accepted();
  }

  bool send(std::span<const uint8_t> bytes) override {
    if (!connected_) {
      boost::system::error_code ec;
      acceptor_.accept(conn_.socket(), ec);  // non-blocking: a receiver that is waiting, or none
      if (ec || !on_accepted()) {
        count_dropped();
        return false;
      }
    }
    return write_frame(conn_, bytes);
  }

 private:
  bool on_accepted() {
    connected_ = conn_.start(ssl::stream_base::server);
    return connected_;
  }

  std::string scheme_;
  IoLoop loop_;
  std::unique_ptr<ssl::context> tls_;
  tcp::acceptor acceptor_{loop_.io()};
  LinkConnection conn_;
  Completion completion_;
  std::string endpoint_, receiver_;
};

class TcpConnectLink final : public TcpLink {
 public:
  TcpConnectLink(const std::string& host, uint16_t port, ReconnectPolicy policy,
                  const TlsFiles* tls)
      : name_(fmt::format("{}:{}", host, port)),
        scheme_(tls ? "tls-connect" : "tcp"),
        policy_(policy),
        tls_(tls_context(scheme_ + "://" + name_, tls, TlsRole::kClient)),
        conn_(loop_, tls_.get(), tls && !tls->name.empty() ? tls->name : host),
        backoff_(policy.initial) {
    boost::system::error_code ec;
    tcp::resolver resolver(loop_.io());
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("{}://{}: cannot resolve '{}' ({}); expected a host name or IP address",
                      scheme_, name_, host, ec ? ec.message() : "no addresses"));
    }
    for (const auto& r : results) endpoints_.push_back(r.endpoint());
  }

  std::string describe() const override { return scheme_ + "://" + name_; }
  std::string endpoint() const override { return name_; }
  std::string receiver_uri() const override {
    return (tls_ ? "tls-listen://" : "tcp-listen://") + name_;
  }

  bool wait_for_receiver(std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    while (!connected_ && Clock::now() < deadline) {
      if (!try_connect(deadline)) {
        std::this_thread::sleep_for(std::min<Clock::duration>(backoff_, deadline - Clock::now()));
        grow_backoff();
      }
    }
    return connected_;
  }

  bool send(std::span<const uint8_t> bytes) override {
    if (!connected_ && Clock::now() >= next_attempt_) {
      if (!try_connect(Clock::now() + std::chrono::seconds(1))) {
        next_attempt_ = Clock::now() + backoff_;
        grow_backoff();
      }
    }
    if (!connected_) {
      count_dropped();
      return false;
    }
    if (write_frame(conn_, bytes)) return true;
    next_attempt_ = Clock::now() + policy_.initial;
    return false;
  }

 private:
  bool try_connect(Clock::time_point deadline) {
    conn_.socket().async_connect(endpoints_[attempt_++ % endpoints_.size()],
                                 completion_.handler());
    loop_.run(completion_, deadline, [this] { conn_.close(); });
    if (!completion_.ok()) {
      conn_.close();
      return false;
    }
    if (!conn_.start(ssl::stream_base::client)) return false;
    connected_ = true;
    backoff_ = policy_.initial;
    return true;
  }
  void grow_backoff() { backoff_ = grown_backoff(backoff_, policy_); }

  std::string name_, scheme_;
  ReconnectPolicy policy_;
  IoLoop loop_;
  std::unique_ptr<ssl::context> tls_;
  LinkConnection conn_;
  Completion completion_;
  std::vector<tcp::endpoint> endpoints_;
  size_t attempt_ = 0;
  std::chrono::milliseconds backoff_;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<DeviceLink> make_tcp_listen_link(const std::string& host, uint16_t port,
                                                 const TlsFiles* tls) {
  return std::make_unique<TcpListenLink>(host, port, tls);
}

std::unique_ptr<DeviceLink> make_tcp_connect_link(const std::string& host, uint16_t port,
                                                  ReconnectPolicy policy, const TlsFiles* tls) {
  if (port == 0) {
    throw std::invalid_argument(fmt::format(
        "{}://{}:0: the receiver's port is needed; expected 1..65535",
        tls ? "tls-connect" : "tcp", host));
  }
  return std::make_unique<TcpConnectLink>(host, port, policy, tls);
}

}  // namespace eit::acquisition::detail
