// CudaGaussNewton (contract: eit/gpu/cuda_gauss_newton.hpp). Self-contained: its own kernels
// (cuda_gn_kernels.cu) and cuSOLVER/cuBLAS handles, error checks from the header-only
// solver_check.hpp; nothing linked from the difference-imaging backend. Host code only, compiled
// with the project's C++ flags.
#include "eit/gpu/cuda_gauss_newton.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include "cuda_gn_kernels.hpp"
#include "eit/recon/gn_homogeneous_fit.hpp"
#include "solver_check.hpp"

namespace eit::gpu {
namespace {

template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  void alloc(size_t count) {
    n = count;
    GN_CK(cudaMalloc(&p, sizeof(T) * (count ? count : 1)));
  }
  void upload(const T* host, size_t count) {
    GN_CK(cudaMemcpy(p, host, sizeof(T) * count, cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(p); }
};

}  // namespace

bool cuda_gn_available(std::string* why) {
  int count = 0;
  const cudaError_t s = cudaGetDeviceCount(&count);
  if (s == cudaSuccess && count > 0) return true;
  if (why) *why = s != cudaSuccess ? cudaGetErrorString(s) : "no device";
  return false;
}

struct CudaGaussNewton::Impl {
  recon::GnOptions o;
  int n = 0, n_e = 0, n_el = 0, n_m = 0, ref = 0;
  bool small_meas = true;  // n_m ≤ n_e: J R⁻¹ Jᵀ + λI, else JᵀJ + λR
  double exponent = 0;     // prior exponent, < 0 = tikhonov
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  cudaEvent_t ev[5] = {};
  DeviceArray<int> elems, el_nodes, info, pivots;
  DeviceArray<int4> meas;
  DeviceArray<double> local, sx, sy, inv4a, sigma, next, v, v0, r, K, X, gx, gy, jt, s, prior,
      normal, rhs, work, scalars, lambda_dev, blas_work;
  int lwork = 0;
  double* lambda_host = nullptr;  // pinned: λ of the next iteration, copied up before it runs
  // The iteration as a CUDA graph, captured once per iterate buffer (σ and the candidate swap
  // roles after each accepted step, and a graph bakes its pointers in): exec[i] reads σ from
  // sigma_buffer[i]. Captured lazily on first use; a failed capture leaves graph_note saying why
  // and the iteration runs launched.
  bool use_graph = true;
  double* sigma_buffer[2] = {};
  cudaGraphExec_t exec[2] = {};
  bool capture_failed = false;
  std::string graph_note = "not captured yet";
  Eigen::VectorXd v_unit;
  recon::GnTimings timings;

  void forward() {  // X = fields at sigma; v0, r
    GN_CK(cudaMemsetAsync(K.p, 0, sizeof(double) * n * (size_t)n, stream));
    gn_kernels::launch_assemble(stream, K.p, n, elems.p, local.p, sigma.p, n_e, ref);
    GN_CK(cudaMemsetAsync(X.p, 0, sizeof(double) * n * (size_t)n_el, stream));
    gn_kernels::launch_unit_currents(stream, X.p, n, el_nodes.p, n_el);
    if (o.pyeit_compat) {  // σ may be ≤ 0 there: K indefinite, LU with pivoting
      GN_CK(cusolverDnDgetrf(solver, n, n, K.p, n, work.p, pivots.p, info.p));
      GN_CK(cusolverDnDgetrs(solver, CUBLAS_OP_N, n, n_el, K.p, n, pivots.p, X.p, n, info.p + 1));
    } else {
      GN_CK(cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, n, K.p, n, work.p, lwork, info.p));
      GN_CK(cusolverDnDpotrs(solver, CUBLAS_FILL_MODE_LOWER, n, n_el, K.p, n, X.p, n, info.p + 1));
    }
    gn_kernels::launch_measure(stream, X.p, n, el_nodes.p, meas.p, n_m, v.p, v0.p, r.p);
  }

  void jacobian() {
    gn_kernels::launch_gradients(stream, X.p, n, elems.p, sx.p, sy.p, n_e, n_el, gx.p, gy.p);
    gn_kernels::launch_jacobian_t(stream, gx.p, gy.p, inv4a.p, n_e, meas.p, n_m, jt.p);
  }

