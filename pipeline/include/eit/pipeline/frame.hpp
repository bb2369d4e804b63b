#pragma once
// FrameSlot: one frame's measurements, its image and its timestamps, travelling through every stage.
// Slots live in a FramePool; stages pass pointers to them through SPSC queues. The values and image
// buffers belong to the pool (pinned host memory when the CUDA backend is active).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace eit::pipeline {

// Stages that stamp a frame, in the order a frame passes them. Each stamp is now_ns().
enum class Stage : uint8_t {
  kScheduled = 0,  // when the source meant to emit it (open-loop pacing); = kReceived otherwise
  kReceived,       // decoded from the source
  kEnqueued,       // pushed onto the reconstructor's queue
  kDequeued,       // popped by the reconstructor stage
  kSubmitted,      // handed to the backend (CPU or GPU)
  kDone,           // image complete on the host
  kPublished,      // sent by the sink
  kCount
};
inline constexpr size_t kStageCount = static_cast<size_t>(Stage::kCount);
std::string_view stage_name(Stage s) noexcept;

// Per-frame condition bits; the per-frame path reports through these instead of throwing.
enum FrameFlag : uint32_t {
  kFlagNonFinite = 1u << 0,     // a measurement was NaN/Inf: the image is not computed (zeros)
  kFlagReference = 1u << 1,     // this frame was averaged into a newly captured reference
  kFlagGapBefore = 1u << 2,     // the source saw a sequence gap before this frame
  kFlagBackendFallback = 1u << 3,  // computed by the fallback backend after a backend fault
  kFlagDiverged = 1u << 4,  // absolute imaging: the iteration diverged (NaN, σ ≤ 0, singular)
  kFlagImageOverflow = 1u << 5,  // finite input, non-finite image (float32 overflow, e.g. 1e38
                                 // values): the image is zeroed and kFlagNonFinite set as well
};

struct FrameSlot {
  uint64_t seq = 0;              // source sequence number (gaps mean frames lost upstream)
  int64_t device_time_ns = 0;    // the device's own clock, when it sends one; else 0
  std::array<int64_t, kStageCount> stamp_ns{};
  uint32_t flags = 0;            // FrameFlag bits
  uint32_t dropped_before = 0;   // frames the pipeline dropped since the previous delivered one
  uint32_t index = 0;            // position in the pool
  float* values = nullptr;       // n_meas floats, in the model's measurement order
  float* image = nullptr;        // n_out floats

  void stamp(Stage s, int64_t t_ns) noexcept { stamp_ns[static_cast<size_t>(s)] = t_ns; }
  int64_t stamp(Stage s) const noexcept { return stamp_ns[static_cast<size_t>(s)]; }
};

}  // namespace eit::pipeline
