#pragma once
// Plain types shared by the host code and the kernels: the model as the device holds it and one
// frame's descriptor. Layout: H is n_out rows of `ld` elements of H's type (float, bf16 or fp16),
// row-major, ld = n_meas rounded up to 8 with zero padding, so each row starts 16-byte aligned;
// v_ref and weight hold ld floats (padding 0). Addresses are device addresses (device memory or
// mapped host memory).
#include <cstdint>

namespace eit::gpu {

inline constexpr int kThreads = 256;
inline constexpr uint32_t kBadFrame = 1u;  // == pipeline::kFlagNonFinite

struct alignas(16) FrameDesc {  // 32 bytes: descriptors in an array stay 16-byte aligned
  const float* values;          // n_meas floats (device address)
  float* image;                 // n_out floats (device address)
  uint32_t flags;               // kBadFrame: write zeros
  uint32_t pad;
};

struct DeviceModel {
  const void* H;
  const float* v_ref;  // v_ref = v_ref + v_ref_lo (a float pair: double accuracy)
  const float* v_ref_lo;
  const float* weight;
  int n_out;
  int n_meas;
  int ld;
};

// How a launched batch signals completion: the last block to finish (device counter) writes
// `seq` to `done`, a word in mapped host memory the host polls (no event query per frame).
struct Completion {
  uint32_t* counter;        // device memory, 0 between launches
  volatile uint64_t* done;  // device address of mapped host memory
  uint64_t seq;
};

// Rows per block, a multiple of 4, so that `blocks` blocks cover n_out rows.
inline int rows_per_block(int n_out, int blocks) {
  const int r = (n_out + blocks - 1) / blocks;
  return (r + 3) / 4 * 4;
}

}  // namespace eit::gpu