  void system() {  // λ: lambda_dev
    gn_kernels::launch_diagonal_prior(stream, jt.p, n_e, n_m, exponent, prior.p);
    const double one = 1, zero = 0;
    if (small_meas) {
      gn_kernels::launch_scale_rows(stream, jt.p, prior.p, n_e, n_m, s.p);
      GN_CK(cublasDsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n_m, n_e, &one, s.p, n_e, &zero,
                        normal.p, n_m));
      gn_kernels::launch_add_diagonal(stream, normal.p, n_m, lambda_dev.p, nullptr);
      GN_CK(cudaMemcpyAsync(rhs.p, r.p, sizeof(double) * n_m, cudaMemcpyDeviceToDevice, stream));
    } else {
      GN_CK(cublasDsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n_e, n_m, &one, jt.p, n_e, &zero,
                        normal.p, n_e));
      gn_kernels::launch_add_diagonal(stream, normal.p, n_e, lambda_dev.p, prior.p);
      GN_CK(cublasDgemv(blas, CUBLAS_OP_N, n_e, n_m, &one, jt.p, n_e, r.p, 1, &zero, rhs.p, 1));
    }
  }

  void solve_step() {  // d (in rhs, n_e) then the update and its reductions
    const int m = small_meas ? n_m : n_e;
    GN_CK(cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, m, normal.p, m, work.p, lwork,
                           info.p + 2));
    GN_CK(
        cusolverDnDpotrs(solver, CUBLAS_FILL_MODE_LOWER, m, 1, normal.p, m, rhs.p, m, info.p + 3));
    double* d = rhs.p;
    if (small_meas) {  // d = R⁻¹ Jᵀ y, the R⁻¹ inside update
      const double one = 1, zero = 0;
      GN_CK(cublasDgemv(blas, CUBLAS_OP_N, n_e, n_m, &one, jt.p, n_e, rhs.p, 1, &zero, s.p, 1));
      d = s.p;
    }
    gn_kernels::launch_update(stream, sigma.p, d, small_meas ? prior.p : nullptr, n_e, next.p,
                              scalars.p);
  }

  // One whole iteration (forward … update), with timing events when `timed`.
  void iteration(bool timed) {
    if (timed) GN_CK(cudaEventRecord(ev[0], stream));
    forward();
    if (timed) GN_CK(cudaEventRecord(ev[1], stream));
    jacobian();
    if (timed) GN_CK(cudaEventRecord(ev[2], stream));
    system();
    if (timed) GN_CK(cudaEventRecord(ev[3], stream));
    solve_step();
    if (timed) GN_CK(cudaEventRecord(ev[4], stream));
  }

  // The graph for the current iterate buffer, captured on first need; null when capture failed.
  cudaGraphExec_t graph() {
    const int slot = sigma.p == sigma_buffer[0] ? 0 : 1;
    if (exec[slot] || capture_failed) return exec[slot];
    cudaGraph_t g = nullptr;
    GN_CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::string why;
    try {
      iteration(false);
    } catch (const std::exception& e) {
      why = e.what();
    }
    const cudaError_t end = cudaStreamEndCapture(stream, &g);
    if (why.empty() && end != cudaSuccess) why = cudaGetErrorString(end);
    if (why.empty()) {
      const cudaError_t inst = cudaGraphInstantiate(&exec[slot], g, 0);
      if (inst != cudaSuccess) {
        why = cudaGetErrorString(inst);
        exec[slot] = nullptr;
      }
    }
    if (g) cudaGraphDestroy(g);
    if (!why.empty()) {
      (void)cudaGetLastError();  // clear the error the failed capture left behind
      capture_failed = true;
      graph_note = "capture failed, launched instead: " + why;
      return nullptr;
    }
    graph_note = "captured";
    return exec[slot];
  }

  float elapsed(int a, int b) {
    float ms = 0;
    GN_CK(cudaEventElapsedTime(&ms, ev[a], ev[b]));
    return ms;
  }
};

