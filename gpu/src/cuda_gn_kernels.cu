// The kernels of CudaGaussNewton (cuda_gauss_newton.cpp) and their launchers. No Eigen here: the
// host class is compiled by the C++ compiler with the project's flags, so Eigen's allocation
// alignment is the same in every translation unit that creates or frees Eigen objects.
#include "cuda_gn_kernels.hpp"

#include <cuda_runtime.h>

namespace eit::gpu::gn_kernels {
namespace {

constexpr int kThreads = 256;
int blocks(long long n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

// K = Σ σ_e K_e (dense, column-major n × n), rows/columns of ref skipped, K[ref,ref] = 1.
__global__ void assemble(double* K, int n, const int* elems, const double* local,
                         const double* sigma, int n_e, int ref) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= 9LL * n_e) {
    if (t == 9LL * n_e) K[(long long)ref * n + ref] = 1.0;
    return;
  }
  const int e = static_cast<int>(t / 9), k = static_cast<int>(t % 9);
  const int r = elems[3 * e + k / 3], c = elems[3 * e + k % 3];
  if (r == ref || c == ref) return;
  atomicAdd(&K[(long long)c * n + r], sigma[e] * local[9 * e + k]);
}

// rhs column l = unit current into electrode l.
__global__ void unit_currents(double* B, int n, const int* el_nodes, int n_el) {
  const int l = blockIdx.x * blockDim.x + threadIdx.x;
  if (l < n_el) B[(long long)l * n + el_nodes[l]] = 1.0;
}

// v0 from the fields X (n × n_el), residual r = v − v0. meas: drive src, sink, pos, neg.
__global__ void measure(const double* X, int n, const int* el_nodes, const int4* meas, int n_m,
                        const double* v, double* v0, double* r) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n_m) return;
  const int4 q = meas[k];
  auto z = [&](int i, int j) { return X[(long long)j * n + el_nodes[i]]; };
  const double value = (z(q.z, q.x) - z(q.z, q.y)) - (z(q.w, q.x) - z(q.w, q.y));
  v0[k] = value;
  r[k] = v[k] - value;
}

// Rotated gradients ×2A of every electrode field on every element: G (n_e × n_el, col-major).
__global__ void gradients(const double* X, int n, const int* elems, const double* sx,
                          const double* sy, int n_e, int n_el, double* gx, double* gy) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= (long long)n_e * n_el) return;
  const int e = static_cast<int>(t % n_e), l = static_cast<int>(t / n_e);
  double ax = 0, ay = 0;
  for (int i = 0; i < 3; ++i) {
    const double x = X[(long long)l * n + elems[3 * e + i]];
    ax += sx[3 * e + i] * x;
    ay += sy[3 * e + i] * x;
  }
  gx[t] = ax;
  gy[t] = ay;
}

// Jᵀ[e, k] = (G_adjoint(k) · G_drive(k)) / 4A (n_e × n_m, col-major).
__global__ void jacobian_t(const double* gx, const double* gy, const double* inv4a, int n_e,
                           const int4* meas, int n_m, double* jt) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= (long long)n_e * n_m) return;
  const int e = static_cast<int>(t % n_e), k = static_cast<int>(t / n_e);
  const int4 q = meas[k];
  const long long s = (long long)q.x * n_e + e, d = (long long)q.y * n_e + e,
                  p = (long long)q.z * n_e + e, m = (long long)q.w * n_e + e;
  jt[t] = ((gx[p] - gx[m]) * (gx[s] - gx[d]) + (gy[p] - gy[m]) * (gy[s] - gy[d])) * inv4a[e];
}

// prior[e] = (Σ_k Jᵀ[e,k]²)^p (exponent < 0 marks tikhonov: 1).
__global__ void diagonal_prior(const double* jt, int n_e, int n_m, double exponent, double* prior) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n_e) return;
  if (exponent < 0) {
    prior[e] = 1.0;
    return;
  }
  double s = 0;
  for (int k = 0; k < n_m; ++k) s += jt[(long long)k * n_e + e] * jt[(long long)k * n_e + e];
  prior[e] = pow(s, exponent);
}

