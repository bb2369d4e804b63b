#pragma once
// The shared-memory image ring of `shm://NAME` (docs/protocol.md, "Shared-memory images"): one
// POSIX shared-memory object "/eit.NAME" that a ShmPublisher creates and any number of ShmReaders
// on the same host map read-only. Little-endian, byte offsets fixed by the static_asserts below.
//
//   [ShmRingHeader, 256 B][series JSON, series_json_bytes][pad to 64][slot 0][slot 1]…[slot N-1]
//   slot k: [ShmSlotHeader, 64 B][ImageHeader, 112 B][float32 payload, payload_bytes][pad to 64]
//
// Image number n (1, 2, 3…) lives in slot (n-1) % slot_count. A slot's `sequence` is a seqlock
// that also names the image: 2n-1 while image n is being written, 2n once it is complete. A reader
// that wants image n copies the slot when sequence == 2n and keeps the copy only if sequence is
// still 2n afterwards; a larger value means the publisher has lapped it (overrun: count a drop).
// `write_count` is the number of the newest complete image. `wake` is a 32-bit futex word (shared,
// not FUTEX_PRIVATE) set to the low 32 bits of write_count after each image. `waiters` is a flag a
// reader sets before it sleeps; the publisher calls FUTEX_WAKE only when it finds it set, and
// clears it (so a reader killed asleep costs one wake-up, not one per image).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "eit/sinks/image_header.hpp"

namespace eit::sinks {

inline constexpr uint32_t kShmMagic = 0x53544945;  // bytes "EITS"
inline constexpr uint16_t kShmLayoutVersion = 1;
inline constexpr size_t kShmAlign = 64;  // a cache line: slots never share one

// State bits (ShmRingHeader::state).
inline constexpr uint32_t kShmSeriesEnded = 1u << 0;  // end() was called: no more images
inline constexpr uint32_t kShmClosed = 1u << 1;       // the publisher is gone (destroyed)

struct ShmRingHeader {
  std::atomic<uint32_t> magic;  // 0: kShmMagic, stored last (release) once all is set
  uint16_t version;             // 4: kShmLayoutVersion
  uint16_t header_bytes;        // 6: sizeof(ShmRingHeader) = 256
  uint32_t slot_count;          // 8
  uint32_t payload_bytes;       // 12: float32 bytes per image
  uint64_t slot_bytes;          // 16: stride between slots (multiple of 64)
  uint64_t slots_offset;        // 24: offset of slot 0 (multiple of 64)
  uint64_t total_bytes;         // 32: size of the whole object
  uint64_t series_id;           // 40: same as every ImageHeader::series_id
  uint32_t series_json_offset;  // 48: = 256
  uint32_t series_json_bytes;   // 52: the series message (docs/protocol.md), UTF-8 JSON
  uint32_t publisher_pid;       // 56: to tell a stale object from a live one
  std::atomic<uint32_t> state;  // 60: kShmSeriesEnded | kShmClosed
  alignas(64) std::atomic<uint64_t> write_count;  // 64: number of the newest complete image
  std::atomic<uint32_t> wake;     // 72: futex word, = uint32(write_count) after each image
  std::atomic<uint32_t> waiters;  // 76: non-zero: a reader sleeps (or is about to) on `wake`
  uint64_t reserved[22];          // 80…255: zero
};
static_assert(sizeof(ShmRingHeader) == 256);
static_assert(offsetof(ShmRingHeader, write_count) == 64);
static_assert(offsetof(ShmRingHeader, wake) == 72);
static_assert(offsetof(ShmRingHeader, state) == 60);
static_assert(std::atomic<uint32_t>::is_always_lock_free &&
              std::atomic<uint64_t>::is_always_lock_free);

struct ShmSlotHeader {
  std::atomic<uint64_t> sequence;  // 0: seqlock, 2n-1 writing image n, 2n complete
  uint64_t reserved[7];            // 8…63: zero
};
static_assert(sizeof(ShmSlotHeader) == 64);
inline constexpr size_t kShmImageOffset = sizeof(ShmSlotHeader);                    // 64
inline constexpr size_t kShmPayloadOffset = kShmImageOffset + sizeof(ImageHeader);  // 176

inline constexpr size_t shm_round_up(size_t n) {
  return (n + kShmAlign - 1) / kShmAlign * kShmAlign;
}

// Offsets and sizes of a ring, computed the same way by the publisher and the readers.
struct ShmGeometry {
  size_t slot_bytes, slots_offset, total_bytes;
};
inline ShmGeometry shm_geometry(uint32_t slot_count, uint32_t payload_bytes,
                                uint32_t series_json_bytes) {
  ShmGeometry g;
  g.slot_bytes = shm_round_up(kShmPayloadOffset + payload_bytes);
  g.slots_offset = shm_round_up(sizeof(ShmRingHeader) + series_json_bytes);
  g.total_bytes = g.slots_offset + g.slot_bytes * slot_count;
  return g;
}

// "shm://NAME" → NAME; the URI without the scheme is accepted too. Throws std::invalid_argument
// naming the value unless NAME is 1…200 characters of [A-Za-z0-9._-].
std::string shm_name_of(std::string_view uri);
// The POSIX shared-memory object name of NAME: "/eit.NAME" (on Linux, /dev/shm/eit.NAME).
std::string shm_object_name(std::string_view name);
bool is_shm_uri(std::string_view uri) noexcept;

}  // namespace eit::sinks
