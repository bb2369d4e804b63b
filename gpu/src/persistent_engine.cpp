// PersistentEngine: posting frames to the persistent kernel and collecting them.
#include "persistent_engine.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "cuda_check.hpp"
#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eit::gpu {
namespace {
constexpr long long kHotNs = 20'000'000;  // poll without sleeping for 20 ms after a frame
constexpr int64_t kSpinBeforeBackoffNs = 2'000'000;  // host: spin 2 ms, then back off

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}
}  // namespace

PersistentEngine::PersistentEngine(Precision precision, const DeviceModel& model, int blocks,
                                   double idle_exit_ms)
    : precision_(precision),
      model_(model),
      blocks_(blocks),
      idle_exit_ns_(static_cast<long long>(idle_exit_ms * 1e6)) {
  rows_per_block_ = rows_per_block(model.n_out, blocks);
  blocks_ = (model.n_out + rows_per_block_ - 1) / rows_per_block_;
  set_persistent_smem_limit(persistent_smem_bytes(model_, rows_per_block_));
  EIT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  void* p = nullptr;
  EIT_CUDA(cudaHostAlloc(&p, sizeof(Mailbox), cudaHostAllocMapped | cudaHostAllocPortable));
  mailbox_ = static_cast<Mailbox*>(p);
  std::memset(p, 0, sizeof(Mailbox));
  EIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mailbox_dev_), p, 0));
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
  PersistentParams params{model_,    mailbox_dev_,    state_, dv_,
                          start_seq, rows_per_block_, kHotNs, idle_exit_ns_};
  launch_persistent(precision_, params, blocks_, stream_);
  running_ = true;
  ++launches_;
}

void PersistentEngine::wait_exit() {
  EIT_CUDA(cudaStreamSynchronize(stream_));
  running_ = false;
}

uint64_t PersistentEngine::post(const FrameDesc& frame) {
  const uint64_t seq = ++posted_;
  if (!running_) launch(mailbox_->done_seq + 1);
  PostedFrame& e = mailbox_->ring[seq % kRing];
  e.values = frame.values;
  e.image_flags = reinterpret_cast<uintptr_t>(frame.image) | (frame.flags & kBadFrame);
  std::atomic_thread_fence(std::memory_order_release);  // payload before the tags
  e.tag_b = seq;
  std::atomic_thread_fence(std::memory_order_release);
  e.tag_a = seq;
  std::atomic_thread_fence(std::memory_order_seq_cst);
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
