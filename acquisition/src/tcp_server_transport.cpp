// TCP server transport: listens, accepts one device connection, reads it until it closes or
// stays silent for the idle timeout, then accepts the next one (counted as a reconnect). Further
// devices wait in the listen backlog, so a silent first connection cannot starve the device
// behind it for longer than the idle timeout.
#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>

#include "asio_loop.hpp"
#include "connection_loss.hpp"
#include "eit/acquisition/transports.hpp"
#include "idle_watch.hpp"
#include "reconnect_wait.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

class TcpServerTransport final : public ByteTransport {
 public:
  TcpServerTransport(const std::string& host, uint16_t port, TcpLiveness liveness)
      : liveness_(liveness) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("tcp-listen://{}:{}: '{}' is not an IP address ({}); "
                      "expected e.g. 127.0.0.1 or 0.0.0.0",
                      host, port, host, ec.message()));
    }
    const tcp::endpoint where(address, port);
    acceptor_.open(where.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(where, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("tcp-listen://{}:{}: cannot listen ({}); expected a "
                      "free local port",
                      host, port, ec.message()));
    }
    const auto bound = acceptor_.local_endpoint();
    endpoint_ = fmt::format("{}:{}", bound.address().to_string(), bound.port());
  }

  std::string describe() const override { return "tcp-listen://" + endpoint_ + " (server)"; }
  std::string endpoint() const override { return endpoint_; }
  void stop() noexcept override { loop_.stop(); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return loss_.told({TransportStatus::kStopped});
      if (!connected_) {
        acceptor_.async_accept(socket_, completion_.handler());
        loop_.run(completion_, deadline, [this] {
          boost::system::error_code ignored;
          acceptor_.cancel(ignored);
        });
        if (!completion_.ok()) {
          if (completion_.ec == asio::error::operation_aborted) {
            return loss_.told(
                {loop_.stopped() ? TransportStatus::kStopped : TransportStatus::kTimeout});
          }
          note_error(fmt::format("tcp-listen://{}: accept failed ({})", endpoint_,
                                 completion_.ec.message()));
          boost::system::error_code ignored;
          socket_.close(ignored);
          if (const auto status =
                  detail::pause_after_failed_accept(loop_, retry_timer_, completion_, deadline))
            return loss_.told({*status});
          continue;
        }
        boost::system::error_code ignored;
        socket_.set_option(tcp::no_delay(true), ignored);
        apply_tcp_keepalive(socket_.native_handle(), liveness_);
        idle_.heard();
        if (ever_connected_) {
          count_reconnect();
          note_error(
              fmt::format("tcp-listen://{}: accepted a new device connection after the "
                          "previous one closed ({})",
                          endpoint_, lost_reason_));
        }
        ever_connected_ = connected_ = fresh_ = true;
      }
      socket_.async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, idle_.read_until(deadline), [this] {
        boost::system::error_code ignored;
        socket_.cancel(ignored);
      });
      auto read = detail::settle_connected_read(completion_, idle_, loop_, fresh_);
      if (read.result) return loss_.told(*read.result);
      if (read.went_idle) count_idle_timeout();
      loss_.lost();
      lost_reason_ = std::move(read.lost_reason);
      note_error(
          fmt::format("tcp-listen://{}: device connection closed ({}); waiting for the "
                      "next one",
                      endpoint_, lost_reason_));
      boost::system::error_code ignored;
      socket_.close(ignored);
      connected_ = false;
    }
  }

 private:
  TcpLiveness liveness_;
  detail::IdleWatch idle_{liveness_.idle};
  detail::IoLoop loop_;
  tcp::acceptor acceptor_{loop_.io()};
  tcp::socket socket_{loop_.io()};
  asio::steady_timer retry_timer_{loop_.io()};
  detail::Completion completion_;
  std::string endpoint_;
  std::string lost_reason_;
  detail::ConnectionLoss loss_;  // told on the next read after a lost connection
  bool connected_ = false, ever_connected_ = false, fresh_ = false;
};

}  // namespace

std::unique_ptr<ByteTransport> make_tcp_server_transport(const std::string& host, uint16_t port,
                                                         TcpLiveness liveness) {
  return std::make_unique<TcpServerTransport>(host, port, liveness);
}

}  // namespace eit::acquisition
