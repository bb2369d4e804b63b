#include "eit/bench/host_noise.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/thread_pin.hpp"

namespace eit::bench {

namespace {

// The probing thread: pin, wait for the others, then read the clock until `span_ns` has passed.
void probe_one(CpuNoise& out, int64_t span_ns, const std::atomic<bool>& go,
               std::atomic<int>& ready) {
  out.pin_error = pipeline::pin_this_thread(out.cpu);
  ready.fetch_add(1, std::memory_order_release);
  while (!go.load(std::memory_order_acquire)) {
  }
  if (out.pin_error != 0) return;  // unpinned, the numbers would describe some other CPU
  StallCounts& s = out.stalls;
  const int64_t first = pipeline::now_ns();
  int64_t previous = first;
  while (previous - first < span_ns) {
    const int64_t now = pipeline::now_ns();
    s.add_gap(now - previous);
    previous = now;
  }
  s.span_ns = previous - first;
}

}  // namespace

void StallCounts::add_gap(int64_t gap_ns) noexcept {
  ++reads;
  if (gap_ns < kLostFromNs) return;
  ++lost_gaps;
  lost_ns += gap_ns;
  longest_ns = std::max(longest_ns, gap_ns);
  if (gap_ns >= 10'000) ++ge_10us;
  if (gap_ns >= 50'000) ++ge_50us;
  if (gap_ns >= 100'000) ++ge_100us;
}

HostNoise probe_host_noise(const std::vector<int>& cpus, double seconds) {
  HostNoise noise;
  noise.seconds = seconds;
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (int c : sorted) noise.cpus.push_back({c, 0, {}});
  const auto span_ns = static_cast<int64_t>(seconds * 1e9);
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  threads.reserve(noise.cpus.size());
  try {
    for (auto& c : noise.cpus)
      threads.emplace_back([&c, span_ns, &go, &ready] { probe_one(c, span_ns, go, ready); });
  } catch (...) {  // no thread to be had: release the ones waiting for the start, then report
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    throw;
  }
  // Start together once every thread sits on its CPU, so the CPUs are measured all busy at once.
  while (ready.load(std::memory_order_acquire) < static_cast<int>(threads.size()))
    std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  return noise;
}

std::vector<int> pinned_cpus_of(const CpuRequest& request, const std::vector<int>& allowed) {
  if (!request.any()) return {};
  std::vector<std::string> threads = threads_to_pin(true, true);
  if (request.automatic && allowed.size() < threads.size()) threads.resize(allowed.size());
  std::vector<int> out;
  for (const auto& t : assign_cpus(request, threads, allowed)) out.push_back(t.cpu);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace eit::bench
