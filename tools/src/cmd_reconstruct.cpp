// `eitstream reconstruct RECORDING... [--model M.h5] [-o images.h5]`: every frame of recordings
// (any format `run` reads, including eitstream raw-frame files) into image files, as fast as the
// machine allows: frames are read in large batches and reconstructed by one GEMM per batch
// (CpuReconstructor with max_batch = --batch), then appended to an image file (docs/formats.md).
// A progress bar on a terminal, a plain line every 5 s otherwise; a summary per file with the
// time spent reading, computing and writing.
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "progress_report.hpp"
#include "recording_option_table.hpp"
#include "reference_choice.hpp"
#include "source_fingerprint.hpp"

namespace eit::cli {
namespace {

namespace fs = std::filesystem;

struct ReconstructArgs {
  std::vector<std::string> recordings;
  std::string model, output, reference, stream = "offline";
  RecordingArgs recording;
  bool normalize = false, quiet = false;
  uint64_t batch = 4096, compress = 0, chunk = 256;
};

struct Timing {
  double read_s = 0, compute_s = 0, write_s = 0;
};

fs::path output_for(const ReconstructArgs& a, const fs::path& recording) {
  const std::string name = recording.stem().string() + ".images.h5";
  if (a.output.empty()) return name;
  if (a.recordings.size() == 1 && !fs::is_directory(a.output)) return a.output;
  fs::create_directories(a.output);
  return fs::path(a.output) / name;
}

uint64_t reconstruct_one(const ReconstructArgs& a, const recon::Model& model,
                         const fs::path& path) {
  const auto ropts = to_recording_options(a.recording);
  auto reader = acquisition::open_recording_reader(path, ropts, model.protocol);
  const auto& info = reader->info();
  for (const auto& w : info.warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);

  ReferenceContext ctx;
  ctx.recording = path.string();
  ctx.recording_options = ropts;
  ctx.capture_first = false;
  const ReferenceChoice ref = choose_reference(a.reference, model, ctx);
  const std::vector<double> v_ref =
      ref.options.mode == pipeline::ReferenceMode::kGiven
          ? ref.options.values
          : std::vector<double>(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());

  const size_t batch = std::max<uint64_t>(1, a.batch);
  pipeline::CpuReconstructor backend(model, pipeline::CpuOptions{batch});
  backend.set_reference(v_ref, a.normalize || model.normalize);

  const fs::path out = output_for(a, path);
  sinks::Hdf5RecorderOptions ro;
  ro.stream = a.stream;
  ro.frame_rate_hz = info.rate_hz;
  ro.reference = ref.description;
  ro.source = source_fingerprint(path);
  ro.chunk_frames = a.chunk;
  if (a.compress > 9) throw CommandError(fmt::format("--compress {}: expected 0 to 9", a.compress));
  ro.deflate = static_cast<int>(a.compress);
  ro.flush_interval_ns = 1'000'000'000;
  sinks::Hdf5ImageRecorder recorder(out, model, ro);
  fmt::print(stderr, "eitstream: {} ({}, {} frames{}) → model {} ({}×{}) → {}; reference {}\n",
             path.filename().string(), info.format, info.n_frames,
             info.rate_hz > 0 ? fmt::format(", {:.6g} Hz", info.rate_hz) : std::string(), model.id,
             model.n_out(), model.n_meas(), out.string(), ref.description);

  // One block of slots, values and images for the whole run: no allocation per batch.
  std::vector<float> values(batch * model.n_meas()), images(batch * model.n_out());
  std::vector<pipeline::FrameSlot> slots(batch);
  std::vector<pipeline::FrameSlot*> ptrs(batch), done(batch);
  for (size_t j = 0; j < batch; ++j) {
    slots[j].index = static_cast<uint32_t>(j);
    slots[j].values = values.data() + j * model.n_meas();
    slots[j].image = images.data() + j * model.n_out();
  }
  ProgressReport progress(path.filename().string(), info.n_frames, a.quiet);
  Timing t;
  uint64_t written = 0, bad = 0;
  bool gap = false;
  const int64_t start = pipeline::now_ns();
  size_t next = 0;
  while (next < info.n_frames) {
    const int64_t t0 = pipeline::now_ns();
    size_t m = 0;
    for (; m < batch && next < info.n_frames; ++next) {
      pipeline::FrameSlot& s = slots[m];
      if (!reader->read(next, {s.values, model.n_meas()})) {
        ++bad;
        gap = true;
        continue;
      }
      s.seq = next;
      s.flags = gap ? uint32_t{pipeline::kFlagGapBefore} : 0u;
      s.dropped_before = 0;
      gap = false;
      const int64_t t_rec = info.rate_hz > 0 ? static_cast<int64_t>(next * 1e9 / info.rate_hz) : 0;
      s.stamp(pipeline::Stage::kReceived, t_rec);
      ptrs[m++] = &s;
    }
    if (m == 0) break;
    const int64_t t1 = pipeline::now_ns();
    backend.submit({ptrs.data(), m});
    const size_t n_done = backend.complete(done, true);
    const int64_t t2 = pipeline::now_ns();
    for (size_t j = 0; j < n_done; ++j) {
      done[j]->stamp(pipeline::Stage::kPublished, t2);
      recorder.publish(*done[j]);
    }
    const int64_t t3 = pipeline::now_ns();
    recorder.tick(t3);
    written += n_done;
    t.read_s += (t1 - t0) / 1e9;
    t.compute_s += (t2 - t1) / 1e9;
    t.write_s += (t3 - t2) / 1e9;
    progress.update(next);
  }
  const int64_t t_end0 = pipeline::now_ns();
  recorder.end();
  t.write_s += (pipeline::now_ns() - t_end0) / 1e9;
  progress.finish(next);
  const double total_s = (pipeline::now_ns() - start) / 1e9;
  const auto st = recorder.stats();
  fmt::print(
      "{}: {} frames → {} in {:.3f} s ({:.0f} frames/s; read {:.3f} s, compute {:.3f} s = {:.0f} "
      "frames/s, write {:.3f} s), {} unreadable, {} lost on write\n",
      path.filename().string(), written, out.string(), total_s,
      total_s > 0 ? written / total_s : 0.0, t.read_s, t.compute_s,
      t.compute_s > 0 ? written / t.compute_s : 0.0, t.write_s, bad, st.dropped);
  for (const auto& w : info.warnings) fmt::print("warning: {}\n", w);
  if (st.errors > 0)
    throw CommandError(
        fmt::format("{}: {} write errors, {} frames lost", out.string(), st.errors, st.dropped));
  return written;
}

void run_reconstruct(const ReconstructArgs& a) {
  recon::Model model =
      a.model.empty() || a.model == "builtin" ? recon::default_model() : recon::load_model(a.model);
  for (const auto& r : a.recordings) reconstruct_one(a, model, r);
}

const RegisterCommand kReconstruct{
    15, [](CLI::App& app) {
      auto a = std::make_shared<ReconstructArgs>();
      auto* cmd = app.add_subcommand(
          "reconstruct",
          "Turn every frame of recordings into an HDF5 image file, as fast as the machine allows "
          "(batched GEMM)");
      cmd->add_option("recordings", a->recordings,
                      "Recording files (any format run reads, incl. eitstream raw .h5)")
          ->required();
      cmd->add_option("--model", a->model, "Model file (HDF5); default: the built-in model");
      cmd->add_option("-o,--output", a->output,
                      "Image file (one recording) or folder (several); default: "
                      "<recording stem>.images.h5 here");
      cmd->add_option("--reference", a->reference,
                      "model | first:N | mean:A-B | frame:K | variable:NAME | file:PATH (default: "
                      "the file's stored reference when it has one, else first:10; printed)");
      cmd->add_flag("--normalize", a->normalize, "Images from dv/|v_ref|");
      cmd->add_option("--batch", a->batch, "Frames per GEMM")->capture_default_str();
      cmd->add_option("--chunk", a->chunk, "Frames per HDF5 chunk")->capture_default_str();
      cmd->add_option("--compress", a->compress, "Deflate level 1-9 (0 = none)")
          ->capture_default_str();
      cmd->add_option("--stream", a->stream, "Stream name stored in the file")
          ->capture_default_str();
      cmd->add_flag("--quiet", a->quiet, "No progress output");
      add_recording_options(cmd, a->recording, false);
      cmd->callback([a] { run_reconstruct(*a); });
    }};

}  // namespace
}  // namespace eit::cli
