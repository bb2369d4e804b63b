// Backend-owned frame memory: the Pipeline builds its FramePool from the backend's
// frame_allocator() and binds it with bind_frames() once, before the first frame, and every
// submitted frame lies in that pool.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;

namespace {

// Aligned heap memory that remembers every block it handed out.
class RecordingAllocator final : public HostAllocator {
 public:
  std::string_view name() const noexcept override { return "recording"; }
  void* allocate(size_t bytes) override {
    void* p = default_host_allocator().allocate(bytes);
    blocks.push_back({reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + bytes});
    return p;
  }
  void deallocate(void* p) noexcept override { default_host_allocator().deallocate(p); }
  bool owns(const void* p, size_t bytes) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (const auto& [begin, end] : blocks)
      if (a >= begin && a + bytes <= end) return true;
    return false;
  }
  std::vector<std::pair<uintptr_t, uintptr_t>> blocks;
};

// The CPU backend with its own frame memory; counts binds and frames outside the bound pool.
class OwningBackend final : public Reconstructor {
 public:
  explicit OwningBackend(const eit::recon::Model& m) : cpu_(m) {}
  std::string_view name() const noexcept override { return "owning"; }
  size_t n_meas() const noexcept override { return cpu_.n_meas(); }
  size_t n_out() const noexcept override { return cpu_.n_out(); }
  size_t max_batch() const noexcept override { return cpu_.max_batch(); }
  size_t max_in_flight() const noexcept override { return cpu_.max_in_flight(); }
  void set_reference(std::span<const double> v, bool normalize) override {
    cpu_.set_reference(v, normalize);
  }
  bool submit(std::span<FrameSlot* const> batch) override {
    for (const FrameSlot* f : batch)
      if (!bound_ || !allocator_.owns(f->values, n_meas() * 4) ||
          !allocator_.owns(f->image, n_out() * 4))
        ++foreign_frames;
    submitted += batch.size();
    return cpu_.submit(batch);
  }
  size_t complete(std::span<FrameSlot*> out, bool wait) override {
    return cpu_.complete(out, wait);
  }
  size_t in_flight() const noexcept override { return cpu_.in_flight(); }
  HostAllocator& frame_allocator() override { return allocator_; }
  void bind_frames(const FramePool& pool) override {
    ++binds;
    bound_ = &pool.allocator() == &allocator_;
  }

  int binds = 0;
  size_t foreign_frames = 0, submitted = 0;

 private:
  CpuReconstructor cpu_;
  RecordingAllocator allocator_;
  bool bound_ = false;
};

}  // namespace

TEST_CASE("the pipeline's frames live in the backend's memory, bound once before the first frame") {
  const auto m = eit::test::random_model(128);
  const auto frames = eit::test::random_frames(m, 200);
  eit::test::VectorSource source(frames);
  eit::test::CollectingSink sink(m.n_out());
  auto backend = std::make_unique<OwningBackend>(m);
  OwningBackend* b = backend.get();
  Pipeline p(m, source, std::move(backend), {&sink});
  CHECK(b->binds == 1);  // at construction, before start()
  p.start();
  for (int i = 0; i < 2000 && !p.finished(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(p.finished());
  p.wait();
  CHECK(sink.frames().size() == frames.size());
  CHECK(b->submitted == frames.size());
  CHECK(b->foreign_frames == 0);
  CHECK(b->binds == 1);
}
