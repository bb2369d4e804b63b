#pragma once
// The naive reference the backend is measured against: H in device memory, one stream, and per
// frame copy up → cublasSgemv → copy down → synchronize (or the same three steps as a CUDA
// graph); per batch copy up → cublasSgemm → copy down → synchronize. Pinned host buffers.
// Also the PCIe copy bandwidths, measured in the same run.
#include <cstddef>
#include <memory>

namespace eit::gpu::bench {

class NaiveReference {
 public:
  NaiveReference(const float* H, size_t n_out, size_t n_meas, size_t max_batch);
  ~NaiveReference();
  NaiveReference(const NaiveReference&) = delete;
  NaiveReference& operator=(const NaiveReference&) = delete;

  float* values(size_t i);  // pinned staging, frame i of max_batch
  float* image(size_t i);
  void frame();        // frame 0: copy, Sgemv, copy, synchronize
  void frame_graph();  // the same as one CUDA graph launch + synchronize
  void batch(size_t n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct Bandwidth {
  double h2d_gbs = 0, d2h_gbs = 0;
};
Bandwidth measure_pcie_bandwidth(size_t bytes = size_t{256} << 20);

// Frames/s of the images alone coming down: batches of `batch` images of image_bytes, one
// cudaMemcpyAsync each, on in_flight streams, into mapped host memory like the backend's frame
// memory. What the backend's batched path would reach if nothing but its image copy cost time.
double copy_down_rate(size_t image_bytes, size_t batch, size_t in_flight, double seconds);

}  // namespace eit::gpu::bench
