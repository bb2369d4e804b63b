// JAC's solve placement and the background CUDA warm-up of `model build` (jac_solve_setup.hpp).
#include "jac_solve_setup.hpp"

#include <chrono>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "backend_factory.hpp"
#include "command_registry.hpp"
#include "eit/gpu/plugin_api.hpp"

namespace eit::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// "init 0 ms, alloc 3, upload 130 (1.63 GB, 12.5 GB/s), …" on one line.
std::string describe(const gpu::JacSolveTimes& t) {
  const auto rate = [](size_t bytes, double ms) {
    return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0;
  };
  return fmt::format(
      "init {:.0f} ms, alloc {:.0f}, upload {:.0f} ({:.2f} GB, {:.1f} GB/s), products {:.0f}, "
      "solve {:.0f}, convert {:.0f}, download {:.0f} ({:.2f} GB, {:.1f} GB/s), free {:.0f}",
      t.init_ms, t.alloc_ms, t.upload_ms, static_cast<double>(t.upload_bytes) / 1e9,
      rate(t.upload_bytes, t.upload_ms), t.products_ms, t.solve_ms, t.convert_ms, t.download_ms,
      static_cast<double>(t.download_bytes) / 1e9, rate(t.download_bytes, t.download_ms),
      t.free_ms);
}

}  // namespace

JacSolveSetup::JacSolveSetup(std::string which) : which_(std::move(which)) {
  if (which_ != "auto" && which_ != "cpu" && which_ != "cuda")
    throw CommandError(fmt::format("--backend '{}': expected auto, cpu or cuda", which_));
}

JacSolveSetup::~JacSolveSetup() { join(); }

void JacSolveSetup::warm_up_in_background() {
  if (which_ == "cpu" || started_) return;
  try {
    thread_ = std::thread([this] {
      const auto t0 = Clock::now();
      try {  // no plugin or no device: nothing to warm; configure() says why, as before
        if (const gpu::PluginApi* api = cuda_plugin(nullptr)) api->jac_warm_up();
      } catch (...) {
        warm_error_ = std::current_exception();
      }
      warm_ms_ = ms_since(t0);
    });
    started_ = true;
  } catch (const std::system_error&) {  // no thread: the solve makes the context itself
  }
}

void JacSolveSetup::join() {
  if (!thread_.joinable()) return;
  const auto t0 = Clock::now();
  thread_.join();
  join_wait_ms_ = ms_since(t0);
}

void JacSolveSetup::configure(recon::JacOptions& o, double work, bool model_form) {
  join();
  const int threads = o.threads;
  // On the CPU the model's float H is converted tile by tile (no double H of n_elems × n_meas).
  const auto on_cpu = [&](std::string where) {
    where_ = std::move(where);
    if (model_form)
      o.diagonal_solve_to_model = [threads](const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                            double lambda) {
        return recon::jac_diagonal_solve_cpu_model(jt, r_inv, lambda, threads);
      };
  };
  if (which_ == "cpu") return on_cpu("cpu (Eigen, --backend cpu)");
  if (which_ == "auto" && work < kJacGpuMinWork)
    return on_cpu(
        fmt::format("cpu (Eigen; n_elems·n_meas² = {:.2g} < {:.0e}, too small to pay for CUDA)",
                    work, kJacGpuMinWork));
  std::string why;
  if (resolve_backend(which_, &why) != "cuda")  // cuda without a device throws here
    return on_cpu(fmt::format("cpu (Eigen; {})", why));
  if (warm_error_) {  // the same error the solve would have met making its context
    if (which_ == "cuda") std::rethrow_exception(warm_error_);
    on_cpu("cpu (Eigen; the CUDA set-up failed)");
    note_ =
        fmt::format("the CUDA set-up failed, the solve ran on the CPU: {}", what_of(warm_error_));
    return;
  }
  const gpu::PluginApi* api = cuda_plugin(nullptr);
  where_ = fmt::format("cuda ({})", api->describe());
  const bool fall_back = which_ == "auto";  // auto: a device error (too little memory) → CPU
  const auto failed = [this](const std::exception& e) {
    note_ = fmt::format("the CUDA solve failed, done on the CPU instead: {}", e.what());
  };
  if (model_form) {
    o.diagonal_solve_to_model = [this, api, fall_back, failed, threads](
                                    const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                    double lambda) -> recon::MatrixRowMajorF {
      try {
        recon::MatrixRowMajorF h = api->jac_diagonal_solve_model(jt, r_inv, lambda, &times_);
        solved_on_gpu_ = true;
        return h;
      } catch (const std::exception& e) {
        if (!fall_back) throw;
        failed(e);
        return recon::jac_diagonal_solve_cpu_model(jt, r_inv, lambda, threads);
      }
    };
    return;
  }
  o.diagonal_solve = [api, fall_back, failed, threads](
                         const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda) {
    try {
      return api->jac_diagonal_solve(jt, r_inv, lambda);
    } catch (const std::exception& e) {
      if (!fall_back) throw;
      failed(e);
      return recon::jac_diagonal_solve_cpu(jt, r_inv, lambda, threads);
    }
  };
}

std::string JacSolveSetup::timing(double matrix_ms) const {
  if (!solved_on_gpu_) return {};
  const gpu::JacSolveTimes& t = times_;
  const double device = t.init_ms + t.alloc_ms + t.upload_ms + t.products_ms + t.solve_ms +
                        t.convert_ms + t.download_ms + t.free_ms;
  return fmt::format(
      "cuda: {}; warm-up {}, {:.0f} ms waited for at the join; host (R⁻¹, v_ref, checks) "
      "{:.0f} ms",
      describe(t),
      started_ ? fmt::format("{:.0f} ms on a background thread", warm_ms_) : "not started",
      join_wait_ms_, matrix_ms - device - join_wait_ms_);
}

}  // namespace eit::cli
