// shm:// as a sink of the real pipeline: a reader that never reads does not slow or stall the run
// (every frame published, none dropped); it is lapped and counts exactly what it missed, while a
// reader that keeps up gets the images H·(v − v_ref) in order.
#include <doctest/doctest.h>

#include <thread>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/shm_reader.hpp"
#include "shm_test_support.hpp"

using namespace eit::pipeline;
using namespace eit::sinks;

TEST_CASE("shm: a stalled reader never holds back the pipeline, and a live one gets correct images") {
  const auto m = eit::test::random_model();
  const size_t n = 500;
  const auto frames = eit::test::random_frames(m, n);
  ShmPublisherOptions o;
  o.uri = eit::test::shm_test_uri("pipeline");
  o.slots = 64;
  ShmPublisher pub(m, o);
  ShmReader stalled(o.uri);
  // The live reader runs on its own thread and checks every image it gets against the model.
  uint64_t got = 0, out_of_order = 0, overruns = 0;
  double worst = 0;
  std::thread live([&] {
    ShmReader r(o.uri, {ShmWaitMode::kSpin});
    int64_t last = -1;
    while (r.next(10'000'000'000) == ShmRead::kImage) {
      const auto seq = static_cast<int64_t>(r.header().seq);
      if (seq <= last) ++out_of_order;
      last = seq;
      const std::vector<float> image(r.payload().begin(), r.payload().end());
      worst =
          std::max(worst, eit::test::relative_error(
                              image, eit::test::expected_image(m, frames[seq], m.v_ref, false)));
      ++got;
    }
    overruns = r.counts().overruns;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the reader attaches first

  eit::test::VectorSource frames_source(frames);
  PacedSource source(frames_source, PacingOptions{5000.0});
  PipelineOptions po;
  po.policy = Policy::kLossless;  // any sink that blocked would stall the whole run
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&pub}, po);
  p.start();
  REQUIRE(eit::test::wait_finished(p));
  live.join();
  const auto st = p.stats();
  CHECK(st.frames_out == n);
  CHECK(st.dropped() == 0);
  CHECK(pub.stats().sent == n);
  CHECK(st.sinks.at(0).dropped == 0);

  CHECK(got > 0);
  CHECK(got + overruns == n);
  CHECK(out_of_order == 0);
  CHECK(worst < 2e-5);

  REQUIRE(stalled.next(0) == ShmRead::kImage);
  CHECK(stalled.header().seq == n - 1);  // lapped: straight to the newest
  CHECK(stalled.counts().overruns == n - 1);
  CHECK(stalled.next(0) == ShmRead::kEnded);
}
