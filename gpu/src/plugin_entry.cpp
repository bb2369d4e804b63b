// The plugin's one exported symbol (plugin_api.hpp): the table of the backend's entry points.
#include "eit/gpu/plugin_api.hpp"

#include "eit/gpu/cuda_jac_solve.hpp"

namespace {

const eit::gpu::PluginApi kApi{
    eit::gpu::kPluginAbiVersion,
    sizeof(eit::gpu::CudaOptions),
    sizeof(eit::recon::Model),
    [](std::string* why) { return eit::gpu::cuda_available(why); },
    [] { return eit::gpu::cuda_device_description(); },
    [](const eit::recon::Model& model, const eit::gpu::CudaOptions& options) {
      return eit::gpu::make_cuda_reconstructor(model, options);
    },
    [](const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda) {
      return eit::gpu::cuda_jac_diagonal_solve(jt, r_inv, lambda);
    },
    [] { return eit::gpu::cuda_jac_warm_up(); },
    [](const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda,
       eit::gpu::JacSolveTimes* times) {
      return eit::gpu::cuda_jac_diagonal_solve_model(jt, r_inv, lambda, {}, times);
    },
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const eit::gpu::PluginApi*
eit_gpu_plugin_api_v1() {
  return &kApi;
}
