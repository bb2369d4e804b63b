// `eitstream reconstruct nats://…`: a bed's history from JetStream into an image file (see
// reconstruct_nats.hpp).
#include "reconstruct_nats.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "command_registry.hpp"
#if EIT_HAVE_NATS
#include "backend_factory.hpp"
#include "reference_choice.hpp"
#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_frames.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#endif

namespace eit::cli {

#if EIT_HAVE_NATS
NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model& model,
                                       const std::filesystem::path& output,
                                       const NatsReconstructOptions& o) {
  // A live stream has no frame numbers to pick a reference from before it starts.
  const std::string spec = o.reference.empty() ? "model" : o.reference;
  for (const char* by_frame : {"mean:", "frame:", "variable:", "phantom"})
    if (spec.starts_with(by_frame))
      throw CommandError(fmt::format(
          "{}: --reference {} names frames of a recording file; a NATS replay takes model, "
          "first:N (captured from the replay) or file:PATH",
          uri, spec));
  ReferenceContext ctx;  // no recording: first:N is captured from the stream
  const ReferenceChoice ref = choose_reference(spec, model, ctx);
  Backend backend = make_backend(o.backend, model, std::max<size_t>(1, o.max_batch), 1, false);

  const nats::NatsAddress address = nats::raw_reader_address(uri);  // scale= allowed
  acquisition::LiveSourceOptions lo;
  lo.nominal_rate_hz = o.fps;
  std::vector<std::string> warnings;
  auto source = nats::open_nats_replay_source(uri, lo, model.protocol, 2000, &warnings);
  for (const auto& w : warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);
  sinks::Hdf5RecorderOptions ro;
  ro.stream = fmt::format("{}.{}", address.site, address.bed);
  // The frames' Eit-Rate (or --fps): breath timing in `eitstream indices` needs it.
  ro.frame_rate_hz = source->nominal_rate_hz();
  ro.reference = ref.description;
  ro.source = uri;
  ro.deflate = o.deflate;
  ro.chunk_frames = o.chunk_frames;
  ro.replace_existing = o.replace_existing;
  auto recorder = std::make_unique<sinks::Hdf5ImageRecorder>(output, model, ro);
  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLossless;
  po.reference = ref.options;
  po.max_batch = std::max<size_t>(1, o.max_batch);
  if (o.normalize) po.normalize = 1;
  pipeline::Pipeline p(model, *source, std::move(backend.reconstructor), {recorder.get()}, po);
  const bool quiet = o.quiet;
  if (!quiet)
    fmt::print(stderr, "eitstream: backend {}{}; reference {}\n", backend.description,
               backend.why_not_cuda.empty() ? std::string()
                                            : fmt::format(" ({})", backend.why_not_cuda),
               ref.description);
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
  r.images = recorder->stats().sent;
  r.bad = ss.bad_frames;
  r.gaps = ss.seq_gaps;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // A bed with no frame at all (since=all) is a mistyped or missing site=/bed= (without them the
  // bed is default.0): an empty image file with exit 0 read as success. From a time, nothing
  // after it is an answer (the file says so: 0 images).
  if (ps.frames_in == 0 && r.bad == 0 && nats::parse_since(uri).kind == nats::Since::Kind::kAll) {
    recorder.reset();
    std::error_code ec;
    std::filesystem::remove(output, ec);
    throw CommandError(fmt::format(
        "{}: JetStream holds no frame of bed {}.{} (site= and bed= name the bed; without them "
        "it is default.0)",
        uri, address.site, address.bed));
  }
  const auto st = recorder->stats();
  if (st.errors > 0)
    throw CommandError(
        fmt::format("{}: {} write errors, {} frames lost", output.string(), st.errors, st.dropped));
  return r;
}
#else
NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model&,
                                       const std::filesystem::path&,
                                       const NatsReconstructOptions&) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
#endif

}  // namespace eit::cli
