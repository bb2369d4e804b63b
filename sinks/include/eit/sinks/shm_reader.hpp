#pragma once
// ShmReader: the consumer side of `shm://NAME` (ShmPublisher; layout in shm_layout.hpp). Attaches
// to the ring by name, then next() hands over images one by one, in order, each copied out of its
// slot and validated by the slot's seqlock: a copy the publisher overwrote meanwhile is never
// returned. A reader that falls more than the ring's length behind is lapped: it skips to the
// newest image and counts the ones it missed in counts().overruns (the publisher never waits).
//
// Waiting: spin (busy-poll the ring; a core per reader, lowest latency) or balanced (spin
// spin_ns, then sleep on the ring's shared futex until the publisher's next image; on a host
// with at least kPollAheadMinCpus CPUs, when images come paced and slowly (≤ 140 frames/s), also
// poll, yielding, from 80 µs before to 60 µs after the next one's expected publish time, so it
// finds the reader awake: pipeline::ArrivalWindow. With fewer CPUs the polling reader takes the
// CPU the pipeline needs for that very frame: measured on 2 cores, end to end p50 +23 µs).
//
// Set-up errors throw std::runtime_error naming the URI and the value: no such ring, not an
// eitstream ring (magic), another layout version, a size that disagrees with the header.
// Threads: one thread per reader. next() allocates nothing.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eit/pipeline/arrival_window.hpp"
#include "eit/sinks/image_header.hpp"

namespace eit::sinks {

class ShmMapping;
struct ShmRingHeader;

enum class ShmWaitMode { kSpin, kBalanced };

struct ShmReaderOptions {
  ShmWaitMode wait = ShmWaitMode::kBalanced;
  int64_t spin_ns = 20'000;  // balanced: how long to spin before sleeping
};

enum class ShmRead {
  kImage,      // header()/payload() hold the next image
  kTimeout,    // nothing new within the timeout
  kEnded,      // the series ended (or the publisher closed or died) and every image was read
  kRestarted,  // a new publisher now owns the name: attach again (a new ShmReader)
};

struct ShmReaderCounts {
  uint64_t images = 0;       // images returned
  uint64_t overruns = 0;     // images lapped by the publisher before this reader got to them
  uint64_t torn = 0;         // copies discarded because the publisher overwrote the slot meanwhile
  uint64_t wakeups = 0;      // sleeps ended by the publisher's FUTEX_WAKE (balanced mode)
  uint64_t met_polling = 0;  // images found while polling around their expected time (balanced)
};

class ShmReader {
 public:
  static constexpr unsigned kPollAheadMinCpus = 4;

  // Attaches; the first image next() returns is the first one published after this.
  explicit ShmReader(std::string_view uri, ShmReaderOptions options = {});
  ~ShmReader();
  ShmReader(const ShmReader&) = delete;
  ShmReader& operator=(const ShmReader&) = delete;

  // Retries until the publisher has created the ring (or timeout_ms passed: throws the last
  // error). For a reader started before its publisher.
  static std::unique_ptr<ShmReader> attach_when_ready(std::string_view uri, int timeout_ms,
                                                      ShmReaderOptions options = {});

  // Waits up to timeout_ns for the next image.
  ShmRead next(int64_t timeout_ns);

  const ImageHeader& header() const noexcept { return header_; }
  std::span<const float> payload() const noexcept { return payload_; }
  uint64_t number() const noexcept { return next_ - 1; }  // the ring's number of that image
  const ShmReaderCounts& counts() const noexcept { return counts_; }

  const std::string& uri() const noexcept { return uri_; }
  const std::string& series_json() const noexcept { return series_json_; }
  uint64_t series_id() const noexcept;
  uint32_t slot_count() const noexcept;
  uint64_t published() const noexcept;  // images the publisher has written so far
  bool series_ended() const noexcept;   // end() was called (images may remain to be read)
  // A publisher process owns the ring and has neither ended the series nor closed the ring: false
  // for a ring left behind by a publisher that was killed.
  bool publisher_alive() const noexcept;
  // The name is gone or bound to another object (a new publisher): attach again to follow it.
  bool name_rebound() const noexcept;

 private:
  enum class Slot { kRead, kNotYet, kLapped };
  Slot try_read(uint64_t n) noexcept;
  bool publisher_gone_or_replaced(bool* replaced) noexcept;

  std::string uri_, object_, series_json_;
  ShmReaderOptions options_;
  std::unique_ptr<ShmMapping> map_;
  ShmRingHeader* ring_ = nullptr;
  const std::byte* slots_ = nullptr;
  uint64_t next_ = 1;
  int64_t next_check_ns_ = 0;
  ImageHeader header_{};
  std::vector<float> payload_;
  ShmReaderCounts counts_;
  bool poll_ahead_ = false;           // balanced, and CPUs to spare (kPollAheadMinCpus)
  pipeline::ArrivalWindow arrivals_;  // publish stamps of the images read
  bool polling_ahead_ = false;        // in the expected-arrival window when the image came
  bool slack_set_ = false;            // this thread's timer slack lowered (first next())
};

}  // namespace eit::sinks
