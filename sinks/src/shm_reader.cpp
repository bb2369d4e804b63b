#include "eit/sinks/shm_reader.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/doorbell_wait.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "shm_segment.hpp"

namespace eit::sinks {
namespace {

constexpr int64_t kCheckIntervalNs = 50'000'000;  // publisher alive / name rebound
constexpr int64_t kLongestSleepNs = 50'000'000;   // a sleep never outlasts a check

}  // namespace

ShmReader::ShmReader(std::string_view uri, ShmReaderOptions options)
    : options_(options),
      poll_ahead_(options.wait == ShmWaitMode::kBalanced &&
                  std::thread::hardware_concurrency() >= kPollAheadMinCpus) {
  const std::string name = shm_name_of(uri);
  uri_ = "shm://" + name;
  object_ = shm_object_name(name);
  bool absent = false;
  // Read-write: a sleeping reader raises the ring's waiter count (the publisher then wakes it).
  map_ = std::make_unique<ShmMapping>(open_shm(object_, true, &absent));
  if (absent)
    throw std::runtime_error(fmt::format(
        "{}: no such ring ({} does not exist: is the publisher running?)", uri_, object_));
  ring_ = reinterpret_cast<ShmRingHeader*>(map_->data());
  const uint32_t magic = ring_->magic.load(std::memory_order_acquire);
  if (magic == 0)
    throw std::runtime_error(fmt::format("{}: the publisher is still setting the ring up", uri_));
  if (magic != kShmMagic)
    throw std::runtime_error(fmt::format(
        "{}: not an eitstream ring (magic 0x{:08x}, expected 0x{:08x})", uri_, magic, kShmMagic));
  if (ring_->version != kShmLayoutVersion)
    throw std::runtime_error(fmt::format("{}: ring layout version {}, this reader reads version {}",
                                         uri_, ring_->version, kShmLayoutVersion));
  const ShmGeometry g =
      shm_geometry(ring_->slot_count, ring_->payload_bytes, ring_->series_json_bytes);
  if (ring_->header_bytes != sizeof(ShmRingHeader) || g.slot_bytes != ring_->slot_bytes ||
      g.slots_offset != ring_->slots_offset || g.total_bytes != ring_->total_bytes ||
      ring_->total_bytes != map_->size() || ring_->slot_count < 2 || ring_->payload_bytes % 4 != 0)
    throw std::runtime_error(fmt::format(
        "{}: size mismatch: the object is {} bytes, its header says {} ({} slots of {} bytes at "
        "{}); expected {} ({} slots of {} bytes at {})",
        uri_, map_->size(), ring_->total_bytes, ring_->slot_count, ring_->slot_bytes,
        ring_->slots_offset, g.total_bytes, ring_->slot_count, g.slot_bytes, g.slots_offset));
  series_json_.assign(reinterpret_cast<const char*>(map_->data() + ring_->series_json_offset),
                      ring_->series_json_bytes);
  slots_ = map_->data() + ring_->slots_offset;
  payload_.resize(ring_->payload_bytes / sizeof(float));
  next_ = ring_->write_count.load(std::memory_order_acquire) + 1;
  next_check_ns_ = pipeline::now_ns() + kCheckIntervalNs;
}

ShmReader::~ShmReader() = default;

std::unique_ptr<ShmReader> ShmReader::attach_when_ready(std::string_view uri, int timeout_ms,
                                                        ShmReaderOptions options) {
  const int64_t deadline = pipeline::now_ns() + int64_t{timeout_ms} * 1'000'000;
  while (true) {
    try {
      return std::make_unique<ShmReader>(uri, options);
    } catch (const std::invalid_argument&) {
      throw;  // a bad name never becomes good
    } catch (const std::runtime_error&) {
      if (pipeline::now_ns() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

uint64_t ShmReader::series_id() const noexcept { return ring_->series_id; }
uint32_t ShmReader::slot_count() const noexcept { return ring_->slot_count; }
uint64_t ShmReader::published() const noexcept {
  return ring_->write_count.load(std::memory_order_acquire);
}
bool ShmReader::series_ended() const noexcept {
  return ring_->state.load(std::memory_order_acquire) & kShmSeriesEnded;
}

// Seqlock read of image n: copy, then keep the copy only if the slot still holds image n.
ShmReader::Slot ShmReader::try_read(uint64_t n) noexcept {
  const std::byte* slot = slots_ + ((n - 1) % ring_->slot_count) * ring_->slot_bytes;
  const auto* seqlock = reinterpret_cast<const ShmSlotHeader*>(slot);
  const uint64_t before = seqlock->sequence.load(std::memory_order_acquire);
  if (before < 2 * n) return Slot::kNotYet;
  if (before > 2 * n) return Slot::kLapped;
  std::memcpy(&header_, slot + kShmImageOffset, sizeof header_);
  std::memcpy(payload_.data(), slot + kShmPayloadOffset, payload_.size() * sizeof(float));
  std::atomic_thread_fence(std::memory_order_acquire);
  if (seqlock->sequence.load(std::memory_order_relaxed) != before) {
    ++counts_.torn;
    return Slot::kLapped;
  }
  return Slot::kRead;
}

bool ShmReader::publisher_alive() const noexcept {
  if (ring_->state.load(std::memory_order_acquire) & (kShmSeriesEnded | kShmClosed)) return false;
  const auto pid = static_cast<pid_t>(ring_->publisher_pid);
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

bool ShmReader::name_rebound() const noexcept { return shm_inode(object_) != map_->inode(); }

bool ShmReader::publisher_gone_or_replaced(bool* replaced) noexcept {
  *replaced = shm_inode(object_) != map_->inode();
  if (*replaced) return true;
  const auto pid = static_cast<pid_t>(ring_->publisher_pid);
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

ShmRead ShmReader::next(int64_t timeout_ns) {
  if (!slack_set_ && poll_ahead_) {
    // The timed wake-up at a window's start must not be 50 µs late (the default timer slack).
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    slack_set_ = true;
  }
  const int64_t start = pipeline::now_ns();
  const int64_t deadline = start + timeout_ns;
  const int64_t spin_until =
      options_.wait == ShmWaitMode::kSpin ? deadline : start + options_.spin_ns;
  while (true) {
    const uint64_t written = ring_->write_count.load(std::memory_order_acquire);
    while (written >= next_) {
      const Slot s = try_read(next_);
      if (s == Slot::kRead) {
        ++next_;
        ++counts_.images;
        if (polling_ahead_) ++counts_.met_polling;
        polling_ahead_ = false;
        arrivals_.note(header_.t_published_ns);
        return ShmRead::kImage;
      }
      if (s == Slot::kNotYet) break;  // cannot happen once counted; be safe and wait
      // Lapped: skip to the newest image (the one furthest from being overwritten), as a live
      // consumer wants; everything skipped is counted.
      const uint64_t now_written = ring_->write_count.load(std::memory_order_acquire);
      const uint64_t resume = std::max(next_ + 1, now_written);
      counts_.overruns += resume - next_;
      next_ = resume;
      if (next_ > now_written) break;
    }
    const uint32_t state = ring_->state.load(std::memory_order_acquire);
    if ((state & (kShmSeriesEnded | kShmClosed)) &&
        ring_->write_count.load(std::memory_order_acquire) < next_) {
      // A closed ring whose name is bound again: a new publisher took over.
      const ino_t bound = (state & kShmClosed) ? shm_inode(object_) : 0;
      return bound != 0 && bound != map_->inode() ? ShmRead::kRestarted : ShmRead::kEnded;
    }
    const int64_t now = pipeline::now_ns();
    if (now >= next_check_ns_) {
      next_check_ns_ = now + kCheckIntervalNs;
      bool replaced = false;
      // Images still in this ring are read first; then report the publisher gone or replaced.
      if (publisher_gone_or_replaced(&replaced) &&
          ring_->write_count.load(std::memory_order_acquire) < next_)
        return replaced ? ShmRead::kRestarted : ShmRead::kEnded;
      if (ring_->write_count.load(std::memory_order_acquire) >= next_) continue;
    }
    if (now >= deadline) return ShmRead::kTimeout;
    if (now < spin_until) {
      pipeline::cpu_relax();
      continue;
    }
    const pipeline::ArrivalWindow::Span expected =
        poll_ahead_ ? arrivals_.next() : pipeline::ArrivalWindow::Span{};
    polling_ahead_ = expected.contains(now);
    if (polling_ahead_) {
      sched_yield();  // not a pause: on few cores the publisher may be waiting for this CPU
      continue;
    }
    // Sleep: announce ourselves, then sleep only if nothing changed since (the publisher stores
    // the word before it looks at `waiters`, so one of us sees the other). The publisher clears
    // the flag when it wakes the sleepers; nothing here takes it back, so a reader killed asleep
    // leaves no count behind.
    ring_->waiters.store(1, std::memory_order_seq_cst);
    const uint32_t word = ring_->wake.load(std::memory_order_seq_cst);
    if (ring_->write_count.load(std::memory_order_seq_cst) < next_ &&
        ring_->state.load(std::memory_order_seq_cst) == state)
      if (futex_wait_shared(
              ring_->wake, word,
              std::min({deadline - now, next_check_ns_ - now, kLongestSleepNs,
                        now < expected.from ? expected.from - now : kLongestSleepNs})))
        ++counts_.wakeups;
  }
}

}  // namespace eit::sinks
