#pragma once
// Launchers of the Gauss–Newton kernels (cuda_gn_kernels.cu), all asynchronous on `st`, all
// float64, column-major device arrays. Sizes and meanings: cuda_gauss_newton.cpp.
#include <cuda_runtime.h>

namespace eit::gpu::gn_kernels {

void launch_assemble(cudaStream_t st, double* K, int n, const int* elems, const double* local,
                     const double* sigma, int n_e, int ref);
void launch_unit_currents(cudaStream_t st, double* B, int n, const int* el_nodes, int n_el);
void launch_measure(cudaStream_t st, const double* X, int n, const int* el_nodes, const int4* meas,
                    int n_m, const double* v, double* v0, double* r);
void launch_gradients(cudaStream_t st, const double* X, int n, const int* elems, const double* sx,
                      const double* sy, int n_e, int n_el, double* gx, double* gy);
void launch_jacobian_t(cudaStream_t st, const double* gx, const double* gy, const double* inv4a,
                       int n_e, const int4* meas, int n_m, double* jt);
void launch_diagonal_prior(cudaStream_t st, const double* jt, int n_e, int n_m, double exponent,
                           double* prior);
void launch_scale_rows(cudaStream_t st, const double* jt, const double* prior, int n_e, int n_m,
                       double* s);
// a[i][i] += *lambda · (prior ? prior[i] : 1); lambda is a device pointer (read at run time).
void launch_add_diagonal(cudaStream_t st, double* a, int n, const double* lambda,
                         const double* prior);
void launch_update(cudaStream_t st, const double* x, double* d, const double* prior, int n_e,
                   double* next, double* out);

}  // namespace eit::gpu::gn_kernels
