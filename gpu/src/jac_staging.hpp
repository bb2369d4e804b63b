#pragma once
// Large host ↔ device copies through the context's pinned ring (jac_solve_context.hpp): the host
// copies chunk i into a pinned slot while the copy engine moves chunk i − 1, so the transfer runs
// at the slower of memcpy and PCIe instead of the driver's serial pageable staging; the host
// copy of a chunk is split over up to 8 threads (≥ 4 MiB each). Chunks are
// `chunk` bytes (≤ the slot size; the last one is shorter). Both return once the data is where
// it goes (the stream's earlier work included). Without a ring (pinned memory refused) one
// pageable copy each. Throws std::runtime_error (jac cuda: …).
#include <cstddef>
#include <thread>
#include <vector>

#include "jac_solve_context.hpp"

namespace eit::gpu::detail {

void staged_upload(JacSolveContext& c, void* device, const void* host, size_t bytes, size_t chunk);
void staged_download(JacSolveContext& c, void* host, const void* device, size_t bytes,
                     size_t chunk);

// Touches every page of fresh host memory [p, p + bytes) on up to 4 threads started here, so
// that the download's copy into it does not take the page faults (done while the device works);
// join() or the destructor waits for them. A thread that cannot be started leaves its pages to
// the copy.
class PageToucher {
 public:
  PageToucher(void* p, size_t bytes);
  ~PageToucher() { join(); }
  PageToucher(const PageToucher&) = delete;
  PageToucher& operator=(const PageToucher&) = delete;
  void join();

 private:
  std::vector<std::thread> threads_;
};

}  // namespace eit::gpu::detail