// S = diag(prior^-½) Jᵀ.
__global__ void scale_rows(const double* jt, const double* prior, int n_e, int n_m, double* s) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= (long long)n_e * n_m) return;
  s[t] = jt[t] / sqrt(prior[t % n_e]);
}

// λ from device memory: the same launch serves every iteration of a captured CUDA graph.
__global__ void add_diagonal(double* a, int n, const double* lambda, const double* prior) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[(long long)i * n + i] += *lambda * (prior ? prior[i] : 1.0);
}

// d ← d / prior (push-through form); next = x − d; sums ‖d‖², ‖x‖², min(next), non-finite.
__global__ void update(const double* x, double* d, const double* prior, int n_e, double* next,
                       double* out) {
  __shared__ double sd[1024], sx[1024], mn[1024], bad[1024];
  double a = 0, b = 0, m = INFINITY, f = 0;
  for (int e = threadIdx.x; e < n_e; e += blockDim.x) {
    if (prior) d[e] /= prior[e];
    const double y = x[e] - d[e];
    next[e] = y;
    a += d[e] * d[e];
    b += x[e] * x[e];
    m = fmin(m, y);
    if (!isfinite(y)) f = 1;
  }
  sd[threadIdx.x] = a;
  sx[threadIdx.x] = b;
  mn[threadIdx.x] = m;
  bad[threadIdx.x] = f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      sd[threadIdx.x] += sd[threadIdx.x + s];
      sx[threadIdx.x] += sx[threadIdx.x + s];
      mn[threadIdx.x] = fmin(mn[threadIdx.x], mn[threadIdx.x + s]);
      bad[threadIdx.x] = fmax(bad[threadIdx.x], bad[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[0] = sd[0];
    out[1] = sx[0];
    out[2] = mn[0];
    out[3] = bad[0];
  }
}

}  // namespace

void launch_assemble(cudaStream_t st, double* K, int n, const int* elems, const double* local,
                     const double* sigma, int n_e, int ref) {
  assemble<<<blocks(9LL * n_e + 1), kThreads, 0, st>>>(K, n, elems, local, sigma, n_e, ref);
}
void launch_unit_currents(cudaStream_t st, double* B, int n, const int* el_nodes, int n_el) {
  unit_currents<<<blocks(n_el), kThreads, 0, st>>>(B, n, el_nodes, n_el);
}
void launch_measure(cudaStream_t st, const double* X, int n, const int* el_nodes, const int4* meas,
                    int n_m, const double* v, double* v0, double* r) {
  measure<<<blocks(n_m), kThreads, 0, st>>>(X, n, el_nodes, meas, n_m, v, v0, r);
}
void launch_gradients(cudaStream_t st, const double* X, int n, const int* elems, const double* sx,
                      const double* sy, int n_e, int n_el, double* gx, double* gy) {
  gradients<<<blocks((long long)n_e * n_el), kThreads, 0, st>>>(X, n, elems, sx, sy, n_e, n_el, gx,
                                                                gy);
}
void launch_jacobian_t(cudaStream_t st, const double* gx, const double* gy, const double* inv4a,
                       int n_e, const int4* meas, int n_m, double* jt) {
  jacobian_t<<<blocks((long long)n_e * n_m), kThreads, 0, st>>>(gx, gy, inv4a, n_e, meas, n_m, jt);
}
void launch_diagonal_prior(cudaStream_t st, const double* jt, int n_e, int n_m, double exponent,
                           double* prior) {
  diagonal_prior<<<blocks(n_e), kThreads, 0, st>>>(jt, n_e, n_m, exponent, prior);
}
void launch_scale_rows(cudaStream_t st, const double* jt, const double* prior, int n_e, int n_m,
                       double* s) {
  scale_rows<<<blocks((long long)n_e * n_m), kThreads, 0, st>>>(jt, prior, n_e, n_m, s);
}
void launch_add_diagonal(cudaStream_t st, double* a, int n, const double* lambda,
                         const double* prior) {
  add_diagonal<<<blocks(n), kThreads, 0, st>>>(a, n, lambda, prior);
}
void launch_update(cudaStream_t st, const double* x, double* d, const double* prior, int n_e,
                   double* next, double* out) {
  update<<<1, 1024, 0, st>>>(x, d, prior, n_e, next, out);
}

}  // namespace eit::gpu::gn_kernels
