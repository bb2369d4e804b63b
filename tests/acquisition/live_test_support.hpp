#pragma once
// Helpers for the transport tests: a slot with its own buffer, test frames with known values,
// and a reader that collects frames from a Source with a bounded wait.
#include <chrono>
#include <cstdint>
#include <vector>

#include "eit/pipeline/source.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::test {

struct OwnedSlot {
  explicit OwnedSlot(size_t n) : values(n) { slot.values = values.data(); }
  std::vector<float> values;
  pipeline::FrameSlot slot;
};

struct ReceivedFrame {
  uint64_t seq = 0;
  uint32_t flags = 0;
  int64_t received_ns = 0;
  std::vector<float> values;
};

// Frame k of a test stream: distinct, exactly representable values.
inline std::vector<float> test_frame(uint64_t k, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(k) * 0.5f + static_cast<float>(i) * 0.25f - 7.0f;
  return v;
}

inline recon::Protocol adjacent16() { return recon::make_protocol({}); }

// Reads until `count` frames arrived, the source ends or stops, or `budget` passes.
inline std::vector<ReceivedFrame> read_frames(
    eit::pipeline::Source& source, size_t count,
    std::chrono::milliseconds budget = std::chrono::seconds(10)) {
  std::vector<ReceivedFrame> out;
  OwnedSlot s(source.n_values());
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    const auto status = source.read(s.slot, std::chrono::milliseconds(100));
    if (status == eit::pipeline::ReadStatus::kFrame) {
      out.push_back({s.slot.seq, s.slot.flags, s.slot.stamp(pipeline::Stage::kReceived), s.values});
    } else if (status != eit::pipeline::ReadStatus::kTimeout) {
      break;
    }
  }
  return out;
}

}  // namespace eit::test
