#pragma once
// The one place that turns `--backend auto|cpu|cuda` into a Reconstructor, for `run` and `bench`.
// The CUDA backend is a plugin (libeit_gpu.so, eit/gpu/plugin_api.hpp) loaded with dlopen() only
// when cuda or auto asks for it, so this binary links no CUDA library and starts without one.
// Where the plugin is looked for: $EIT_GPU_PLUGIN (a file; only there when set), else next to the
// executable, then <exe dir>/../lib/eitstream/, then the dynamic loader's search path.
// Set-up only (main thread); throws CommandError with the reason when `cuda` cannot be had.
#include <cstddef>
#include <memory>
#include <string>

#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu {
struct PluginApi;
}

namespace eit::cli {

struct Backend {
  std::unique_ptr<pipeline::Reconstructor> reconstructor;
  std::string description;   // "cuda (NVIDIA H200, …)" or "cpu (Eigen, 1 thread)"
  std::string why_not_cuda;  // auto → cpu: no plugin / no driver / no device, with details
};

// "cpu" or "cuda" for `which` (auto|cpu|cuda) on this machine; *why gets the reason auto chose
// the CPU. Loads the plugin for auto and cuda. CommandError for cuda without a usable device,
// or an unknown name.
std::string resolve_backend(const std::string& which, std::string* why = nullptr);

// The plugin's device description ("NVIDIA H200, sm_90, …"), or why there is no CUDA device.
std::string cuda_device_description();

// The reconstructor for `which` (auto|cpu|cuda) with at most max_batch frames per call;
// cpu_threads: threads the CPU backend splits a batch over (CpuOptions::threads).
// A "gn" model gets Gauss–Newton: the plugin's "cuda-gn" for cuda (and auto when a device is
// there and the CUDA solver takes the model: point electrodes, triangles, a diagonal prior;
// otherwise auto falls back to "cpu-gn" with why_not_cuda saying why, cuda throws).
// `interleaved_frames`: the frames are (re, im) pairs (--complex interleaved). A gn model with
// complex conductivity needs them, every other model refuses them; both refusals name the option.
// `cuda_l2_persist`: CudaOptions::l2_persist (bench --cuda-l2 off measures H streamed instead).
Backend make_backend(const std::string& which, const recon::Model& model, size_t max_batch,
                     size_t cpu_threads = 1, bool interleaved_frames = false,
                     bool cuda_l2_persist = true);

// Checks the frames against the model (make_backend calls it too); throws CommandError naming
// --complex interleaved. Commands call it before they read a reference, so that the refusal is
// this message and not a frame-length mismatch.
void check_complex_frames(const recon::Model& model, bool interleaved_frames);

// The CUDA plugin's table when the plugin loaded and a device is there; else null, with the
// reason in *why (when given). Loads the plugin on first call, once per process; any thread.
const gpu::PluginApi* cuda_plugin(std::string* why);

}  // namespace eit::cli
