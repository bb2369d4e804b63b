// Which pool slot the source reads the next frame into: the one freed last. At a paced rate that
// is the previous frame's slot, back from the sinks long before the next frame, so its values and
// image are still in cache; before, the source took every never-used slot first and then the
// oldest freed one, cycling through the whole pool (~600 slots: 50 MB at 20,000×928).
#include <doctest/doctest.h>

#include <mutex>
#include <set>
#include <vector>

#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;

namespace {

// Records the pool slot of every frame it gets.
class SlotRecordingSink final : public ImageSink {
 public:
  std::string_view name() const noexcept override { return "slots"; }
  void publish(const FrameSlot& f) noexcept override {
    std::lock_guard lock(mutex_);
    slots_.push_back(f.index);
  }
  SinkStats stats() const noexcept override {
    std::lock_guard lock(mutex_);
    return {slots_.size(), 0, 0};
  }
  std::vector<uint32_t> slots() const {
    std::lock_guard lock(mutex_);
    return slots_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<uint32_t> slots_;
};

}  // namespace

TEST_CASE("at a paced rate the source reads every frame into the slot the last frame freed") {
  const auto m = eit::test::random_model(256);
  constexpr size_t kFrames = 40;
  for (const StageLayout layout : {StageLayout::kPipelined, StageLayout::kRunToCompletion}) {
    CAPTURE(layout_name(layout));
    const auto data = eit::test::random_frames(m, kFrames);
    eit::test::VectorSource inner(data);
    PacedSource source(inner, {100.0, 1});  // 10 ms apart: each frame is long done by the next
    SlotRecordingSink sink;
    PipelineOptions options;
    options.stages = layout;
    Pipeline p(m, source, eit::test::cpu_backend(m), {&sink}, options);
    REQUIRE(p.pool_size() > kFrames);  // enough never-used slots to give each frame its own
    p.start();
    REQUIRE(eit::test::wait_finished(p));
    const auto slots = sink.slots();
    REQUIRE(slots.size() == kFrames);
    // As many slots as frames were ever in flight at once: 1 here, more only when a loaded
    // machine holds a frame up for 20 ms or more (40 distinct slots with the old order).
    const std::set<uint32_t> distinct(slots.begin(), slots.end());
    INFO("distinct slots: " << distinct.size());
    CHECK(distinct.size() <= 4);
  }
}
