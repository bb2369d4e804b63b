// PersistentEngine: posting frames to the persistent kernel and collecting them.
#include "persistent_engine.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/reconstructor.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eit::gpu {
namespace {
constexpr long long kHotNs = 20'000'000;  // poll without sleeping for 20 ms after a frame
constexpr int64_t kSpinBeforeBackoffNs = 2'000'000;  // host: spin 2 ms, then back off

// One 16-byte pair of LL words. Each 8-byte word carries its own tag, so the pair need not be
// written atomically; one SSE store is simply the cheapest way to write it.
inline void store_pair(uint64_t* w, uint64_t lo, uint64_t hi) {
#if defined(__x86_64__)
  _mm_store_si128(reinterpret_cast<__m128i*>(w),
                  _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
#else
  reinterpret_cast<volatile uint64_t*>(w)[0] = lo;
  reinterpret_cast<volatile uint64_t*>(w)[1] = hi;
#endif
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}
}  // namespace

PersistentEngine::PersistentEngine(Precision precision, const DeviceModel& model, int blocks,
                                   int cluster_blocks, double idle_exit_ms)
    : precision_(precision),
      model_(model),
      blocks_(blocks),
      idle_exit_ns_(static_cast<long long>(idle_exit_ms * 1e6)),
      ll_words_(ll_entry_words(model.n_meas)) {
  if (model.n_meas > persistent_max_meas())
    throw pipeline::BackendError(
        fmt::format("CUDA backend: the persistent kernel takes at most {} values per frame; the "
                    "model has {} (use mode kLaunch)",
                    persistent_max_meas(), model.n_meas));
  cluster_ = cluster_blocks > 0;
  if (cluster_) {
    rows_per_block_ = rows_per_block(model.n_out, std::min(cluster_blocks, kMaxClusterBlocks));
    const int n = (model.n_out + rows_per_block_ - 1) / rows_per_block_;
    cluster_ =
        prepare_persistent_cluster(precision, n, persistent_smem_bytes(model_, rows_per_block_));
    if (cluster_) blocks_ = n;
  }
  if (!cluster_) {
    rows_per_block_ = rows_per_block(model.n_out, blocks);
    blocks_ = (model.n_out + rows_per_block_ - 1) / rows_per_block_;
    set_persistent_smem_limit(persistent_smem_bytes(model_, rows_per_block_));
  }
  EIT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  void* p = nullptr;
  EIT_CUDA(cudaHostAlloc(&p, sizeof(Mailbox), cudaHostAllocMapped | cudaHostAllocPortable));
  mailbox_ = static_cast<Mailbox*>(p);
  std::memset(p, 0, sizeof(Mailbox));
  EIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mailbox_dev_), p, 0));
  const size_t ll_bytes = size_t{kRing} * ll_words_ * sizeof(uint64_t);
  EIT_CUDA(cudaHostAlloc(&p, ll_bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  ll_ = static_cast<uint64_t*>(p);
  std::memset(p, 0, ll_bytes);  // tag 0: no frame
  void* ll_dev = nullptr;
  EIT_CUDA(cudaHostGetDevicePointer(&ll_dev, p, 0));
  ll_dev_ = static_cast<const uint64_t*>(ll_dev);
  EIT_CUDA(cudaHostAlloc(&p, sizeof(PersistentState), cudaHostAllocDefault));
  state_init_ = static_cast<PersistentState*>(p);
  EIT_CUDA(cudaMalloc(&state_, sizeof(PersistentState)));
  EIT_CUDA(cudaMalloc(&dv_, 2 * model.ld * sizeof(float)));
  EIT_CUDA(cudaMemset(dv_, 0, 2 * model.ld * sizeof(float)));
}

PersistentEngine::~PersistentEngine() {
  stop();
  if (dv_) cudaFree(dv_);
  if (state_) cudaFree(state_);
  if (state_init_) cudaFreeHost(state_init_);
  if (ll_) cudaFreeHost(ll_);
  if (mailbox_) cudaFreeHost(mailbox_);
  if (stream_) cudaStreamDestroy(stream_);
}

void PersistentEngine::launch(uint64_t start_seq) {
  std::memset(state_init_, 0, sizeof(PersistentState));
  state_init_->relay_seq = start_seq - 1;
  state_init_->done_seq = start_seq - 1;
  mailbox_->exiting = 0;
  mailbox_->stop = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  EIT_CUDA(cudaMemcpyAsync(state_, state_init_, sizeof(PersistentState), cudaMemcpyHostToDevice,
                           stream_));
  PersistentParams params{model_, mailbox_dev_, ll_dev_,         ll_words_, state_,
                          dv_,    start_seq,    rows_per_block_, kHotNs,    idle_exit_ns_};
  if (cluster_)
    launch_persistent_cluster(precision_, params, blocks_, stream_);
  else
    launch_persistent(precision_, params, blocks_, stream_);
  running_ = true;
  ++launches_;
}

void PersistentEngine::wait_exit() {
  EIT_CUDA(cudaStreamSynchronize(stream_));
  running_ = false;
}

uint64_t PersistentEngine::post(const float* values, float* image, uint32_t flags) {
  const uint64_t seq = ++posted_;
  if (!running_) launch(mailbox_->done_seq + 1);
  // The entry's previous frame (seq − kRing) is finished: at most kRing − 1 are unfinished.
  uint64_t* w = ll_ + (seq % kRing) * static_cast<size_t>(ll_words_);
  const uint64_t tag = uint64_t{static_cast<uint32_t>(seq)} << 32;
  const int n = model_.n_meas;
  int i = 0;
  for (; i + 1 < n; i += 2)
    store_pair(w + i, tag | std::bit_cast<uint32_t>(values[i]),
               tag | std::bit_cast<uint32_t>(values[i + 1]));
  if (i < n) {
    store_pair(w + i, tag | std::bit_cast<uint32_t>(values[i]), tag);
    i += 2;
  }
  const uint64_t a = reinterpret_cast<uintptr_t>(image) | (flags & kBadFrame);
  store_pair(w + i, tag | (a & 0xffffffffu), tag | (a >> 32));
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the entry before reading `exiting`
  if (mailbox_->exiting) {
    // The kernel is leaving on idle: either it saw this post and drains it, or it did not and
    // we restart it from the first unfinished frame.
    wait_exit();
    if (mailbox_->done_seq < seq) launch(mailbox_->done_seq + 1);
  }
  return seq;
}

bool PersistentEngine::done(uint64_t seq, bool& bad) {
  const uint64_t d = mailbox_->done[seq % kRing];
  if ((d >> 1) != seq) return false;
  if (cluster_) {
    for (int b = 1; b < blocks_; ++b)
      if (mailbox_->block_done[b] < seq) return false;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  bad = (d & 1) != 0;
  return true;
}

bool PersistentEngine::wait(uint64_t seq, bool& bad) {
  const int64_t t0 = pipeline::now_ns();
  uint32_t spins = 0;
  pipeline::Backoff backoff;
  for (;;) {
    if (done(seq, bad)) return true;
    if ((++spins & 4095) == 0) {
      // Liveness: a kernel that ended (idle exit racing our post, or a fault) with this frame
      // unfinished is restarted, or its error reported.
      const cudaError_t s = cudaStreamQuery(stream_);
      if (s == cudaSuccess) {
        running_ = false;
        if (done(seq, bad)) return true;
        launch(mailbox_->done_seq + 1);
      } else if (s != cudaErrorNotReady) {
        check_cuda(s, "cudaStreamQuery(persistent kernel stream)");
      }
    }
    if (pipeline::now_ns() - t0 < kSpinBeforeBackoffNs)
      cpu_relax();
    else
      backoff.pause();
  }
}

bool PersistentEngine::resident() const noexcept {
  return running_ && cudaStreamQuery(stream_) == cudaErrorNotReady;
}

void PersistentEngine::stop() noexcept {
  if (!running_) return;
  mailbox_->stop = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Bounded wait: a kernel that does not stop within 5 s is left to the context's teardown.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (cudaStreamQuery(stream_) == cudaErrorNotReady &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  running_ = false;
}

}  // namespace eit::gpu
