#pragma once
// IoLoop: runs one Boost.Asio operation at a time on the caller's thread with a deadline, and
// lets another thread interrupt it. The pattern every transport uses:
//
//   Completion c;
//   socket.async_read_some(buf, c.handler());
//   loop.run(c, deadline, [&] { socket.cancel(); });
//   if (c.ok()) ...           // else c.ec says why (operation_aborted: deadline or stop)
//
// run() returns only once the operation has completed (successfully, with an error, or
// cancelled), so the buffer and the Completion are free again afterwards.
#include <atomic>
#include <chrono>

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

namespace eit::acquisition::detail {

struct Completion {
  bool done = false;
  boost::system::error_code ec;
  size_t bytes = 0;

  bool ok() const noexcept { return done && !ec; }
  auto handler() noexcept {
    done = false;
    ec.clear();
    bytes = 0;
    return [this](const boost::system::error_code& e, size_t n = 0) {
      done = true;
      ec = e;
      bytes = n;
    };
  }
};

class IoLoop {
 public:
  using Clock = std::chrono::steady_clock;

  boost::asio::io_context& io() noexcept { return io_; }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
  // Any thread. Makes the running (or next) run() cancel its operation and return.
  void stop() noexcept {
    stopped_.store(true, std::memory_order_release);
    io_.stop();
  }

  template <typename Cancel>
  void run(Completion& c, Clock::time_point deadline, Cancel&& cancel) {
    io_.restart();  // a stop() from here on still interrupts run_one_until
    if (!stopped()) {
      while (!c.done && io_.run_one_until(deadline) != 0) {
      }
    }
    if (!c.done) {
      cancel();
      while (!c.done) {  // the cancelled handler runs promptly; restart defeats a racing stop()
        io_.restart();
        io_.run_one_for(std::chrono::milliseconds(100));
      }
    }
  }

 private:
  boost::asio::io_context io_;
  std::atomic<bool> stopped_{false};
};

}  // namespace eit::acquisition::detail
