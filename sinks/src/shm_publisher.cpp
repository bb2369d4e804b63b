#include "eit/sinks/shm_publisher.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/sinks/image_header_fill.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "shm_segment.hpp"

namespace eit::sinks {
namespace {

bool process_alive(uint32_t pid) {
  return pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// An object already named `object`: describe why it may be replaced, or throw if its publisher
// is alive.
std::string judge_existing(const std::string& uri, const std::string& object) {
  bool absent = false;
  ShmMapping old;
  try {
    old = open_shm(object, false, &absent);
  } catch (const std::runtime_error& e) {  // e.g. 0 bytes: a publisher died while creating it
    return fmt::format("replaced an object that is not a ring ({})", e.what());
  }
  if (absent) return {};
  const auto* h = reinterpret_cast<const ShmRingHeader*>(old.data());
  if (h->magic.load(std::memory_order_acquire) != kShmMagic)
    return "replaced an object without an eitstream ring header";
  const uint32_t state = h->state.load(std::memory_order_acquire);
  if (!(state & kShmClosed) && process_alive(h->publisher_pid))
    throw std::runtime_error(fmt::format(
        "{}: in use by a running publisher (process {}); choose another name or stop it", uri,
        h->publisher_pid));
  return fmt::format("replaced a stale ring left by process {} ({})", h->publisher_pid,
                     state & kShmClosed ? "closed" : "no longer running");
}

}  // namespace

ShmPublisher::ShmPublisher(const recon::Model& model, ShmPublisherOptions options)
    : options_(std::move(options)) {
  const std::string name = shm_name_of(options_.uri);
  uri_ = "shm://" + name;
  object_ = shm_object_name(name);
  if (options_.slots < 2)
    throw std::invalid_argument(
        fmt::format("{}: ring of {} slots; expected at least 2", uri_, options_.slots));
  if (options_.series.series_id == 0) options_.series.series_id = random_series_id();
  options_.series.policy = "live";
  payload_bytes_ = model.n_out() * sizeof(float);
  const std::string json = series_json(model, options_.series);
  const ShmGeometry g = shm_geometry(options_.slots, static_cast<uint32_t>(payload_bytes_),
                                     static_cast<uint32_t>(json.size()));
  bool exists = false;
  map_ = std::make_unique<ShmMapping>(create_shm(object_, g.total_bytes, &exists));
  if (exists) {
    replaced_ = judge_existing(uri_, object_);
    ::shm_unlink(object_.c_str());
    *map_ = create_shm(object_, g.total_bytes, &exists);
    if (exists)
      throw std::runtime_error(fmt::format(
          "{}: another publisher created {} while this one replaced it", uri_, object_));
  }
  std::byte* base = map_->data();
  ring_ = reinterpret_cast<ShmRingHeader*>(base);  // zero-filled by ftruncate
  ring_->version = kShmLayoutVersion;
  ring_->header_bytes = sizeof(ShmRingHeader);
  ring_->slot_count = options_.slots;
  ring_->payload_bytes = static_cast<uint32_t>(payload_bytes_);
  ring_->slot_bytes = g.slot_bytes;
  ring_->slots_offset = g.slots_offset;
  ring_->total_bytes = g.total_bytes;
  ring_->series_id = options_.series.series_id;
  ring_->series_json_offset = sizeof(ShmRingHeader);
  ring_->series_json_bytes = static_cast<uint32_t>(json.size());
  ring_->publisher_pid = static_cast<uint32_t>(::getpid());
  std::memcpy(base + sizeof(ShmRingHeader), json.data(), json.size());
  slots_ = base + g.slots_offset;
  slot_bytes_ = g.slot_bytes;
  header_template_ = image_header_template(model, options_.series.series_id);
  ring_->magic.store(kShmMagic, std::memory_order_release);  // readers may attach from here on
}

ShmPublisher::~ShmPublisher() {
  if (!ring_) return;
  ring_->state.fetch_or(kShmClosed, std::memory_order_acq_rel);
  wake();
  ::shm_unlink(object_.c_str());
}

void ShmPublisher::wake() noexcept {
  // A state change: flip the word so a reader about to sleep on its old value does not.
  ring_->wake.fetch_xor(0x80000000u, std::memory_order_seq_cst);
  wake_sleepers();
}

// Wakes every reader asleep on the word and clears the flag they set: a reader that sleeps again
// sets it again, and one that was killed asleep costs one wake-up, not one per image for ever.
void ShmPublisher::wake_sleepers() noexcept {
  if (ring_->waiters.load(std::memory_order_seq_cst) != 0 &&
      ring_->waiters.exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake_shared(ring_->wake);
}

void ShmPublisher::publish(const pipeline::FrameSlot& frame) noexcept {
  const uint64_t n = ++written_;
  std::byte* slot = slots_ + ((n - 1) % options_.slots) * slot_bytes_;
  auto* seqlock = reinterpret_cast<ShmSlotHeader*>(slot);
  // Seqlock: odd while writing; the fence keeps the payload stores after the odd mark.
  seqlock->sequence.store(2 * n - 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const ImageHeader h = image_header_for(header_template_, frame);
  std::memcpy(slot + kShmImageOffset, &h, sizeof h);
  std::memcpy(slot + kShmPayloadOffset, frame.image, payload_bytes_);
  seqlock->sequence.store(2 * n, std::memory_order_release);
  ring_->write_count.store(n, std::memory_order_release);
  // Dekker with the reader (ShmReader::wait): either it sees the new word or we see its flag.
  ring_->wake.store(static_cast<uint32_t>(n), std::memory_order_seq_cst);
  wake_sleepers();
  sent_.store(sent_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void ShmPublisher::end() noexcept {
  ring_->state.fetch_or(kShmSeriesEnded, std::memory_order_acq_rel);
  wake();
}

pipeline::SinkStats ShmPublisher::stats() const noexcept {
  return {sent_.load(std::memory_order_relaxed), 0, 0};
}

}  // namespace eit::sinks