CudaGaussNewton::CudaGaussNewton(const recon::Mesh& mesh, const recon::Protocol& protocol,
                                 const recon::GnOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  recon::validate_gn_options(options, mesh.n_elems());
  if (options.prior == recon::GnOptions::Prior::kLaplacian)
    throw std::invalid_argument("gn cuda: the laplacian prior runs on the CPU solver only");
  if (options.start == recon::GnOptions::Start::kPerElement)
    throw std::invalid_argument("gn cuda: give a per-element start to solve() as a warm start");
  m.o = options;
  m.n = mesh.n_nodes();
  m.n_e = mesh.n_elems();
  m.n_el = mesh.n_electrodes();
  m.n_m = static_cast<int>(protocol.n_meas());
  m.ref = mesh.ref_node;
  m.small_meas = m.n_m <= m.n_e;
  using P = recon::GnOptions::Prior;
  m.exponent = options.prior == P::kTikhonov ? -1.0
               : options.prior == P::kKotre  ? options.p
               : options.prior == P::kLm     ? 1.0
                                             : 0.5;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw std::runtime_error("gn cuda: no CUDA device");
  // Geometry as in recon's P1 elements: s0 = c − b, s1 = a − c, s2 = b − a; K_e = s sᵀ / 4A.
  std::vector<int> el(3 * m.n_e);
  std::vector<double> sx(3 * m.n_e), sy(3 * m.n_e), inv4a(m.n_e), local(9 * m.n_e);
  for (int e = 0; e < m.n_e; ++e) {
    const int a = mesh.elements(e, 0), b = mesh.elements(e, 1), c = mesh.elements(e, 2);
    const int nodes[3] = {a, b, c}, from[3] = {b, c, a}, to[3] = {c, a, b};
    for (int i = 0; i < 3; ++i) {
      el[3 * e + i] = nodes[i];
      sx[3 * e + i] = mesh.nodes(to[i], 0) - mesh.nodes(from[i], 0);
      sy[3 * e + i] = mesh.nodes(to[i], 1) - mesh.nodes(from[i], 1);
    }
    const double area = 0.5 * (sx[3 * e] * sy[3 * e + 1] - sy[3 * e] * sx[3 * e + 1]);
    inv4a[e] = 1.0 / (4.0 * area);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        local[9 * e + 3 * i + j] =
            (sx[3 * e + i] * sx[3 * e + j] + sy[3 * e + i] * sy[3 * e + j]) * inv4a[e];
  }
  std::vector<int4> meas;
  for (const recon::Measurement& q : protocol.measurements) {
    const recon::Drive& d = protocol.drives[static_cast<size_t>(q.drive)];
    meas.push_back(make_int4(d.source, d.sink, q.positive, q.negative));
  }
  GN_CK(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking));
  GN_CK(cublasCreate(&m.blas));
  GN_CK(cublasSetStream(m.blas, m.stream));
  GN_CK(cusolverDnCreate(&m.solver));
  GN_CK(cusolverDnSetStream(m.solver, m.stream));
  for (cudaEvent_t& e : m.ev) GN_CK(cudaEventCreate(&e));
  const size_t em = static_cast<size_t>(m.n_e) * m.n_m, dn = m.small_meas ? m.n_m : m.n_e;
  m.elems.alloc(el.size());
  m.elems.upload(el.data(), el.size());
  m.el_nodes.alloc(m.n_el);
  m.el_nodes.upload(mesh.electrode_nodes.data(), m.n_el);
  m.meas.alloc(meas.size());
  m.meas.upload(meas.data(), meas.size());
  m.local.alloc(local.size());
  m.local.upload(local.data(), local.size());
  m.sx.alloc(sx.size());
  m.sx.upload(sx.data(), sx.size());
  m.sy.alloc(sy.size());
  m.sy.upload(sy.data(), sy.size());
  m.inv4a.alloc(inv4a.size());
  m.inv4a.upload(inv4a.data(), inv4a.size());
  m.info.alloc(4);
  m.pivots.alloc(m.n);
  for (auto* a : {&m.sigma, &m.next, &m.prior}) a->alloc(m.n_e);
  for (auto* a : {&m.v, &m.v0, &m.r}) a->alloc(m.n_m);
  m.K.alloc(static_cast<size_t>(m.n) * m.n);
  m.X.alloc(static_cast<size_t>(m.n) * m.n_el);
  m.gx.alloc(static_cast<size_t>(m.n_e) * m.n_el);
  m.gy.alloc(static_cast<size_t>(m.n_e) * m.n_el);
  m.jt.alloc(em);
  m.s.alloc(m.small_meas ? em : m.n_e);
  m.normal.alloc(dn * dn);
  m.rhs.alloc(std::max<size_t>(dn, m.n_e));
  m.scalars.alloc(4);
  m.lambda_dev.alloc(1);
  GN_CK(cudaMallocHost(&m.lambda_host, sizeof(double)));
  *m.lambda_host = options.lambda0;
  m.lambda_dev.upload(m.lambda_host, 1);
  m.sigma_buffer[0] = m.sigma.p;
  m.sigma_buffer[1] = m.next.p;
  // cuBLAS's own workspace, so that it allocates nothing while the iteration is captured.
  m.blas_work.alloc(size_t{4} << 17);  // 4 MiB
  GN_CK(cublasSetWorkspace(m.blas, m.blas_work.p, sizeof(double) * m.blas_work.n));
  int l1 = 0, l2 = 0, l3 = 0;
  GN_CK(cusolverDnDpotrf_bufferSize(m.solver, CUBLAS_FILL_MODE_LOWER, m.n, m.K.p, m.n, &l1));
  GN_CK(cusolverDnDgetrf_bufferSize(m.solver, m.n, m.n, m.K.p, m.n, &l2));
  GN_CK(cusolverDnDpotrf_bufferSize(m.solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(dn),
                                    m.normal.p, static_cast<int>(dn), &l3));
  m.lwork = std::max({l1, l2, l3, 1});
  m.work.alloc(static_cast<size_t>(m.lwork));
  // F(1) once, for the fitted start.
  std::vector<double> ones(m.n_e, 1.0), zeros(m.n_m, 0.0);
  m.sigma.upload(ones.data(), ones.size());
  m.v.upload(zeros.data(), zeros.size());
  m.iteration(false);  // F(1), and every library call once before any capture (lazy set-up)
  m.v_unit.resize(m.n_m);
  GN_CK(cudaMemcpyAsync(m.v_unit.data(), m.v0.p, sizeof(double) * m.n_m, cudaMemcpyDeviceToHost,
                        m.stream));
  GN_CK(cudaStreamSynchronize(m.stream));
}

