#pragma once
// Element type of H on the device; products always accumulate in float32.
//   kFloat32: float32 throughout (relative error ~1e-6 against float64).
//   kBf16 / kFp16: half the bytes per frame; batches also round the measurement differences to
//   that type. Measured accuracy in docs/gpu-notes.md.
namespace eit::gpu {

enum Precision { kFloat32, kBf16, kFp16 };

}  // namespace eit::gpu
