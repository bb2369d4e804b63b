// Backend selection and the CUDA plugin loader (see backend_factory.hpp).
#include "backend_factory.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/gpu/plugin_api.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/gn_reconstructor.hpp"
#include "eit/recon/module_loader.hpp"

namespace eit::cli {
namespace {

struct PluginState {
  const gpu::PluginApi* api = nullptr;
  std::string why;  // why api is null: no plugin / no driver / no device
  bool device = false;
};

PluginState load_plugin() {
  PluginState s;
  const recon::LoadedModule loaded = recon::load_module(gpu::kPluginFile, "EIT_GPU_PLUGIN");
  if (!loaded.handle) {
    s.why = loaded.found ? fmt::format("no CUDA plugin: {} (CUDA libraries missing?)", loaded.error)
                         : fmt::format("no CUDA plugin: {}", loaded.error);
    return s;
  }
  const auto entry =
      reinterpret_cast<gpu::PluginEntry>(recon::module_symbol(loaded, gpu::kPluginEntry));
  const gpu::PluginApi* api = entry ? entry() : nullptr;
  if (!api || api->abi_version != gpu::kPluginAbiVersion ||
      api->sizeof_options != sizeof(gpu::CudaOptions) ||
      api->sizeof_model != sizeof(recon::Model)) {
    s.why = fmt::format(
        "no CUDA plugin: {} is not a plugin of this eitstream build (entry {}, ABI {} expected)",
        loaded.path, gpu::kPluginEntry, gpu::kPluginAbiVersion);
    return s;
  }
  std::string why;
  if (!api->available(&why)) {
    const bool driver =
        why.find("Driver") != std::string::npos || why.find("driver") != std::string::npos;
    s.why = fmt::format("{}: {}", driver ? "no CUDA driver" : "no CUDA device", why);
    return s;
  }
  s.api = api;
  return s;
}

const PluginState& plugin() {
  static const PluginState state = load_plugin();  // loaded once, on first need
  return state;
}

void check_name(const std::string& which) {
  if (which != "auto" && which != "cpu" && which != "cuda")
    throw CommandError(fmt::format("--backend '{}': expected auto, cpu or cuda", which));
}

}  // namespace

std::string resolve_backend(const std::string& which, std::string* why) {
  check_name(which);
  if (which == "cpu") return "cpu";
  const PluginState& p = plugin();
  if (p.api) return "cuda";
  if (which == "cuda") throw CommandError(fmt::format("--backend cuda: {}", p.why));
  if (why) *why = p.why;
  return "cpu";
}

std::string cuda_device_description() {
  const PluginState& p = plugin();
  return p.api ? p.api->describe() : p.why;
}

void check_complex_frames(const recon::Model& model, bool interleaved_frames) {
  if (model.complex_interleaved() && !interleaved_frames)
    throw CommandError(fmt::format(
        "model {} has complex conductivity (model build --complex): its frames are (re, im) "
        "pairs; read a complex recording with --complex interleaved (or build the gn model "
        "without --complex)",
        model.id));
  if (!model.complex_interleaved() && interleaved_frames)
    throw CommandError(fmt::format(
        "--complex interleaved: model {} ({}) takes real frames; interleaved (re, im) frames "
        "need a gn model built with --complex",
        model.id, model.algorithm));
}

Backend make_backend(const std::string& which, const recon::Model& model, size_t max_batch,
                     size_t cpu_threads, bool interleaved_frames, bool cuda_l2_persist) {
  Backend b;
  check_complex_frames(model, interleaved_frames);
  if (model.gn) {  // absolute imaging: Gauss–Newton per frame, on the device or the host
    if (resolve_backend(which, &b.why_not_cuda) == "cuda") {
      gpu::CudaOptions options;
      options.max_batch = max_batch;
      options.l2_persist = cuda_l2_persist;
      try {  // the CUDA solver takes point electrodes, triangles and diagonal priors
        b.reconstructor = plugin().api->make(model, options);
        b.description =
            fmt::format("cuda-gn (Gauss–Newton, warm-started; {})", plugin().api->describe());
        return b;
      } catch (const std::exception& e) {
        if (which == "cuda") throw CommandError(fmt::format("--backend cuda: {}", e.what()));
        b.why_not_cuda = e.what();
      }
    }
    b.reconstructor = std::make_unique<pipeline::GnReconstructor>(
        model, pipeline::GnReconstructorOptions{max_batch});
    b.description = "cpu-gn (Gauss–Newton, warm-started)";
    return b;
  }
  if (resolve_backend(which, &b.why_not_cuda) == "cuda") {
    gpu::CudaOptions options;
    options.max_batch = max_batch;
    options.l2_persist = cuda_l2_persist;
    b.reconstructor = plugin().api->make(model, options);
    b.description = fmt::format("cuda ({})", plugin().api->describe());
    return b;
  }
  auto cpu = std::make_unique<pipeline::CpuReconstructor>(
      model, pipeline::CpuOptions{max_batch, std::max<size_t>(cpu_threads, 1)});
  b.description = cpu->threads() == 1 ? std::string("cpu (Eigen, 1 thread)")
                                      : fmt::format("cpu (Eigen, {} threads)", cpu->threads());
  b.reconstructor = std::move(cpu);
  return b;
}

const gpu::PluginApi* cuda_plugin(std::string* why) {
  const PluginState& p = plugin();
  if (!p.api && why) *why = p.why;
  return p.api;
}

}  // namespace eit::cli
