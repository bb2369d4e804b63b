#pragma once
// The plugin's reconstructor for "gn" models: pipeline::GnReconstructor (warm-started streaming,
// flags and counts as on the host) around CudaGaussNewton (eit/gpu/cuda_gauss_newton.hpp), so
// `eitstream run|bench --backend cuda` stream absolute images from the device. Set-up only;
// throws std::runtime_error / std::invalid_argument when the model is beyond the CUDA solver
// (complete electrodes, the laplacian prior, tetrahedra, complex conductivity) or no device can
// be used, naming why.
#include <memory>

#include "eit/gpu/cuda_backend.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu {

std::unique_ptr<pipeline::Reconstructor> make_cuda_gn_reconstructor(const recon::Model& model,
                                                                    const CudaOptions& options);

}  // namespace eit::gpu
