// UDP transport: one bound socket; each read returns one datagram. Loss and reordering are the
// decoder's and the source's business (they see seq); a datagram larger than the buffer is
// counted as truncated and dropped.
#include <fmt/format.h>
#include <boost/asio/ip/udp.hpp>

#include "asio_loop.hpp"
#include "eit/acquisition/transports.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

class UdpTransport final : public ByteTransport {
 public:
  UdpTransport(const std::string& host, uint16_t port) {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("udp://{}:{}: '{}' is not an IP address ({}); expected "
                      "e.g. 127.0.0.1 or 0.0.0.0",
                      host, port, host, ec.message()));
    }
    const udp::endpoint where(address, port);
    socket_.open(where.protocol(), ec);
    if (!ec) socket_.bind(where, ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("udp://{}:{}: cannot bind ({}); expected a free local "
                      "port",
                      host, port, ec.message()));
    }
    // Room for bursts while the acquisition thread is busy; the kernel may cap it.
    socket_.set_option(asio::socket_base::receive_buffer_size(4 << 20), ec);
    const auto bound = socket_.local_endpoint();
    endpoint_ = fmt::format("{}:{}", bound.address().to_string(), bound.port());
  }

  std::string describe() const override { return "udp://" + endpoint_; }
  std::string endpoint() const override { return endpoint_; }
  bool datagrams() const noexcept override { return true; }
  void stop() noexcept override { loop_.stop(); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return {TransportStatus::kStopped};
      socket_.async_receive(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, deadline, [this] {
        boost::system::error_code ignored;
        socket_.cancel(ignored);
      });
      if (completion_.ok()) return {TransportStatus::kData, completion_.bytes, false};
      if (completion_.ec == asio::error::operation_aborted) {
        return {loop_.stopped() ? TransportStatus::kStopped : TransportStatus::kTimeout};
      }
      if (completion_.ec == asio::error::message_size) {
        count_truncated();
        note_error(fmt::format("udp://{}: datagram larger than the {}-byte buffer dropped",
                               endpoint_, buffer.size()));
      } else {
        note_error(
            fmt::format("udp://{}: receive failed ({})", endpoint_, completion_.ec.message()));
      }
    }
  }

 private:
  detail::IoLoop loop_;
  udp::socket socket_{loop_.io()};
  detail::Completion completion_;
  std::string endpoint_;
};

}  // namespace

std::unique_ptr<ByteTransport> make_udp_transport(const std::string& host, uint16_t port) {
  return std::make_unique<UdpTransport>(host, port);
}

}  // namespace eit::acquisition
