// Column-major double → scaled, negated, row-major float (jac_convert.hpp): a 32 × 32 tile
// transpose through shared memory, so both the reads and the writes are coalesced.
#include "jac_convert.hpp"

#include <stdexcept>
#include <string>

namespace eit::gpu::detail {
namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

__global__ void negated_float_rows(const double* __restrict__ p, const double* __restrict__ scale,
                                   float* __restrict__ out, int n_rows, int n_cols) {
  __shared__ float tile[kTile][kTile + 1];  // +1: no bank conflicts on the transposed read
  const long long r0 = static_cast<long long>(blockIdx.x) * kTile;
  const long long c0 = static_cast<long long>(blockIdx.y) * kTile;
  // Read: threadIdx.x runs down a column of P (contiguous in memory).
  const long long r = r0 + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
    const long long c = c0 + j;
    if (r < n_rows && c < n_cols)
      tile[j][threadIdx.x] = __double2float_rn(-(scale[r] * p[c * n_rows + r]));
  }
  __syncthreads();
  // Write: threadIdx.x runs along a row of out (contiguous in memory).
  const long long c = c0 + threadIdx.x;
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
    const long long rr = r0 + i;
    if (rr < n_rows && c < n_cols) out[rr * n_cols + c] = tile[threadIdx.x][i];
  }
}

}  // namespace

void launch_negated_float_rows(const double* p, const double* scale, float* out, int n_rows,
                               int n_cols, cudaStream_t stream) {
  const dim3 block(kTile, kRowsPerPass);
  const dim3 grid((n_rows + kTile - 1) / kTile, (n_cols + kTile - 1) / kTile);
  if (grid.y > 65535u)  // CUDA's limit on gridDim.y: n_cols ≤ 2,097,120
    throw std::runtime_error("jac cuda: negated_float_rows: " + std::to_string(n_cols) +
                             " columns, at most 2097120");
  negated_float_rows<<<grid, block, 0, stream>>>(p, scale, out, n_rows, n_cols);
  const cudaError_t s = cudaGetLastError();
  if (s != cudaSuccess)
    throw std::runtime_error(std::string("jac cuda: launch of negated_float_rows: ") +
                             cudaGetErrorString(s));
}

}  // namespace eit::gpu::detail