CudaGaussNewton::~CudaGaussNewton() {
  if (!impl_) return;
  for (cudaGraphExec_t g : impl_->exec)
    if (g) cudaGraphExecDestroy(g);
  cudaFreeHost(impl_->lambda_host);
  for (cudaEvent_t e : impl_->ev) cudaEventDestroy(e);
  cusolverDnDestroy(impl_->solver);
  cublasDestroy(impl_->blas);
  cudaStreamDestroy(impl_->stream);
}

const recon::GnTimings& CudaGaussNewton::timings() const noexcept { return impl_->timings; }
void CudaGaussNewton::use_graph(bool on) noexcept { impl_->use_graph = on; }
bool CudaGaussNewton::graph_active() const noexcept {
  return impl_->use_graph && !impl_->capture_failed;
}
const std::string& CudaGaussNewton::graph_note() const noexcept { return impl_->graph_note; }
void CudaGaussNewton::reset_timings() noexcept { impl_->timings = {}; }

recon::GnResult CudaGaussNewton::solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                                       int max_iterations) {
  Impl& m = *impl_;
  if (v.size() != m.n_m)
    throw std::invalid_argument(
        fmt::format("gn cuda: frame has {} values, expected {}", v.size(), m.n_m));
  recon::GnResult result;
  // The fitted start solves at the frame's own scale, as the CPU solver does (λ·σ₀^(4(p−1)),
  // gn_homogeneous_fit.hpp), warm-started or not.
  const bool fitted = m.o.start == recon::GnOptions::Start::kFitted;
  const recon::HomogeneousFit fit =
      fitted ? recon::fit_homogeneous(m.v_unit, v) : recon::HomogeneousFit{};
  const double sigma0 = fitted ? fit.sigma : m.o.start_value;
  const double lambda_scale = fitted ? recon::gn_lambda_scale(m.o, fit) : 1.0;
  if (start.size() == m.n_e) {
    result.sigma = start;
  } else {
    result.sigma =
        Eigen::VectorXd::Constant(m.n_e, std::isfinite(sigma0) ? sigma0 : m.o.start_value);
  }
  const double start_norm = start.size() == 0 ? std::abs(result.sigma(0)) : result.sigma.norm();
  const int iterations = max_iterations < 0 ? m.o.max_iterations : max_iterations;
  GN_CK(cudaMemcpyAsync(m.v.p, v.data(), sizeof(double) * m.n_m, cudaMemcpyHostToDevice, m.stream));
  GN_CK(cudaMemcpyAsync(m.sigma.p, result.sigma.data(), sizeof(double) * m.n_e,
                        cudaMemcpyHostToDevice, m.stream));
  double lambda = m.o.lambda0;
  double scalars[4];
  int info[4];
  // The kernels read the iterate from m.sigma and write the candidate to m.next; an accepted
  // step swaps the two buffers.
  for (int k = 1; k <= iterations; ++k) {
    // the previous copy from lambda_host finished at the last synchronise
    *m.lambda_host = lambda * lambda_scale;
    GN_CK(cudaMemcpyAsync(m.lambda_dev.p, m.lambda_host, sizeof(double), cudaMemcpyHostToDevice,
                          m.stream));
    const cudaGraphExec_t graph = m.use_graph ? m.graph() : nullptr;
    if (graph) {
      GN_CK(cudaEventRecord(m.ev[0], m.stream));
      GN_CK(cudaGraphLaunch(graph, m.stream));
      GN_CK(cudaEventRecord(m.ev[4], m.stream));
    } else {
      m.iteration(true);
    }
    GN_CK(cudaMemcpyAsync(scalars, m.scalars.p, sizeof scalars, cudaMemcpyDeviceToHost, m.stream));
    GN_CK(cudaMemcpyAsync(info, m.info.p, sizeof info, cudaMemcpyDeviceToHost, m.stream));
    GN_CK(cudaStreamSynchronize(m.stream));
    if (graph) {  // one graph: no split; the whole iteration is counted as its total
      m.timings.total += 1e-3 * m.elapsed(0, 4);
    } else {
      m.timings.forward += 1e-3 * m.elapsed(0, 1);
      m.timings.jacobian += 1e-3 * m.elapsed(1, 2);
      m.timings.system += 1e-3 * m.elapsed(2, 3);
      m.timings.solve += 1e-3 * m.elapsed(3, 4);
      m.timings.total += 1e-3 * m.elapsed(0, 4);
    }
    ++m.timings.iterations;
    const double d_norm = std::sqrt(scalars[0]), x_norm = std::sqrt(scalars[1]);
    result.last_step = d_norm / (m.o.pyeit_compat ? start_norm : x_norm);
    const bool singular = info[0] != 0 || info[2] != 0;
    const bool bad = singular || scalars[3] != 0 || (!m.o.pyeit_compat && !(scalars[2] > 0));
    if (bad) {
      result.status = recon::GnStatus::kDiverged;
      break;
    }
    const bool converged = result.last_step < m.o.tolerance;
    if (converged && m.o.pyeit_compat) {
      result.status = recon::GnStatus::kConverged;
      break;
    }
    std::swap(m.sigma.p, m.next.p);  // the new iterate becomes current
    result.iterations = k;
    if (converged) {
      result.status = recon::GnStatus::kConverged;
      break;
    }
    lambda = std::max(lambda * m.o.lambda_decay, m.o.lambda_min);
  }
  GN_CK(cudaMemcpyAsync(result.sigma.data(), m.sigma.p, sizeof(double) * m.n_e,
                        cudaMemcpyDeviceToHost, m.stream));
  GN_CK(cudaStreamSynchronize(m.stream));
  return result;
}

}  // namespace eit::gpu
