// Conformance kernel: warp matrix multiply-accumulate (wmma), 16x16x16 half inputs with float
// accumulation; one warp per 16x16 tile of C.
#include <mma.h>

using namespace nvcuda;

// C (M x N, row-major floats) = A (M x K, row-major halves) * B (K x N, column-major halves);
// M, N, K multiples of 16; grid (N/16, M/16), block 32.
extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N,
                                     int K) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  const int row = blockIdx.y * 16;
  const int col = blockIdx.x * 16;
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + col * K + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + row * N + col, c, N, wmma::mem_row_major);
  (void)M;
}
