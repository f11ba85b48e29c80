// Conformance kernels: warp matrix multiply-accumulate through nvcuda::wmma (nvcc lowers it to
// wmma.load / wmma.mma / wmma.store). One warp per output tile unless said otherwise; M, N, K
// multiples of the tile.
#include <cuda_bf16.h>
#include <mma.h>

using namespace nvcuda;

// C (M x N, row-major floats) = A (M x K, row-major halves) * B (K x N, column-major halves);
// 16x16x16 tiles; grid (N/16, M/16), block 32.
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

// The tiled form of the CUDA samples: a block of 4 warps computes a 32x32 tile of
// C = alpha * A * B + beta * C (row-major A and C, row-major B), staging 32x16 of A and 16x32 of B
// in shared memory per step, each warp one 16x16 quarter. Grid (N/32, M/32), block 128.
extern "C" __global__ void wmma_gemm_tiled(const __half* A, const __half* B, float* C, int M, int N,
                                           int K, float alpha, float beta) {
  __shared__ __align__(32) __half sa[32 * 16];
  __shared__ __align__(32) __half sb[16 * 32];
  const int warp = threadIdx.x / 32;
  const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;
  const int row = blockIdx.y * 32, col = blockIdx.x * 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, c;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) {
      sa[i] = A[(row + i / 16) * K + k + i % 16];
      sb[i] = B[(k + i / 32) * N + col + i % 32];
    }
    __syncthreads();
    wmma::load_matrix_sync(a, sa + wr * 16, 16);
    wmma::load_matrix_sync(b, sb + wc, 32);
    wmma::mma_sync(acc, a, b, acc);
    __syncthreads();
  }
  float* out = C + (row + wr) * N + col + wc;
  wmma::load_matrix_sync(c, out, N, wmma::mem_row_major);
  for (int i = 0; i < c.num_elements; ++i) c.x[i] = alpha * acc.x[i] + beta * c.x[i];
  wmma::store_matrix_sync(out, c, N, wmma::mem_row_major);
  (void)M;
}

// D = A * B + C with half accumulators, every matrix column-major halves (A: M x K, B: K x N,
// C and D: M x N); 32x8x16 tiles; grid (N/8, M/32), block 32.
extern "C" __global__ void wmma_gemm_f16acc(const __half* A, const __half* B, const __half* C,
                                            __half* D, int M, int N, int K) {
  wmma::fragment<wmma::matrix_a, 32, 8, 16, __half, wmma::col_major> a;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 32, 8, 16, __half> c;
  const int row = blockIdx.y * 32;
  const int col = blockIdx.x * 8;
  wmma::load_matrix_sync(c, C + col * M + row, M, wmma::mem_col_major);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + k * M + row, M);
    wmma::load_matrix_sync(b, B + col * K + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(D + col * M + row, c, M, wmma::mem_col_major);
  (void)N;
}

// C (M x N, column-major floats) = A (M x K, row-major floats) * B (K x N, column-major floats),
// the inputs rounded to tf32 (wmma::__float_to_tf32); 16x16x8 tiles; grid (N/16, M/16),
// block 32.
extern "C" __global__ void wmma_gemm_tf32(const float* A, const float* B, float* C, int M, int N,
                                          int K) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
  wmma::fill_fragment(c, 0.0f);
  const int row = blockIdx.y * 16;
  const int col = blockIdx.x * 16;
  for (int k = 0; k < K; k += 8) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + col * K + k, K);
    for (int i = 0; i < a.num_elements; ++i) a.x[i] = wmma::__float_to_tf32(a.x[i]);
    for (int i = 0; i < b.num_elements; ++i) b.x[i] = wmma::__float_to_tf32(b.x[i]);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + col * M + row, c, M, wmma::mem_col_major);
}

// C (M x N, row-major ints) = A (M x K, row-major signed chars) * B (K x N, column-major signed
// chars); 8x32x16 tiles; grid (N/32, M/8), block 32.
extern "C" __global__ void wmma_gemm_s8(const signed char* A, const signed char* B, int* C, int M,
                                        int N, int K) {
  wmma::fragment<wmma::matrix_a, 8, 32, 16, signed char, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, signed char, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 8, 32, 16, int> c;
  wmma::fill_fragment(c, 0);
  const int row = blockIdx.y * 8;
  const int col = blockIdx.x * 32;
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + col * K + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + row * N + col, c, N, wmma::mem_row_major);
  (void)M;
}

// C (M x N, row-major floats) = A (M x K, row-major bfloat16) * B (K x N, row-major bfloat16);
// 16x16x16 tiles; grid (N/16, M/16), block 32.
extern "C" __global__ void wmma_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C,
                                          int M, int N, int K) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  const int row = blockIdx.y * 16;
  const int col = blockIdx.x * 16;
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + k * N + col, N);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + row * N + col, c, N, wmma::mem_row_major);
  (void)M;
}
