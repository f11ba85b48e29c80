// Conformance kernels: hand-written tensor-core code with inline PTX, as in libraries that
// bypass nvcuda::wmma: ldmatrix from shared memory into mma.sync.m16n8k16, an .f16-accumulator
// mma whose result stmatrix writes back, 8-bit integer mma in two shapes, and an .f64 DGEMM
// with mma.m8n8k4. Fragments follow the PTX ISA's "Matrix Fragments for mma.m16n8k16" etc.
// (g = lane / 4, t = lane % 4). One warp per output tile.
#include <cuda_fp16.h>

namespace {

__device__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The 16x16 A tile and the 16x8 B tile (both row-major) at k, staged in shared memory, as
// ldmatrix fragments for mma.m16n8k16: A with .x4 (lane i: row i % 16, columns 8 (i / 16) ..),
// B with .x2.trans (lane i: row i % 16).
__device__ void load_tiles(const __half* A, const __half* B, int K, int N, int row, int col, int k,
                           __half* sa, __half* sb, unsigned a[4], unsigned b[2]) {
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) sa[i] = A[(row + i / 16) * K + k + i % 16];
  for (int i = lane; i < 128; i += 32) sb[i] = B[(k + i / 8) * N + col + i % 8];
  __syncwarp();
  const unsigned pa = shared_address(sa + (lane % 16) * 16 + (lane / 16) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(pa));
  const unsigned pb = shared_address(sb + (lane % 16) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(b[0]), "=r"(b[1])
               : "r"(pb));
  __syncwarp();
}

}  // namespace

// C (M x N, row-major floats) = A (M x K, row-major halves) * B (K x N, row-major halves);
// grid (N/8, M/16), block 32.
extern "C" __global__ void mma_ldmatrix_gemm(const __half* A, const __half* B, float* C, int M,
                                             int N, int K) {
  __shared__ __align__(16) __half sa[16 * 16];
  __shared__ __align__(16) __half sb[16 * 8];
  const int row = blockIdx.y * 16, col = blockIdx.x * 8;
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 16) {
    unsigned a[4], b[2];
    load_tiles(A, B, K, N, row, col, k, sa, sb, a, b);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  const int g = threadIdx.x / 4, t = threadIdx.x % 4;
  C[(row + g) * N + col + 2 * t] = d[0];
  C[(row + g) * N + col + 2 * t + 1] = d[1];
  C[(row + g + 8) * N + col + 2 * t] = d[2];
  C[(row + g + 8) * N + col + 2 * t + 1] = d[3];
  (void)M;
}

// D (M x N, row-major halves) = A * B + C (as mma_ldmatrix_gemm, C row-major halves) with .f16
// accumulators; the D fragment goes to shared memory with stmatrix.x2 (lanes 0-15 give the
// tile's 16 row addresses), then to D. Grid (N/8, M/16), block 32.
extern "C" __global__ void mma_f16_stmatrix(const __half* A, const __half* B, const __half* C,
                                            __half* D, int M, int N, int K) {
  __shared__ __align__(16) __half sa[16 * 16];
  __shared__ __align__(16) __half sb[16 * 8];
  __shared__ __align__(16) __half sd[16 * 8];
  const int row = blockIdx.y * 16, col = blockIdx.x * 8;
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  // c0,c1: row g, columns 2t, 2t+1; c2,c3: row g + 8
  unsigned d[2];
  d[0] = *reinterpret_cast<const unsigned*>(C + (row + g) * N + col + 2 * t);
  d[1] = *reinterpret_cast<const unsigned*>(C + (row + g + 8) * N + col + 2 * t);
  for (int k = 0; k < K; k += 16) {
    unsigned a[4], b[2];
    load_tiles(A, B, K, N, row, col, k, sa, sb, a, b);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, "
        "{%6, %7}, {%0, %1};"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  const unsigned pd = shared_address(sd + (lane % 16) * 8);
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(pd), "r"(d[0]),
               "r"(d[1])
               : "memory");
  __syncwarp();
  for (int i = lane; i < 128; i += 32) D[(row + i / 8) * N + col + i % 8] = sd[i];
  (void)M;
}

