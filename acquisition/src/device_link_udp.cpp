// Device link over UDP: one datagram per send(), to a fixed receiver address.
#include <fmt/format.h>
#include <boost/asio/ip/udp.hpp>

#include "asio_loop.hpp"
#include "device_links.hpp"

namespace eit::acquisition::detail {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

class UdpLink final : public DeviceLink {
 public:
  UdpLink(const std::string& host, uint16_t port) : name_(fmt::format("{}:{}", host, port)) {
    boost::system::error_code ec;
    udp::resolver resolver(loop_.io());
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("udp://{}: cannot resolve '{}' ({}); expected a host name or IP address",
                      name_, host, ec ? ec.message() : "no addresses"));
    }
    target_ = results.begin()->endpoint();
    socket_.open(target_.protocol(), ec);
    if (!ec) socket_.set_option(asio::socket_base::send_buffer_size(4 << 20), ec);
    if (!socket_.is_open()) {
      throw std::runtime_error(
          fmt::format("udp://{}: cannot open a socket ({})", name_, ec.message()));
    }
  }

  std::string describe() const override { return "udp://" + name_; }
  std::string endpoint() const override { return name_; }
  std::string receiver_uri() const override { return "udp://" + name_; }
  bool wait_for_receiver(std::chrono::milliseconds) override { return true; }

  bool send(std::span<const uint8_t> bytes) override {
    boost::system::error_code ec;
    socket_.send_to(asio::buffer(bytes.data(), bytes.size()), target_, 0, ec);
    if (ec) {
      count_dropped();
      return false;
    }
    return true;
  }

 private:
  std::string name_;
  IoLoop loop_;
  udp::socket socket_{loop_.io()};
  udp::endpoint target_;
};

}  // namespace

std::unique_ptr<DeviceLink> make_udp_link(const std::string& host, uint16_t port) {
  if (port == 0) {
    throw std::invalid_argument(
        fmt::format("udp://{}:0: the receiver's port is needed; expected 1..65535", host));
  }
  return std::make_unique<UdpLink>(host, port);
}

}  // namespace eit::acquisition::detail
