#pragma once
// Internal: runs fn(tile) for every tile in [0, tiles) over up to `threads` std::threads (≤ 0 →
// every core), handing tiles out in order from a shared counter. The caller fixes what a tile is
// (a fixed range of rows or columns, never derived from the thread count) and each tile writes
// only its own part of the output, so the result does not depend on the number of threads or on
// which thread took which tile. Thread 0 is the caller; threads that cannot be started leave
// their share to the others. Threads are started and joined per call. If fn throws (bad_alloc of
// a tile's scratch), the other tiles stop being handed out and the first exception is rethrown
// on the caller's thread after the join.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <Eigen/Core>

#include "gn_dense.hpp"

namespace eit::recon::detail {

template <class Fn>
void run_tiles(Eigen::Index tiles, int threads, Fn&& fn) {
  const int team = static_cast<int>(std::min<Eigen::Index>(tiles, resolve_threads(threads)));
  std::atomic<Eigen::Index> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto worker = [&] {
    try {
      for (Eigen::Index t = next.fetch_add(1); t < tiles; t = next.fetch_add(1)) fn(t);
    } catch (...) {
      next.store(tiles);  // no more tiles for anyone
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < team; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // the counter hands the rest to the threads already running
    }
  }
  worker();
  for (std::thread& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace eit::recon::detail
