// Serial transport: boost::asio::serial_port in raw mode with the configured line settings.
// When the device goes away (unplugged adapter, closed pty: read fails with EOF or EIO) the port
// is closed and reopened with backoff until the device is back.
#include <algorithm>

#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/serial_port.hpp>
#include <boost/asio/steady_timer.hpp>

#include "asio_loop.hpp"
#include "connection_loss.hpp"
#include "eit/acquisition/transports.hpp"
#include "reconnect_wait.hpp"

namespace eit::acquisition {
namespace {

namespace asio = boost::asio;

class SerialTransport final : public ByteTransport {
 public:
  explicit SerialTransport(const SerialOptions& options)
      : options_(options),
        name_(fmt::format("serial://{}?baud={}&bits={}&parity={}&stop={}", options.path,
                          options.baud, options.data_bits, options.parity, options.stop_bits)) {
    backoff_ = options_.reconnect.initial;
    if (auto ec = open()) {
      // A device that opened but refused a setting is there: the setting is wrong, not the path.
      if (!failed_setting_.empty())
        throw std::invalid_argument(fmt::format(
            "{}: the device refused {} ({}); expected a value it supports (baud: e.g. 9600, "
            "57600, 115200, 230400, 460800, 921600)",
            name_, failed_setting_, ec.message()));
      throw SourceUnavailable(
          fmt::format("{}: cannot open ({}); expected a serial device", name_, ec.message()));
    }
  }

  std::string describe() const override { return name_; }
  std::string endpoint() const override { return options_.path; }
  void stop() noexcept override { loop_.stop(); }

  TransportRead read(std::span<uint8_t> buffer, Clock::time_point deadline) override {
    for (;;) {
      if (loop_.stopped()) return {TransportStatus::kStopped};
      if (!port_.is_open()) {
        auto status = reopen(deadline);
        if (status != TransportStatus::kData) return loss_.told({status});
      }
      port_.async_read_some(asio::buffer(buffer.data(), buffer.size()), completion_.handler());
      loop_.run(completion_, deadline, [this] {
        boost::system::error_code ignored;
        port_.cancel(ignored);
      });
      if (completion_.ok()) {
        TransportRead r{TransportStatus::kData, completion_.bytes, fresh_};
        fresh_ = false;
        return loss_.told(r);
      }
      if (completion_.ec == asio::error::operation_aborted) {
        return loss_.told(
            {loop_.stopped() ? TransportStatus::kStopped : TransportStatus::kTimeout});
      }
      loss_.lost();
      lost_reason_ = completion_.ec.message();
      note_error(fmt::format("{}: device lost ({}); reopening", name_, lost_reason_));
      boost::system::error_code ignored;
      port_.close(ignored);
      backoff_ = options_.reconnect.initial;
      next_attempt_ = Clock::now() + backoff_;
    }
  }

 private:
  boost::system::error_code open() {
    boost::system::error_code ec;
    port_.open(options_.path, ec);
    if (ec) return ec;
    using sp = asio::serial_port_base;
    const auto parity = options_.parity == 'e'   ? sp::parity::even
                        : options_.parity == 'o' ? sp::parity::odd
                                                 : sp::parity::none;
    // Each setting in turn, the first the device refuses named (failed_setting_).
    failed_setting_.clear();
    const auto apply = [&](const auto& option, std::string what) {
      if (ec) return;
      port_.set_option(option, ec);
      if (ec) failed_setting_ = std::move(what);
    };
    apply(sp::baud_rate(options_.baud), fmt::format("baud={}", options_.baud));
    apply(sp::character_size(options_.data_bits), fmt::format("bits={}", options_.data_bits));
    apply(sp::parity(parity), fmt::format("parity={}", options_.parity));
    apply(sp::stop_bits(options_.stop_bits == 2 ? sp::stop_bits::two : sp::stop_bits::one),
          fmt::format("stop={}", options_.stop_bits));
    apply(sp::flow_control(options_.hardware_flow ? sp::flow_control::hardware
                                                  : sp::flow_control::none),
          "flow");
    if (ec) {
      boost::system::error_code ignored;
      port_.close(ignored);
    }
    return ec;
  }

  TransportStatus reopen(Clock::time_point deadline) {
    for (;;) {
      if (auto status =
              detail::wait_for_attempt(loop_, timer_, completion_, next_attempt_, deadline))
        return *status;
      if (auto ec = open()) {
        note_error(fmt::format("{}: reopen failed ({}); retrying in {} ms", name_, ec.message(),
                               backoff_.count()));
        next_attempt_ = Clock::now() + backoff_;
        backoff_ = detail::grown_backoff(backoff_, options_.reconnect);
        continue;
      }
      count_reconnect();
      note_error(fmt::format("{}: reopened after device lost ({})", name_, lost_reason_));
      fresh_ = true;
      return TransportStatus::kData;
    }
  }

  SerialOptions options_;
  std::string name_;
  detail::IoLoop loop_;
  asio::serial_port port_{loop_.io()};
  asio::steady_timer timer_{loop_.io()};
  detail::Completion completion_;
  std::string lost_reason_;
  detail::ConnectionLoss loss_;  // told on the next read after a lost connection
  std::string failed_setting_;  // the setting the device refused in open(), "" if none
  bool fresh_ = true;
  std::chrono::milliseconds backoff_;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<ByteTransport> make_serial_transport(const SerialOptions& options) {
  if (options.path.empty()) throw std::invalid_argument("serial transport: no device path given");
  if (options.data_bits < 5 || options.data_bits > 8) {
    throw std::invalid_argument(
        fmt::format("serial://{}: bits={}; expected 5..8", options.path, options.data_bits));
  }
  if (options.parity != 'n' && options.parity != 'e' && options.parity != 'o') {
    throw std::invalid_argument(
        fmt::format("serial://{}: parity={}; expected n, e or o", options.path, options.parity));
  }
  if (options.stop_bits != 1 && options.stop_bits != 2) {
    throw std::invalid_argument(
        fmt::format("serial://{}: stop={}; expected 1 or 2", options.path, options.stop_bits));
  }
  if (options.baud == 0) {
    throw std::invalid_argument(
        fmt::format("serial://{}: baud=0; expected e.g. 115200", options.path));
  }
  return std::make_unique<SerialTransport>(options);
}

}  // namespace eit::acquisition
