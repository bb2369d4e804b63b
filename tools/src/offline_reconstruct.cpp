// Three-thread offline reconstruction (see offline_reconstruct.hpp).
#include "offline_reconstruct.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/frame_pool.hpp"

namespace eit::cli {
namespace {

// A bounded FIFO of batch numbers between two threads. Its capacity is the number of batches, so
// push() never waits; pop() waits for an item and returns false once the channel is closed and
// empty (or the job is cancelled).
class BatchChannel {
 public:
  explicit BatchChannel(size_t capacity) : ring_(capacity) {}
  void push(size_t v) {
    {
      std::lock_guard lock(mutex_);
      ring_[(head_ + size_) % ring_.size()] = v;
      ++size_;
    }
    cv_.notify_one();
  }
  bool pop(size_t& v) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return size_ > 0 || closed_; });
    if (size_ == 0) return false;
    v = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --size_;
    return true;
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  void cancel() {  // pop() returns false from now on, even with items left
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      size_ = 0;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<size_t> ring_;
  size_t head_ = 0, size_ = 0;
  bool closed_ = false;
};

struct Batch {
  size_t first = 0;  // first pool slot
  size_t count = 0;  // frames filled
};

double seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// CPU time of the calling thread (ns): what a thread cost, whatever else ran on the machine.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

OfflineResult reconstruct_offline(acquisition::RecordingReader& reader,
                                  pipeline::Reconstructor& backend,
                                  sinks::Hdf5ImageRecorder& recorder, size_t batch,
                                  ProgressReport& progress) {
  const auto& info = reader.info();
  const size_t n_meas = backend.n_meas(), n_out = backend.n_out();
  // A synchronous backend (the CPU) takes each batch in pieces of its max_batch (a GEMM that
  // stays in cache); an asynchronous one (CUDA) takes whole batches, several in flight.
  const bool sync = backend.synchronous();
  const size_t piece = std::max<size_t>(1, backend.max_batch());
  batch = sync ? std::max<size_t>(1, batch) : std::clamp<size_t>(batch, 1, piece);
  // One batch being read, one written, and as many computing as the backend keeps in flight.
  const size_t in_flight = std::max<size_t>(1, backend.max_in_flight());
  const size_t groups = 2 + std::min<size_t>(in_flight, 2);
  pipeline::FramePool pool(groups * batch, n_meas, n_out, backend.frame_allocator());
  backend.bind_frames(pool);
  std::vector<Batch> batches(groups);
  for (size_t g = 0; g < groups; ++g) batches[g].first = g * batch;
  std::vector<pipeline::FrameSlot*> ptrs(batch), done(std::max(batch, piece));

  BatchChannel free_ch(groups), filled_ch(groups), computed_ch(groups);
  for (size_t g = 0; g < groups; ++g) free_ch.push(g);
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard lock(error_mutex);
      if (!error) error = e;
    }
    failed.store(true);
    free_ch.cancel();
    filled_ch.cancel();
    computed_ch.cancel();
  };

  OfflineResult r;
  const int64_t start = pipeline::now_ns();
  std::atomic<uint64_t> read_count{0};
  int64_t read_ns = 0, write_ns = 0, compute_ns = 0;
  int64_t read_cpu = 0, write_cpu = 0;
  uint64_t unreadable = 0, written = 0, computed = 0, non_finite = 0;

  acquisition::FrameOrigin first_origin;
  const bool have_origin = reader.origin(0, first_origin);
  std::thread read_thread([&] {
    size_t next = 0;
    bool gap = false;
    size_t g = 0;
    while (next < info.n_frames && free_ch.pop(g)) {
      const int64_t t0 = pipeline::now_ns();
      Batch& b = batches[g];
      b.count = 0;
      for (; b.count < batch && next < info.n_frames; ++next) {
        pipeline::FrameSlot& s = pool.slot(b.first + b.count);
        if (!reader.read(next, {s.values, n_meas})) {
          ++unreadable;
          gap = true;
          continue;
        }
        s.seq = next;
        s.flags = gap ? uint32_t{pipeline::kFlagGapBefore} : 0u;
        s.dropped_before = 0;
        gap = false;
        uint64_t t_index = next;
        // An eitstream raw file keeps each frame's seq, gap and drops in the stream it was
        // recorded from: the images keep them too (and their times count the gaps).
        if (acquisition::FrameOrigin o; have_origin && reader.origin(next, o)) {
          s.seq = o.seq;
          if (o.gap_before) s.flags |= pipeline::kFlagGapBefore;
          s.dropped_before = o.dropped_before;
          t_index = o.seq >= first_origin.seq ? o.seq - first_origin.seq : next;
        }
        s.stamp(pipeline::Stage::kReceived,
                info.rate_hz > 0 ? static_cast<int64_t>(t_index * 1e9 / info.rate_hz) : 0);
        ++b.count;
      }
      read_ns += pipeline::now_ns() - t0;
      read_count.store(next, std::memory_order_relaxed);
      if (b.count > 0)
        filled_ch.push(g);
      else
        free_ch.push(g);
    }
    filled_ch.close();
    read_cpu = thread_cpu_ns();
  });

  std::thread write_thread([&] {
    size_t g = 0;
    while (computed_ch.pop(g)) {
      const int64_t t0 = pipeline::now_ns();
      const Batch& b = batches[g];
      for (size_t j = 0; j < b.count; ++j) {
        const pipeline::FrameSlot& slot = pool.slot(b.first + j);
        if (slot.flags & pipeline::kFlagNonFinite) ++non_finite;
        recorder.publish(slot);
      }
      written += b.count;
      const int64_t t1 = pipeline::now_ns();
      recorder.tick(t1);
      write_ns += pipeline::now_ns() - t0;
      free_ch.push(g);
    }
    const int64_t t0 = pipeline::now_ns();
    recorder.end();
    write_ns += pipeline::now_ns() - t0;
    write_cpu = thread_cpu_ns();
  });

  // The calling thread computes: submit while the backend has room, complete the oldest batch
  // when it has none (or no more input), in submission order.
  std::vector<size_t> pending(groups);  // ring of submitted batch numbers
  size_t pending_head = 0, pending_n = 0;
  const int64_t compute_cpu0 = thread_cpu_ns();
  try {
    size_t g = 0;
    while (sync && !failed.load() && filled_ch.pop(g)) {
      const int64_t t0 = pipeline::now_ns();
      const Batch& b = batches[g];
      for (size_t j = 0; j < b.count; ++j) ptrs[j] = &pool.slot(b.first + j);
      for (size_t k = 0; k < b.count; k += piece) {
        const size_t m = std::min(piece, b.count - k);
        if (!backend.submit({ptrs.data() + k, m}) || backend.complete(done, true) != m)
          throw pipeline::BackendError("reconstruct: the backend refused a batch");
      }
      const int64_t t1 = pipeline::now_ns();
      compute_ns += t1 - t0;
      for (size_t j = 0; j < b.count; ++j) ptrs[j]->stamp(pipeline::Stage::kPublished, t1);
      computed_ch.push(g);
      computed += b.count;
      progress.update(computed);
    }
    bool input_open = !sync;
    while (!failed.load() && (input_open || pending_n > 0)) {
      if (input_open && pending_n < in_flight) {
        if (filled_ch.pop(g)) {
          const int64_t t0 = pipeline::now_ns();
          const Batch& b = batches[g];
          for (size_t j = 0; j < b.count; ++j) ptrs[j] = &pool.slot(b.first + j);
          if (!backend.submit({ptrs.data(), b.count}))
            throw pipeline::BackendError("reconstruct: the backend refused a batch");
          pending[(pending_head + pending_n) % groups] = g;
          ++pending_n;
          compute_ns += pipeline::now_ns() - t0;
          continue;
        }
        input_open = false;
        if (pending_n == 0) break;
      }
      const int64_t t0 = pipeline::now_ns();
      const size_t n_done = backend.complete(done, true);
      const int64_t t1 = pipeline::now_ns();
      compute_ns += t1 - t0;
      g = pending[pending_head];
      pending_head = (pending_head + 1) % groups;
      --pending_n;
      if (n_done != batches[g].count)
        throw pipeline::BackendError("reconstruct: the backend completed a different batch");
      for (size_t j = 0; j < n_done; ++j) done[j]->stamp(pipeline::Stage::kPublished, t1);
      computed_ch.push(g);
      computed += n_done;
      progress.update(computed);
    }
    computed_ch.close();
  } catch (...) {
    fail(std::current_exception());
    try {  // nothing may still be writing into the pool when it goes
      while (backend.in_flight() > 0 && backend.complete(done, true) > 0) {
      }
    } catch (...) {
    }
  }
  r.compute_cpu_s = seconds(thread_cpu_ns() - compute_cpu0);
  read_thread.join();
  write_thread.join();
  r.read_cpu_s = seconds(read_cpu);
  r.write_cpu_s = seconds(write_cpu);
  r.wall_s = seconds(pipeline::now_ns() - start);
  if (error) std::rethrow_exception(error);
  r.read = read_count.load();
  r.written = written;
  r.unreadable = unreadable;
  r.non_finite = non_finite;
  r.read_s = seconds(read_ns);
  r.compute_s = seconds(compute_ns);
  r.write_s = seconds(write_ns);
  return r;
}

}  // namespace eit::cli