// C (M x N, row-major ints) = A (M x K, row-major signed chars) * B (K x N, column-major signed
// chars) with mma.m16n8k32.satfinite, fragments loaded from global memory 4 bytes at a time;
// grid (N/8, M/16), block 32.
extern "C" __global__ void mma_s8_gemm(const signed char* A, const signed char* B, int* C, int M,
                                       int N, int K) {
  const int row = blockIdx.y * 16, col = blockIdx.x * 8;
  const int g = threadIdx.x / 4, t = threadIdx.x % 4;
  int d[4] = {0, 0, 0, 0};
  const auto word = [](const signed char* p) { return *reinterpret_cast<const unsigned*>(p); };
  for (int k = 0; k < K; k += 32) {
    // a_i: row g (+8 for i in 4..7, 12..15), columns 4t + (i & 3) (+16 for i >= 8)
    const unsigned a0 = word(A + (row + g) * K + k + 4 * t);
    const unsigned a1 = word(A + (row + g + 8) * K + k + 4 * t);
    const unsigned a2 = word(A + (row + g) * K + k + 16 + 4 * t);
    const unsigned a3 = word(A + (row + g + 8) * K + k + 16 + 4 * t);
    // b_i: rows 4t + (i & 3) (+16 for i >= 4) of column g
    const unsigned b0 = word(B + (col + g) * K + k + 4 * t);
    const unsigned b1 = word(B + (col + g) * K + k + 16 + 4 * t);
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  C[(row + g) * N + col + 2 * t] = d[0];
  C[(row + g) * N + col + 2 * t + 1] = d[1];
  C[(row + g + 8) * N + col + 2 * t] = d[2];
  C[(row + g + 8) * N + col + 2 * t + 1] = d[3];
  (void)M;
}

// C (M x N, row-major ints) = A (M x K, row-major unsigned chars) * B (K x N, column-major signed
// chars) with mma.m8n8k16 (wrapping); grid (N/8, M/8), block 32.
extern "C" __global__ void mma_u8s8_gemm(const unsigned char* A, const signed char* B, int* C,
                                         int M, int N, int K) {
  const int row = blockIdx.y * 8, col = blockIdx.x * 8;
  const int g = threadIdx.x / 4, t = threadIdx.x % 4;
  int d[2] = {0, 0};
  for (int k = 0; k < K; k += 16) {
    // a_i: row g, columns 4t + i; b_i: rows 4t + i of column g
    const unsigned a = *reinterpret_cast<const unsigned*>(A + (row + g) * K + k + 4 * t);
    const unsigned b = *reinterpret_cast<const unsigned*>(B + (col + g) * K + k + 4 * t);
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a), "r"(b));
  }
  C[(row + g) * N + col + 2 * t] = d[0];
  C[(row + g) * N + col + 2 * t + 1] = d[1];
  (void)M;
}

// C (M x N, row-major doubles) = A (M x K, row-major) * B (K x N, row-major) + C with
// mma.m8n8k4.f64 (a0: (g, t), b0: (t, g), c_i: (g, 2t + i)); grid (N/8, M/8), block 32.
extern "C" __global__ void mma_f64_gemm(const double* A, const double* B, double* C, int M, int N,
                                        int K) {
  const int row = blockIdx.y * 8, col = blockIdx.x * 8;
  const int g = threadIdx.x / 4, t = threadIdx.x % 4;
  double d0 = C[(row + g) * N + col + 2 * t], d1 = C[(row + g) * N + col + 2 * t + 1];
  for (int k = 0; k < K; k += 4) {
    const double a = A[(row + g) * K + k + t];
    const double b = B[(k + t) * N + col + g];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
  }
  C[(row + g) * N + col + 2 * t] = d0;
  C[(row + g) * N + col + 2 * t + 1] = d1;
  (void)M;
}
