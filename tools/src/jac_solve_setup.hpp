#pragma once
// Where `model build` runs JAC's n_meas-sized solve (--backend auto|cpu|cuda), and the CUDA
// start-up taken off its critical path: warm_up_in_background() loads the plugin and makes the
// solve's CUDA context, cuBLAS/cuSOLVER handles and pinned staging ring on a thread of its own
// while the build meshes and solves the forward problem; configure() joins that thread before
// the solve. The choice is jac_solve_on's of backend_factory.hpp: the plugin's solve (cuBLAS/
// cuSOLVER, double) for cuda, and for auto when a device is there and n_elems·n_meas² ≥
// kJacGpuMinWork; Eigen on this CPU otherwise. Errors surface at the join, as they would have
// in the solve: cuda without a device is CommandError("--backend cuda: no CUDA …"), a CUDA
// set-up error is rethrown as it was thrown; under auto both fall back to the CPU, said in
// note(). --backend cpu never loads the plugin. Set-up only (the main thread calls it).
#include <exception>
#include <string>
#include <thread>

#include "eit/gpu/cuda_jac_solve.hpp"
#include "eit/recon/jac.hpp"

namespace eit::cli {

// Below this n_elems·n_meas², auto keeps the solve on the CPU: the CUDA start costs more.
inline constexpr double kJacGpuMinWork = 1e10;

class JacSolveSetup {
 public:
  explicit JacSolveSetup(std::string which);  // CommandError for a name not auto|cpu|cuda
  ~JacSolveSetup();                           // joins the warm-up thread
  JacSolveSetup(const JacSolveSetup&) = delete;
  JacSolveSetup& operator=(const JacSolveSetup&) = delete;

  // Starts the warm-up thread unless the backend is cpu or it was started already.
  void warm_up_in_background();

  // Sets o's solve for a Jᵀ of `work` = n_elems·n_meas²: diagonal_solve_to_model (the model's
  // float H straight from the device) when model_form, else diagonal_solve (double H). On the
  // CPU: the CPU's model-form solve over o.threads when model_form, else nothing (build_jac's
  // default). Set o.threads first. Joins the warm-up first.
  void configure(recon::JacOptions& o, double work, bool model_form);

  const std::string& where() const { return where_; }  // "cuda (…)" or "cpu (…, why)"
  const std::string& note() const { return note_; }    // an auto fallback, else empty
  // The CUDA solve's parts on one line (warm-up, wait at the join, JacSolveTimes), given the
  // matrix step's wall time, the rest of which is host work; empty when no CUDA solve ran.
  std::string timing(double matrix_ms) const;

 private:
  void join();

  std::string which_, where_, note_;
  std::thread thread_;
  bool started_ = false;
  double warm_ms_ = 0, join_wait_ms_ = 0;
  std::exception_ptr warm_error_;
  bool solved_on_gpu_ = false;
  gpu::JacSolveTimes times_;
};

}  // namespace eit::cli
