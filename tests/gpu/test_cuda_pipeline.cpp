// The whole streaming path on the GPU: frames → Pipeline (pinned pool, CUDA backend) → ZeroMQ
// PUSH → a PULL subscriber, compared image by image with the CPU backend and with an independent
// double-precision H·(v − v_ref). Skips visibly where there is no CUDA device.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "test_data.hpp"

using namespace eit;

namespace {

struct Received {
  uint64_t seq;
  std::vector<float> image;
};

// Streams `frames` through a lossless pipeline with `backend`, publishing over PUSH, and returns
// what a PULL subscriber received (image messages only), in arrival order. rate_hz > 0: paced
// at that rate; `layout`, if given, receives the layout the pipeline ran (auto resolved).
std::vector<Received> stream_through(const recon::Model& m,
                                     const std::vector<std::vector<float>>& frames,
                                     std::unique_ptr<pipeline::Reconstructor> backend,
                                     size_t max_batch, double rate_hz = 0,
                                     pipeline::StageLayout* layout = nullptr) {
  auto ctx = std::make_shared<zmq::context_t>(1);
  sinks::ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.pattern = sinks::ZmqPattern::kPush;
  o.lossless = true;
  o.series.stream = "gpu-test";
  sinks::ZmqPublisher pub(m, o, ctx);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 20000);
  pull.connect(pub.endpoint());

  test::VectorSource frames_source(frames);
  std::optional<pipeline::PacedSource> paced;
  if (rate_hz > 0) paced.emplace(frames_source, pipeline::PacingOptions{rate_hz, 1});
  pipeline::Source& source = paced ? static_cast<pipeline::Source&>(*paced) : frames_source;
  pipeline::PipelineOptions po;
  po.max_batch = max_batch;
  po.on_fault = pipeline::FaultPolicy::kStop;  // a GPU fault must fail this test, not hide
  pipeline::Pipeline p(m, source, std::move(backend), {&pub}, po);
  if (layout) *layout = p.layout();
  p.start();
  std::vector<Received> got;
  while (got.size() < frames.size()) {
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(pull, std::back_inserter(parts))) break;  // timed out
    if (parts.size() != 3) continue;                                    // series message
    const auto header = sinks::decode_image_header(
        {static_cast<const std::byte*>(parts[1].data()), parts[1].size()});
    REQUIRE(header);
    Received r{header->seq, std::vector<float>(parts[2].size() / sizeof(float))};
    std::memcpy(r.image.data(), parts[2].data(), parts[2].size());
    got.push_back(std::move(r));
  }
  p.wait();
  CHECK(p.stats().dropped() == 0);
  return got;
}

}  // namespace

TEST_CASE("GPU pipeline delivers every frame over ZeroMQ with images equal to the CPU backend's") {
  std::string why;
  if (!gpu::cuda_available(&why)) {
    test::report_skip("GPU pipeline end to end", "no CUDA device: " + why);
    return;
  }
  const auto m = test::random_model(1024, std::random_device{}());
  const auto frames = test::random_frames(m, 3000, std::random_device{}());
  for (size_t max_batch : {size_t{1}, size_t{64}}) {
    CAPTURE(max_batch);
    const auto on_gpu =
        stream_through(m, frames, gpu::make_cuda_reconstructor(m), max_batch);
    const auto on_cpu = stream_through(m, frames, std::make_unique<pipeline::CpuReconstructor>(m),
                                       max_batch);
    REQUIRE(on_gpu.size() == frames.size());
    REQUIRE(on_cpu.size() == frames.size());
    double worst_vs_cpu = 0, worst_vs_double = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
      REQUIRE(on_gpu[i].seq == i);  // every frame, in order
      REQUIRE(on_cpu[i].seq == i);
      Eigen::VectorXd cpu(m.n_out());
      for (size_t k = 0; k < m.n_out(); ++k) cpu[static_cast<Eigen::Index>(k)] = on_cpu[i].image[k];
      worst_vs_cpu = std::max(worst_vs_cpu, test::relative_error(on_gpu[i].image, cpu));
      worst_vs_double = std::max(
          worst_vs_double,
          test::relative_error(on_gpu[i].image, test::expected_image(m, frames[i], m.v_ref, false)));
    }
    MESSAGE("GPU vs CPU backend: worst relative error " << worst_vs_cpu
                                                       << ", vs double: " << worst_vs_double);
    CHECK(worst_vs_cpu <= 1e-5);
    CHECK(worst_vs_double <= 1e-5);
  }
}

TEST_CASE(
    "GPU pipeline paced at 1 kHz runs to completion by default with images equal to the CPU's") {
  std::string why;
  if (!gpu::cuda_available(&why)) {
    test::report_skip("GPU pipeline run to completion", "no CUDA device: " + why);
    return;
  }
  const auto m = test::random_model(1024, std::random_device{}());
  const auto frames = test::random_frames(m, 1000, std::random_device{}());
  pipeline::StageLayout layout = pipeline::StageLayout::kAuto;
  const auto on_gpu = stream_through(m, frames, gpu::make_cuda_reconstructor(m), 16, 1000, &layout);
  CHECK(layout == pipeline::StageLayout::kRunToCompletion);
  REQUIRE(on_gpu.size() == frames.size());
  double worst = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    REQUIRE(on_gpu[i].seq == i);
    worst = std::max(
        worst,
        test::relative_error(on_gpu[i].image, test::expected_image(m, frames[i], m.v_ref, false)));
  }
  CHECK(worst <= 1e-5);
}
