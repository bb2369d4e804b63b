// Device links over TCP: a listening device (one receiver at a time, re-accepted after it goes)
// and a connecting device (reconnects with backoff). Sends are blocking writes.
#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "asio_loop.hpp"
#include "device_links.hpp"

namespace eit::acquisition::detail {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

class TcpListenLink final : public DeviceLink {
 public:
  TcpListenLink(const std::string& host, uint16_t port) {
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
    const auto bound = acceptor_.local_endpoint();
    const auto shown =
        bound.address().is_unspecified() ? std::string("127.0.0.1") : bound.address().to_string();
    endpoint_ = fmt::format("{}:{}", shown, bound.port());
  }

  std::string describe() const override { return "tcp-listen://" + endpoint_; }
  std::string endpoint() const override { return endpoint_; }
  std::string receiver_uri() const override { return "tcp://" + endpoint_; }

  bool wait_for_receiver(std::chrono::milliseconds timeout) override {
    if (connected_) return true;
    acceptor_.async_accept(socket_, completion_.handler());
    loop_.run(completion_, Clock::now() + timeout, [this] {
      boost::system::error_code ignored;
      acceptor_.cancel(ignored);
    });
    if (!completion_.ok()) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      return false;
    }
    return on_accepted();
  }

  bool send(std::span<const uint8_t> bytes) override {
    if (!connected_) {
      boost::system::error_code ec;
      acceptor_.accept(socket_, ec);  // non-blocking: a receiver that is waiting, or none
      if (ec || !on_accepted()) {
        count_dropped();
        return false;
      }
    }
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      connected_ = false;
      count_disconnect();
      count_dropped();
      return false;
    }
    return true;
  }

 private:
  bool on_accepted() {
    boost::system::error_code ec;
    socket_.non_blocking(false, ec);
    socket_.set_option(tcp::no_delay(true), ec);
    connected_ = true;
    return true;
  }

  IoLoop loop_;
  tcp::acceptor acceptor_{loop_.io()};
  tcp::socket socket_{loop_.io()};
  Completion completion_;
  std::string endpoint_;
  bool connected_ = false;
};

class TcpConnectLink final : public DeviceLink {
 public:
  TcpConnectLink(const std::string& host, uint16_t port, ReconnectPolicy policy)
      : name_(fmt::format("{}:{}", host, port)), policy_(policy), backoff_(policy.initial) {
    boost::system::error_code ec;
    tcp::resolver resolver(loop_.io());
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("tcp://{}: cannot resolve '{}' ({}); expected a host name or IP address",
                      name_, host, ec ? ec.message() : "no addresses"));
    }
    for (const auto& r : results) endpoints_.push_back(r.endpoint());
  }

  std::string describe() const override { return "tcp://" + name_; }
  std::string endpoint() const override { return name_; }
  std::string receiver_uri() const override { return "tcp-listen://" + name_; }

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
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      connected_ = false;
      count_disconnect();
      count_dropped();
      next_attempt_ = Clock::now() + policy_.initial;
      return false;
    }
    return true;
  }

 private:
  bool try_connect(Clock::time_point deadline) {
    socket_.async_connect(endpoints_[attempt_++ % endpoints_.size()], completion_.handler());
    loop_.run(completion_, deadline, [this] {
      boost::system::error_code ignored;
      socket_.close(ignored);
    });
    if (!completion_.ok()) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      return false;
    }
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    connected_ = true;
    backoff_ = policy_.initial;
    return true;
  }
  void grow_backoff() {
    backoff_ = std::min(policy_.max, std::chrono::milliseconds(static_cast<int64_t>(
                                         static_cast<double>(backoff_.count()) * policy_.factor)));
  }

  std::string name_;
  ReconnectPolicy policy_;
  IoLoop loop_;
  tcp::socket socket_{loop_.io()};
  Completion completion_;
  std::vector<tcp::endpoint> endpoints_;
  size_t attempt_ = 0;
  bool connected_ = false;
  std::chrono::milliseconds backoff_;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<DeviceLink> make_tcp_listen_link(const std::string& host, uint16_t port) {
  return std::make_unique<TcpListenLink>(host, port);
}

std::unique_ptr<DeviceLink> make_tcp_connect_link(const std::string& host, uint16_t port,
                                                  ReconnectPolicy policy) {
  if (port == 0) {
    throw std::invalid_argument(
        fmt::format("tcp://{}:0: the receiver's port is needed; expected 1..65535", host));
  }
  return std::make_unique<TcpConnectLink>(host, port, policy);
}

}  // namespace eit::acquisition::detail
