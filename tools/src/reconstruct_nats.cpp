// `eitstream reconstruct nats://…`: a bed's history from JetStream into an image file (see
// reconstruct_nats.hpp).
#include "reconstruct_nats.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "command_registry.hpp"
#if EIT_HAVE_NATS
#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_frames.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#endif

namespace eit::cli {

#if EIT_HAVE_NATS
NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model& model,
                                       const std::filesystem::path& output, bool quiet) {
  if (model.v_ref.size() == 0)
    throw CommandError(fmt::format(
        "{}: the model ({}) has no v_ref; a replay from NATS uses the model's reference",
        uri, model.id));
  const nats::NatsAddress address = nats::parse_nats_address(uri);
  acquisition::LiveSourceOptions lo;
  auto source = nats::open_nats_replay_source(uri, lo, model.protocol);
  sinks::Hdf5RecorderOptions ro;
  ro.stream = fmt::format("{}.{}", address.site, address.bed);
  ro.reference = "model v_ref";
  ro.source = uri;
  sinks::Hdf5ImageRecorder recorder(output, model, ro);
  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLossless;
  po.reference.mode = pipeline::ReferenceMode::kModel;
  pipeline::Pipeline p(model, *source, std::make_unique<pipeline::CpuReconstructor>(model),
                       {&recorder}, po);
  if (!quiet)
    fmt::print(stderr, "eitstream: {} → model {} ({}×{}) → {}\n", source->describe(), model.id,
               model.n_out(), model.n_meas(), output.string());
  const auto t0 = std::chrono::steady_clock::now();
  p.start();
  while (!p.finished()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.wait();
  NatsReconstructResult r;
  const auto ps = p.stats();
  const auto ss = source->stats();
  r.frames_in = ps.frames_in;
  r.images = recorder.stats().sent;
  r.bad = ss.bad_frames;
  r.gaps = ss.seq_gaps;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto st = recorder.stats();
  if (st.errors > 0)
    throw CommandError(
        fmt::format("{}: {} write errors, {} frames lost", output.string(), st.errors, st.dropped));
  return r;
}
#else
NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model&,
                                       const std::filesystem::path&, bool) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
#endif

}  // namespace eit::cli
