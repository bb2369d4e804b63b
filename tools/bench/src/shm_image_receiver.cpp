#include "eit/bench/shm_image_receiver.hpp"

#include <poll.h>
#include <unistd.h>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/shm_reader.hpp"

namespace eit::bench {
namespace {

constexpr int64_t kDrainQuietNs = 300'000'000;  // as the ZeroMQ child
constexpr int64_t kPollNs = 50'000'000;

// True once the parent has closed our stdin (the run is over); never blocks.
bool parent_closed() {
  pollfd pfd{STDIN_FILENO, POLLIN, 0};
  if (::poll(&pfd, 1, 0) <= 0) return false;
  char buf[64];
  return ::read(STDIN_FILENO, buf, sizeof buf) <= 0;
}

}  // namespace

bool receive_shm_images(const std::string& uri, size_t capacity, bool spin, SubscriberReport& out) {
  sinks::ShmReaderOptions options;
  options.wait = spin ? sinks::ShmWaitMode::kSpin : sinks::ShmWaitMode::kBalanced;
  sinks::ShmReader reader(uri, options);
  out.times.reserve(capacity);
  out.counts.series = 1;  // the series message is in the ring from the start
  if (::write(STDOUT_FILENO, "ready\n", 6) != 6) return false;
  bool parent_open = true;
  int64_t quiet_until = 0;
  uint32_t rounds = 0;
  while (true) {
    const sinks::ShmRead got = reader.next(kPollNs);
    if (got == sinks::ShmRead::kImage) {
      const int64_t t = pipeline::now_ns();
      if (out.times.size() < capacity)
        out.times.push_back({reader.header().seq, t});
      else
        ++out.counts.overflow;
      if (!parent_open) quiet_until = t + kDrainQuietNs;
    } else if (got != sinks::ShmRead::kTimeout) {
      out.counts.series_end = got == sinks::ShmRead::kEnded;
      break;
    }
    // A syscall per image would be a cost the ZeroMQ child does not pay: look every 256 images.
    if (parent_open && (got != sinks::ShmRead::kImage || (++rounds & 255u) == 0) &&
        parent_closed()) {
      parent_open = false;
      quiet_until = pipeline::now_ns() + kDrainQuietNs;
    }
    if (!parent_open && pipeline::now_ns() > quiet_until) break;
  }
  out.counts.images = reader.counts().images;
  if (out.counts.series_end) ++out.counts.series;
  return true;
}

}  // namespace eit::bench
