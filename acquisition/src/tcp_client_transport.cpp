// TCP client transport: connects to a device server, reads whatever arrives, and after losing
// the connection, failing to make it, or hearing nothing for the idle timeout, tries again after
// initial, 2×, 4×, … max backoff. The backoff resets only once bytes flow again, so a device
// that accepts connections but stays silent is not hammered.
#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "asio_loop.hpp"
#include "eit/acquisition/transports.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

class TcpClientTransport final : public ByteTransport {
 public:
  TcpClientTransport(const std::string& host, uint16_t port, ReconnectPolicy policy,
                     TcpLiveness liveness)
      : name_(fmt::format("tcp://{}:{}", host, port)), policy_(policy), liveness_(liveness) {
    boost::system::error_code ec;
    tcp::resolver resolver(loop_.io());
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("{}: cannot resolve host '{}' ({}); expected a host "
                      "name or IP address",
                      name_, host, ec ? ec.message() : "no addresses"));
    }
    for (const auto& r : results) endpoints_.push_back(r.endpoint());
    backoff_ = policy_.initial;
  }

  std::string describe() const override { return name_ + " (client)"; }
  std::string endpoint() const override { return name_.substr(6); }
  void stop() noexcept override { loop_.stop(); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return {TransportStatus::kStopped};
      if (!connected_) {
        auto status = connect(deadline);
        if (status != TransportStatus::kData) return {status};
        continue;
      }
      const bool idle_on = liveness_.idle.count() > 0;
      const auto idle_at = idle_on ? last_bytes_ + liveness_.idle : Clock::time_point::max();
      socket_.async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, std::min(deadline, idle_at), [this] { socket_.cancel(); });
      if (completion_.ok()) {
        last_bytes_ = Clock::now();
        backoff_ = policy_.initial;  // bytes flow: the connection is healthy again
        TransportRead r{TransportStatus::kData, completion_.bytes, fresh_};
        fresh_ = false;
        return r;
      }
      if (completion_.ec == asio::error::operation_aborted) {
        if (loop_.stopped()) return {TransportStatus::kStopped};
        if (!idle_on || Clock::now() < idle_at) return {TransportStatus::kTimeout};
        count_idle_timeout();
        lost_reason_ = fmt::format("no bytes for {} ms, idle timeout", liveness_.idle.count());
      } else {
        lost_reason_ = completion_.ec.message();
      }
      note_error(fmt::format("{}: connection lost ({}); reconnecting in {} ms", name_, lost_reason_,
                             backoff_.count()));
      boost::system::error_code ignored;
      socket_.close(ignored);
      connected_ = false;
      next_attempt_ = Clock::now() + backoff_;
      grow_backoff();
    }
  }

 private:
  void grow_backoff() {
    backoff_ = std::min(policy_.max, std::chrono::milliseconds(static_cast<int64_t>(
                                         static_cast<double>(backoff_.count()) * policy_.factor)));
  }

  // kData once connected; kTimeout or kStopped otherwise.
  TransportStatus connect(Clock::time_point deadline) {
    for (;;) {
      if (loop_.stopped()) return TransportStatus::kStopped;
      const auto now = Clock::now();
      if (now >= deadline) return TransportStatus::kTimeout;
      if (now < next_attempt_) {
        timer_.expires_at(std::min(next_attempt_, deadline));
        timer_.async_wait(completion_.handler());
        loop_.run(completion_, deadline + std::chrono::seconds(1), [this] { timer_.cancel(); });
        continue;
      }
      // A connect abandoned at the deadline still reaches the device's accept (and wastes its
      // turn): start one only with a few milliseconds left; the next read() starts it otherwise.
      if (deadline - now < std::chrono::milliseconds(5)) return TransportStatus::kTimeout;
      const tcp::endpoint& target = endpoints_[attempt_++ % endpoints_.size()];
      socket_.async_connect(target, completion_.handler());
      loop_.run(completion_, deadline, [this] {
        boost::system::error_code ignored;
        socket_.close(ignored);
      });
      if (completion_.ok()) {
        boost::system::error_code ignored;
        socket_.set_option(tcp::no_delay(true), ignored);
        apply_tcp_keepalive(socket_.native_handle(), liveness_);
        last_bytes_ = Clock::now();
        if (ever_connected_) {
          count_reconnect();
          note_error(fmt::format("{}: reconnected after connection lost ({})", name_,
                                 lost_reason_.empty() ? "connect failed" : lost_reason_));
        }
        lost_reason_.clear();
        ever_connected_ = connected_ = fresh_ = true;
        return TransportStatus::kData;
      }
      boost::system::error_code ignored;
      socket_.close(ignored);
      if (completion_.ec == asio::error::operation_aborted) continue;  // deadline or stop
      note_error(fmt::format("{}: connect failed ({}); retrying in {} ms", name_,
                             completion_.ec.message(), backoff_.count()));
      if (lost_reason_.empty()) lost_reason_ = completion_.ec.message();
      next_attempt_ = Clock::now() + backoff_;
      grow_backoff();
    }
  }

  std::string name_;
  ReconnectPolicy policy_;
  TcpLiveness liveness_;
  Clock::time_point last_bytes_{};
  detail::IoLoop loop_;
  tcp::socket socket_{loop_.io()};
  asio::steady_timer timer_{loop_.io()};
  detail::Completion completion_;
  std::vector<tcp::endpoint> endpoints_;
  size_t attempt_ = 0;
  bool connected_ = false, ever_connected_ = false, fresh_ = false;
  std::string lost_reason_;
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

}  // namespace eit::acquisition
