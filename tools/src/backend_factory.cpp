// Backend selection and the CUDA plugin loader (see backend_factory.hpp).
#include "backend_factory.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/gpu/plugin_api.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/gn_reconstructor.hpp"

namespace eit::cli {
namespace {

struct PluginState {
  const gpu::PluginApi* api = nullptr;
  std::string why;  // why api is null: no plugin / no driver / no device
  bool device = false;
};

std::vector<std::string> plugin_candidates() {
  if (const char* env = std::getenv("EIT_GPU_PLUGIN"); env && *env) return {env};
  std::vector<std::string> paths;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / gpu::kPluginFile).string());
    paths.push_back((exe.parent_path() / ".." / "lib" / "eitstream" / gpu::kPluginFile).string());
  }
  paths.push_back(gpu::kPluginFile);  // LD_LIBRARY_PATH, ld.so.cache
  return paths;
}

PluginState load_plugin() {
  PluginState s;
  std::string tried;
  for (const std::string& path : plugin_candidates()) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && !std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed
    if (!handle) {
      const std::string err = dlerror();
      if (bare && err.find("cannot open shared object file") != std::string::npos &&
          err.find(gpu::kPluginFile) != std::string::npos) {
        tried += (tried.empty() ? "" : ", ") + std::string("the loader's search path");
        continue;
      }
      s.why =
          fmt::format("no CUDA plugin: {} did not load (CUDA libraries missing?): {}", path, err);
      return s;
    }
    const auto entry = reinterpret_cast<gpu::PluginEntry>(dlsym(handle, gpu::kPluginEntry));
    const gpu::PluginApi* api = entry ? entry() : nullptr;
    if (!api || api->abi_version != gpu::kPluginAbiVersion ||
        api->sizeof_options != sizeof(gpu::CudaOptions) ||
        api->sizeof_model != sizeof(recon::Model)) {
      s.why = fmt::format(
          "no CUDA plugin: {} is not a plugin of this eitstream build (entry {}, "
          "ABI {} expected)",
          path, gpu::kPluginEntry, gpu::kPluginAbiVersion);
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
  s.why = fmt::format("no CUDA plugin: {} not found (looked in {})", gpu::kPluginFile, tried);
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

Backend make_backend(const std::string& which, const recon::Model& model, size_t max_batch) {
  Backend b;
  if (model.gn) {  // absolute imaging: Gauss–Newton per frame, on the device or the host
    if (resolve_backend(which, &b.why_not_cuda) == "cuda") {
      gpu::CudaOptions options;
      options.max_batch = max_batch;
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
    b.reconstructor = plugin().api->make(model, options);
    b.description = fmt::format("cuda ({})", plugin().api->describe());
    return b;
  }
  b.reconstructor =
      std::make_unique<pipeline::CpuReconstructor>(model, pipeline::CpuOptions{max_batch});
  b.description = "cpu (Eigen, 1 thread)";
  return b;
}

}  // namespace eit::cli
