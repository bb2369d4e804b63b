#pragma once
// ShmPublisher: the ImageSink for consumers on the same host, `shm://NAME`. Every image goes into
// the next slot of a ring in POSIX shared memory (layout: shm_layout.hpp, docs/protocol.md
// "Shared-memory images"); readers (ShmReader) map it and copy what they want. No socket, no
// I/O thread: an image is visible to a spinning reader as soon as publish() returns, and a
// sleeping reader is woken by one FUTEX_WAKE (only when one sleeps).
//
// Policy: live. publish() never blocks, allocates or logs; a reader slower than the ring is
// lapped (it notices by the slot's sequence and counts its own drops); the publisher and the
// other readers are unaffected. The series message (JSON) is written once at set-up into the
// object; end() sets the series-ended flag and wakes the readers.
//
// Set-up: the constructor creates "/eit.NAME" (throws std::runtime_error / std::invalid_argument
// naming the URI and the value: invalid name, shm_open/ftruncate/mmap failure with errno's text,
// an object of that name whose publisher is still alive). An object left by a publisher that has
// ended or died is replaced; replaced_stale() says so. The destructor marks the ring closed and
// unlinks the name (readers keep their mapping until they let go).
//
// Threads: construct anywhere; begin/publish/tick/end on the sink's thread; stats from any.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::sinks {

class ShmMapping;
struct ShmRingHeader;

struct ShmPublisherOptions {
  std::string uri = "shm://eitstream";  // shm://NAME
  uint32_t slots = 256;                 // ring length (images a reader may lag behind)
  SeriesInfo series;                    // stream, series id (0: random), description
};

class ShmPublisher final : public pipeline::ImageSink {
 public:
  ShmPublisher(const recon::Model& model, ShmPublisherOptions options);
  ~ShmPublisher() override;
  ShmPublisher(const ShmPublisher&) = delete;
  ShmPublisher& operator=(const ShmPublisher&) = delete;

  const std::string& uri() const noexcept { return uri_; }  // "shm://NAME"
  uint64_t series_id() const noexcept { return options_.series.series_id; }
  // Set-up note: "replaced a stale ring left by process 123 (ended)", or empty.
  const std::string& replaced_stale() const noexcept { return replaced_; }

  std::string_view name() const noexcept override { return "shm"; }
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  // publish() is a copy into the next slot and at most one FUTEX_WAKE: it never waits for a
  // reader, so the pipeline calls it on the producing thread (no queue, no thread wake-up).
  bool inline_safe() const noexcept override { return true; }
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;

 private:
  void wake() noexcept;
  void wake_sleepers() noexcept;

  ShmPublisherOptions options_;
  std::string uri_, object_, replaced_;
  std::unique_ptr<ShmMapping> map_;
  ShmRingHeader* ring_ = nullptr;
  std::byte* slots_ = nullptr;
  size_t slot_bytes_ = 0, payload_bytes_ = 0;
  uint64_t written_ = 0;  // publish() side only
  ImageHeader header_template_;
  std::atomic<uint64_t> sent_{0};
};

}  // namespace eit::sinks
