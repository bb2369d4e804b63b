// Stage stamps never run backwards while the reconstructor pops frames in batches behind a source
// that keeps pushing. The dequeue stamp reuses one clock read for several frames popped back to
// back (reconstruct_stage.cpp); a frame pushed after that read must get a fresh one, or its
// "dequeued" would precede its "enqueued".
#include <doctest/doctest.h>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

TEST_CASE("stamps stay in stage order when the reconstructor pops batches of a busy queue") {
  const auto m = random_model(32);  // tiny images: the stages, not the product, set the pace
  const auto frames = random_frames(m, 100000);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  PipelineOptions o;
  o.stages = StageLayout::kPipelined;
  o.max_batch = 256;
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m, CpuOptions{256}), {&sink}, o);
  p.start();
  REQUIRE(wait_finished(p));
  REQUIRE(sink.count() == frames.size());
  CHECK(sink.stamps_out_of_order() == 0);
}
