#pragma once
// Shared by the shm:// tests: a unique ring name per test, frames whose image says which frame it
// is in every value (so a copy mixing two images is caught), and the check of such an image.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <doctest/doctest.h>
#include "eit/pipeline/frame.hpp"

#include "eit/sinks/image_header.hpp"
#include "eit/sinks/shm_layout.hpp"

namespace eit::test {

inline std::string shm_test_uri(const char* tag) {
  return fmt::format("shm://eit-test-{}-{}", ::getpid(), tag);
}

// Value j of the image of frame `seq`: exact in float32; 64 distinct images, so that a copy mixing
// two images the ring holds at once (at most 64 slots apart in the tests) is caught.
inline float shm_pattern(uint64_t seq, size_t j) {
  return static_cast<float>(((seq % 64) * 7919 + j * 31) % 1000003);
}

// Frame slots whose image follows shm_pattern for their seq (the 64 images computed up front, so
// publishing one costs no more than the publisher's own copy).
struct PatternFrame {
  std::vector<std::vector<float>> images;
  pipeline::FrameSlot slot;
  explicit PatternFrame(size_t n) : images(64, std::vector<float>(n)) {
    for (uint64_t s = 0; s < 64; ++s)
      for (size_t j = 0; j < n; ++j) images[s][j] = shm_pattern(s, j);
  }
  pipeline::FrameSlot& set(uint64_t seq) {
    slot.image = images[seq % 64].data();
    slot.seq = seq;
    slot.stamp(pipeline::Stage::kReceived, static_cast<int64_t>(seq) + 1000);
    slot.stamp(pipeline::Stage::kPublished, static_cast<int64_t>(seq) + 2000);
    return slot;
  }
};

// True when header and payload are one whole image of frame h.seq.
inline bool shm_image_intact(const sinks::ImageHeader& h, std::span<const float> payload) {
  if (h.magic != sinks::kImageMagic || h.count != payload.size() ||
      h.t_acquired_ns != static_cast<int64_t>(h.seq) + 1000)
    return false;
  for (size_t j = 0; j < payload.size(); ++j)
    if (payload[j] != shm_pattern(h.seq, j)) return false;
  return true;
}

// The ring header of `uri`'s object, mapped read-write so a test can spoil it.
struct RawRing {
  void* base = MAP_FAILED;
  size_t bytes = 0;
  explicit RawRing(const std::string& uri) {
    const int fd = shm_open(sinks::shm_object_name(sinks::shm_name_of(uri)).c_str(), O_RDWR, 0);
    REQUIRE(fd >= 0);
    bytes = sizeof(sinks::ShmRingHeader);
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    REQUIRE(base != MAP_FAILED);
  }
  ~RawRing() { munmap(base, bytes); }
  sinks::ShmRingHeader* operator->() { return static_cast<sinks::ShmRingHeader*>(base); }
};

}  // namespace eit::test
