// `eitstream reconstruct RECORDING... [--model M.h5] [-o images.h5]`: every frame of recordings
// (any format `run` reads, including eitstream raw-frame files) into image files, as fast as the
// machine allows: frames are read in large batches and reconstructed by one GEMM per batch on
// the backend `--backend auto|cpu|cuda` picks (backend_factory.hpp, as for run and bench), then
// appended to an image file (docs/formats.md); reading, computing and writing overlap on three
// threads (offline_reconstruct.hpp). A progress bar on a terminal, a plain line every 5 s
// otherwise; a summary per file with each thread's busy time.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "backend_factory.hpp"
#include "command_registry.hpp"
#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "existing_output.hpp"
#include "gn_summary.hpp"
#include "offline_reconstruct.hpp"
#include "option_checks.hpp"
#include "progress_report.hpp"
#include "reconstruct_nats.hpp"
#include "recording_option_table.hpp"
#include "reference_choice.hpp"
#include "run_nats.hpp"
#include "source_fingerprint.hpp"

namespace eit::cli {
namespace {

// --batch, --gemm-batch, --chunk: frames held at once (65,536 images of 1024 floats: 256 MiB).
constexpr double kMaxBatch = 65536;

namespace fs = std::filesystem;

struct ReconstructArgs {
  std::vector<std::string> recordings;
  std::string model, output, reference, stream = "offline", backend = "auto";
  RecordingArgs recording;
  bool normalize = false, quiet = false, force = false;
  double fps = 0;  // the recording's frame rate when the file gives none
  uint64_t batch = 4096, gemm_batch = 0, compress = 0, chunk = 0;
};

// Rows per HDF5 chunk: --chunk, else about 1 MiB of images (256 rows of the built-in model's 1024
// floats). Larger chunks write faster alone but not beside the compute thread (its batches and
// the chunk buffer then share the cache): docs/benchmarks.md.
size_t chunk_rows(const ReconstructArgs& a, size_t n_out) {
  if (a.chunk > 0) return a.chunk;
  return std::clamp<size_t>((size_t{1} << 20) / (std::max<size_t>(1, n_out) * sizeof(float)), 16,
                            4096);
}

fs::path output_for(const ReconstructArgs& a, const fs::path& recording) {
  const std::string name = recording.stem().string() + ".images.h5";
  if (a.output.empty()) return name;
  if (a.recordings.size() == 1 && !fs::is_directory(a.output)) return a.output;
  fs::create_directories(a.output);
  return fs::path(a.output) / name;
}

// Before any work: every recording's output, refused when two recordings would write one file
// (the same stem in two folders) or when the file exists without --force.
void check_outputs(const ReconstructArgs& a) {
  std::map<fs::path, std::string> seen;
  for (const auto& r : a.recordings) {
    if (is_nats_uri(r)) continue;
    const fs::path out = fs::weakly_canonical(fs::absolute(output_for(a, r)));
    if (const auto [at, fresh] = seen.emplace(out, r); !fresh)
      throw CommandError(
          fmt::format("{} and {} would both be written to {}: give them one "
                      "folder each, or run them one at a time with -o",
                      at->second, r, out.string()));
    for (const auto& input : a.recordings)
      if (!is_nats_uri(input)) refuse_output_is_input(out.string(), input, out.string(), input);
    if (!a.model.empty())
      refuse_output_is_input(out.string(), a.model, out.string(), "the model " + a.model);
    refuse_existing_output(out.string(), a.force, out.string(), "-o another name");
  }
}

uint64_t reconstruct_one(const ReconstructArgs& a, const recon::Model& model,
                         const fs::path& path) {
  const auto ropts = to_recording_options(a.recording);
  const bool interleaved = ropts.complex_part == acquisition::ComplexPart::kInterleaved;
  check_complex_frames(model, interleaved);
  auto reader = acquisition::open_recording_reader(path, ropts, model.protocol);
  const auto& info = reader->info();
  for (const auto& w : info.warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);

  const size_t batch = std::max<uint64_t>(1, a.batch);
  // The CPU backend computes each batch in GEMMs of --gemm-batch frames (default 256: its
  // operands stay in cache); CUDA takes whole batches.
  const bool on_cpu = model.gn || resolve_backend(a.backend) == "cpu";
  const size_t gemm_batch =
      on_cpu ? std::min<size_t>(batch, a.gemm_batch ? a.gemm_batch : 256) : batch;
  Backend backend = make_backend(a.backend, model, gemm_batch, 1, interleaved);

  ReferenceContext ctx;
  ctx.recording = path.string();
  ctx.recording_options = ropts;
  ctx.capture_first = false;
  const ReferenceChoice ref =
      model.gn ? absolute_imaging_reference(backend.reconstructor->n_meas(), a.reference)
               : choose_reference(a.reference, model, ctx);
  const std::vector<double> v_ref =
      ref.options.mode == pipeline::ReferenceMode::kGiven
          ? ref.options.values
          : std::vector<double>(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
  backend.reconstructor->set_reference(v_ref, a.normalize || model.normalize);
  fmt::print(
      stderr, "eitstream: backend {}{}\n", backend.description,
      backend.why_not_cuda.empty() ? std::string() : fmt::format(" ({})", backend.why_not_cuda));

  const fs::path out = output_for(a, path);
  sinks::Hdf5RecorderOptions ro;
  ro.stream = a.stream;
  ro.frame_rate_hz = info.rate_hz > 0 ? info.rate_hz : a.fps;
  if (a.fps > 0 && info.rate_hz > 0 && a.fps != info.rate_hz)
    fmt::print(stderr, "eitstream: warning: --fps {:g} ignored: {} gives {:g} Hz\n", a.fps,
               path.filename().string(), info.rate_hz);
  ro.replace_existing = a.force;
  ro.reference = ref.description;
  ro.source = source_fingerprint(path);
  ro.chunk_frames = chunk_rows(a, model.n_out());
  if (a.compress > 9) throw CommandError(fmt::format("--compress {}: expected 0 to 9", a.compress));
  ro.deflate = static_cast<int>(a.compress);
  ro.flush_interval_ns = 1'000'000'000;
  ro.flush_each_chunk = false;  // SWMR readers see the rows once a second (at tick) and at the end
  sinks::Hdf5ImageRecorder recorder(out, model, ro);
  fmt::print(stderr, "eitstream: {} ({}, {} frames{}) → model {} ({}×{}) → {}; reference {}\n",
             path.filename().string(), info.format, info.n_frames,
             info.rate_hz > 0 ? fmt::format(", {:.6g} Hz", info.rate_hz) : std::string(), model.id,
             model.n_out(), model.n_meas(), out.string(), ref.description);

  ProgressReport progress(path.filename().string(), info.n_frames, a.quiet);
  const OfflineResult r =
      reconstruct_offline(*reader, *backend.reconstructor, recorder, batch, progress);
  progress.finish(r.read);
  const uint64_t written = r.written;
  const auto st = recorder.stats();
  fmt::print(
      "{}: {} frames → {} in {:.3f} s ({:.0f} frames/s; busy: read {:.3f} s, compute {:.3f} s = "
      "{:.0f} frames/s, write {:.3f} s, overlapped), {} unreadable, {} non-finite (empty "
      "images, flag 1), {} lost on write\n",
      path.filename().string(), written, out.string(), r.wall_s,
      r.wall_s > 0 ? written / r.wall_s : 0.0, r.read_s, r.compute_s,
      r.compute_s > 0 ? written / r.compute_s : 0.0, r.write_s, r.unreadable, r.non_finite,
      st.dropped);
  fmt::print("{}: thread CPU: read {:.3f} s, compute {:.3f} s, write {:.3f} s\n",
             path.filename().string(), r.read_cpu_s, r.compute_cpu_s, r.write_cpu_s);
  print_gn_summary(stdout, *backend.reconstructor);
  for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
  if (st.errors > 0)
    throw CommandError(fmt::format("{}: {} write errors, {} frames lost{}", out.string(), st.errors,
                                   st.dropped,
                                   recorder.failure().empty() ? "" : "; " + recorder.failure()));
  return written;
}

// nats://…?site=S&bed=B[&since=…]: the bed's raw frames from JetStream (reconstruct_nats.hpp).
void reconstruct_from_nats(const ReconstructArgs& a, const recon::Model& model,
                           const std::string& uri) {
  if (a.output.empty())
    throw CommandError(fmt::format("{}: a NATS replay needs -o IMAGES.h5", uri));
  NatsReconstructOptions o;
  o.backend = a.backend;
  o.reference = a.reference;
  o.normalize = a.normalize;
  if (a.compress > 9) throw CommandError(fmt::format("--compress {}: expected 0 to 9", a.compress));
  o.deflate = static_cast<int>(a.compress);
  o.chunk_frames = chunk_rows(a, model.n_out());
  o.max_batch = a.gemm_batch ? a.gemm_batch : 256;
  o.quiet = a.quiet;
  o.replace_existing = a.force;
  o.fps = a.fps;
  const auto r = reconstruct_nats(uri, model, a.output, o);
  fmt::print("{}: {} frames → {} images in {} in {:.3f} s, {} unreadable, {} missing by seq\n",
             uri, r.frames_in, r.images, a.output, r.wall_s, r.bad, r.gaps);
}

void run_reconstruct(const ReconstructArgs& a) {
  recon::Model model =
      a.model.empty() || a.model == "builtin" ? recon::default_model() : recon::load_model(a.model);
  check_outputs(a);
  for (const auto& r : a.recordings) {
    if (is_nats_uri(r)) {
      reconstruct_from_nats(a, model, r);
      continue;
    }
    reconstruct_one(a, model, r);
  }
}

const RegisterCommand kReconstruct{
    15, [](CLI::App& app) {
      auto a = std::make_shared<ReconstructArgs>();
      auto* cmd = app.add_subcommand(
          "reconstruct",
          "Turn every frame of recordings into an HDF5 image file, as fast as the machine allows "
          "(batched GEMM)");
      cmd->add_option("recordings", a->recordings,
                      "Recording files (any format run reads, incl. eitstream raw .h5), or "
                      "nats://HOST:PORT?site=S&bed=B[&since=all|SECONDS] (a bed's raw frames "
                      "from JetStream, with -o)")
          ->required();
      cmd->add_option("--model", a->model, "Model file (HDF5); default: the built-in model");
      cmd->add_option("-o,--output", a->output,
                      "Image file (one recording) or folder (several); default: "
                      "<recording stem>.images.h5 here");
      cmd->add_option("--reference", a->reference,
                      "model | first:N | mean:A-B | frame:K | variable:NAME | file:PATH (default: "
                      "the file's stored reference when it has one, else first:10; printed). "
                      "nats://: model (default), first:N or file:PATH");
      cmd->add_option("--backend", a->backend,
                      "auto | cpu | cuda: auto takes the CUDA plugin when it and a device are "
                      "present, else the CPU (and says why)")
          ->capture_default_str();
      cmd->add_flag("--normalize", a->normalize, "Images from dv/|v_ref|");
      cmd->add_option("--batch", a->batch,
                      "Frames read, computed and written per hand-over (CUDA: per GEMM)")
          ->capture_default_str()
          ->check(within(1, kMaxBatch, false, false));
      cmd->add_option("--gemm-batch", a->gemm_batch,
                      "CPU backend: frames per GEMM within a batch (default 256)")
          ->check(within(1, kMaxBatch, false, false));
      cmd->add_option("--chunk", a->chunk,
                      "Frames per HDF5 chunk (default: about 1 MiB of images, 256 frames of "
                      "1024 floats; at most 1 GiB of images)")
          ->check(within(1, kMaxBatch, false, false));
      cmd->add_option("--compress", a->compress, "Deflate level 1-9 (0 = none)")
          ->capture_default_str();
      cmd->add_option("--stream", a->stream, "Stream name stored in the file")
          ->capture_default_str();
      cmd->add_flag("--quiet", a->quiet, "No progress output");
      cmd->add_flag("--force", a->force,
                    "Replace existing image files (by default an existing file is refused)");
      cmd->add_option("--fps", a->fps,
                      "The recordings' frame rate, stored in the image file (breath timing in "
                      "`eitstream indices` needs it) when a file gives none; for nats:// it "
                      "wins over the frames' Eit-Rate, as for run --source")
          ->check(positive());
      add_recording_options(cmd, a->recording, false);
      cmd->footer(std::string("Exit status: 0 every recording was reconstructed and written; 1 a "
                              "wrong file, model or option value, an output file that exists "
                              "(without --force), or a write that failed (the message names the "
                              "file; the recordings before it are complete); 2 a command line "
                              "that does not parse.") +
                  kExitBySignal);
      cmd->callback([a] { run_reconstruct(*a); });
    }};

}  // namespace
}  // namespace eit::cli
