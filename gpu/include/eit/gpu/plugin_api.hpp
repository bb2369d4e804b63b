#pragma once
// The CUDA backend as a plugin: libeit_gpu.so exports one C symbol, kPluginEntry, returning a
// PluginApi table. The eitstream binary never links CUDA: it dlopen()s the plugin only when
// `--backend cuda|auto` asks for it (tools/src/backend_factory.cpp), so it starts on machines
// without CUDA libraries. Plugin and host are built from the same tree with the same compiler
// (C++ types cross the boundary); abi_version and the type sizes guard against a stale plugin.
// The plugin is never unloaded (reconstructors' code lives in it).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <Eigen/Core>

#include "eit/gpu/cuda_backend.hpp"
#include "eit/gpu/cuda_jac_solve.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu {

// 2: jac_diagonal_solve; 3: jac_warm_up, jac_diagonal_solve_model, JacSolveTimes
inline constexpr uint32_t kPluginAbiVersion = 3;
inline constexpr const char* kPluginEntry = "eit_gpu_plugin_api_v1";
inline constexpr const char* kPluginFile = "libeit_gpu.so";

struct PluginApi {
  uint32_t abi_version;
  uint32_t sizeof_options;  // sizeof(CudaOptions) when the plugin was built
  uint32_t sizeof_model;    // sizeof(recon::Model)
  // cuda_available / cuda_device_description / make_cuda_reconstructor of cuda_backend.hpp.
  bool (*available)(std::string* why);
  std::string (*describe)();
  std::unique_ptr<pipeline::Reconstructor> (*make)(const recon::Model& model,
                                                   const CudaOptions& options);
  // cuda_jac_diagonal_solve of cuda_jac_solve.hpp: JAC's n_meas-sized solve in double on the
  // device (recon::JacOptions::DiagonalSolve), for `model build`.
  Eigen::MatrixXd (*jac_diagonal_solve)(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                        double lambda);
  // cuda_jac_warm_up and cuda_jac_diagonal_solve_model of cuda_jac_solve.hpp: the context made
  // ahead (on `model build`'s background thread), and the solve returning the model's float H
  // with where its time went (times may be null).
  double (*jac_warm_up)();
  recon::MatrixRowMajorF (*jac_diagonal_solve_model)(const Eigen::MatrixXd& jt,
                                                     const Eigen::VectorXd& r_inv, double lambda,
                                                     JacSolveTimes* times);
};

using PluginEntry = const PluginApi* (*)();

}  // namespace eit::gpu
