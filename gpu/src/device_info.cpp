// cuda_available() and cuda_device_description(): safe on machines without a GPU or driver.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "eit/gpu/cuda_backend.hpp"

namespace eit::gpu {

bool cuda_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why)
      *why = fmt::format("cudaGetDeviceCount: {}: {}", cudaGetErrorName(status),
                         cudaGetErrorString(status));
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  if (count == 0) {
    if (why) *why = "cudaGetDeviceCount found 0 devices";
    return false;
  }
  if (why) why->clear();
  return true;
}

std::string cuda_device_description() {
  std::string why;
  if (!cuda_available(&why)) return "no CUDA device: " + why;
  int device = 0, driver = 0, runtime = 0;
  cudaGetDevice(&device);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "cudaGetDeviceProperties failed";
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return fmt::format(
      "{}, sm_{}{}, {} SMs, {:.1f} GiB ({:.1f} free), L2 {} MB, PCIe {:02x}:{:02x}, driver "
      "{}.{}, runtime {}.{}",
      prop.name, prop.major, prop.minor, prop.multiProcessorCount, total_bytes / kGiB,
      free_bytes / kGiB, prop.l2CacheSize >> 20, prop.pciBusID, prop.pciDeviceID, driver / 1000,
      (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
}

}  // namespace eit::gpu
