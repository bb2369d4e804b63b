#include "eit/bench/measuring_subscriber.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/bench/image_subscriber.hpp"
#include "eit/pipeline/clock.hpp"

namespace eit::bench {

std::string bench_endpoint(const std::string& transport) {
  static std::atomic<int> counter{0};
  const int n = counter.fetch_add(1);
  if (transport == "inproc") return fmt::format("inproc://eit-bench-{}-{}", ::getpid(), n);
  if (transport == "ipc")
    return fmt::format("ipc://{}/eit-bench-{}-{}.sock",
                       std::filesystem::temp_directory_path().string(), ::getpid(), n);
  if (transport == "tcp") return "tcp://127.0.0.1:*";
  if (transport == "shm") return fmt::format("shm://eit-bench-{}-{}", ::getpid(), n);
  throw std::invalid_argument(
      fmt::format("--transport '{}': expected inproc, ipc, tcp or shm", transport));
}

// The inproc subscriber: a thread next to the sender, sharing its context.
class MeasuringSubscriber::Thread {
 public:
  Thread(zmq::context_t& context, const std::string& endpoint, size_t capacity, SubscriberMode mode)
      : sub_(context, endpoint, capacity, mode.pull),
        spin_(mode.spin),
        cpu_(mode.cpu),
        thread_([this] { loop(); }) {}
  ~Thread() { finish(); }
  const ImageSubscriber& finish() {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
    return sub_;
  }
  int pin_error() const noexcept { return pin_error_; }  // after finish()

 private:
  void loop() {
    if (cpu_ >= 0) pin_error_ = pin_this_thread(cpu_);
    int64_t quiet_until = std::numeric_limits<int64_t>::max();
    bool stopping = false;
    while (!sub_.counts().series_end) {
      const size_t got = spin_ ? sub_.drain() : sub_.poll(50);
      if (!stopping && stop_.load(std::memory_order_acquire)) {
        stopping = true;
        quiet_until = pipeline::now_ns() + 300'000'000;
      }
      if (stopping && got > 0) quiet_until = pipeline::now_ns() + 300'000'000;
      if (pipeline::now_ns() > quiet_until) break;
    }
    sub_.close();  // a PUSH publisher's lossless end waits for its consumers to go
  }
  ImageSubscriber sub_;
  bool spin_ = false;
  int cpu_ = -1;
  int pin_error_ = -1;  // written by the thread before it ends, read after the join
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

MeasuringSubscriber::MeasuringSubscriber(zmq::context_t& context, const std::string& executable,
                                         const std::string& endpoint, size_t capacity,
                                         SubscriberMode mode) {
  if (endpoint.starts_with("inproc://")) {
    thread_ = std::make_unique<Thread>(context, endpoint, capacity, mode);
    // Let the subscription reach the sender before it starts (the child waits likewise).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } else {
    process_ = std::make_unique<SubscriberProcess>(executable, endpoint, capacity, mode);
  }
}

MeasuringSubscriber::~MeasuringSubscriber() = default;

pid_t MeasuringSubscriber::child_pid() const noexcept { return process_ ? process_->pid() : -1; }

SubscriberReport MeasuringSubscriber::finish() {
  if (process_) return process_->finish();
  const ImageSubscriber& sub = thread_->finish();
  return {sub.received(), sub.counts(), thread_->pin_error()};
}

}  // namespace eit::bench
