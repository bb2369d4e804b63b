// CUDA Gauss–Newton behind the streaming reconstructor (contract: cuda_gn_backend.hpp).
#include "cuda_gn_backend.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>

#include <fmt/format.h>

#include "eit/gpu/cuda_gauss_newton.hpp"
#include "eit/pipeline/gn_reconstructor.hpp"

namespace eit::gpu {
namespace {

// CudaGaussNewton as a GnSolver. The device is made current on every call: set-up runs on the
// main thread, solve() on the pipeline's reconstruction thread. A per-element start becomes the
// start of every cold frame (CudaGaussNewton itself takes only scalar/fitted starts).
class CudaGnSolver final : public pipeline::GnSolver {
 public:
  CudaGnSolver(const recon::Model& model, int device)
      : device_(device), start_perm_(model.gn->options.start_perm), gn_(make(model, device)) {}

  recon::GnResult solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                        int max_iterations) override {
    if (const cudaError_t s = cudaSetDevice(device_); s != cudaSuccess)
      throw std::runtime_error(
          fmt::format("gn cuda: cudaSetDevice({}): {}", device_, cudaGetErrorString(s)));
    return gn_->solve(v, start.size() == 0 ? start_perm_ : start, max_iterations);
  }
  const recon::GnTimings& timings() const noexcept override { return gn_->timings(); }

 private:
  static std::unique_ptr<CudaGaussNewton> make(const recon::Model& model, int device) {
    const recon::GnSetup& s = *model.gn;
    if (s.forward.electrodes != recon::ForwardOptions::Electrodes::kPoint)
      throw std::runtime_error(
          "gn cuda: the model uses complete electrodes; the CUDA solver has point electrodes "
          "only (use --backend cpu)");
    if (s.options.complex_conductivity)
      throw std::runtime_error(
          "gn cuda: the model has complex conductivity; the CUDA solver is real only (use "
          "--backend cpu)");
    if (s.mesh.elements.cols() != 3)
      throw std::runtime_error(fmt::format(
          "gn cuda: the mesh has {}-node elements; the CUDA solver takes triangles only (use "
          "--backend cpu)",
          s.mesh.elements.cols()));
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
      throw std::runtime_error(
          fmt::format("gn cuda: cudaSetDevice({}): {}", device, cudaGetErrorString(e)));
    recon::GnOptions o = s.options;
    if (o.start == recon::GnOptions::Start::kPerElement) {  // given to solve() instead
      o.start = recon::GnOptions::Start::kScalar;
      o.start_perm.resize(0);
    }
    return std::make_unique<CudaGaussNewton>(s.mesh, model.protocol, o);
  }

  int device_;
  Eigen::VectorXd start_perm_;  // empty unless the model starts per element
  std::unique_ptr<CudaGaussNewton> gn_;
};

}  // namespace

std::unique_ptr<pipeline::Reconstructor> make_cuda_gn_reconstructor(const recon::Model& model,
                                                                    const CudaOptions& options) {
  if (!model.gn)
    throw std::invalid_argument(
        fmt::format("gn cuda: model {} is '{}', not a gn model", model.id, model.algorithm));
  return std::make_unique<pipeline::GnReconstructor>(
      model, pipeline::GnReconstructorOptions{options.max_batch, -1, true},
      std::make_unique<CudaGnSolver>(model, options.device), "cuda-gn");
}

}  // namespace eit::gpu
