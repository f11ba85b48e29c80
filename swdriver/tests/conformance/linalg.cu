// Conformance kernels: tiled matrix multiply, padded transpose, 1D and 2D stencils.

constexpr int kTile = 16;

// C (M x N) = A (M x K) * B (K x N), row-major, 16x16 tiles, any sizes; block (16, 16).
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + threadIdx.x;
    const int bk = t * kTile + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ak < K ? A[row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = bk < K && col < N ? B[bk * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

constexpr int kTransposeTile = 32;
constexpr int kRowsPerPass = 8;

// out (cols x rows) = transpose of in (rows x cols); block (32, 8); a 32x33 tile avoids bank
// conflicts.
extern "C" __global__ void transpose_padded(const double* in, double* out, int rows, int cols) {
  __shared__ double tile[kTransposeTile][kTransposeTile + 1];
  int x = blockIdx.x * kTransposeTile + threadIdx.x;
  int y = blockIdx.y * kTransposeTile + threadIdx.y;
  for (int j = 0; j < kTransposeTile; j += kRowsPerPass)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * kTransposeTile + threadIdx.x;
  y = blockIdx.x * kTransposeTile + threadIdx.y;
  for (int j = 0; j < kTransposeTile; j += kRowsPerPass)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

constexpr int kRadius = 3;

// out[i] = sum_{k=-3..3} w[k+3] * in[i+k] (zero outside), halo in dynamic shared memory
// (blockDim.x + 6 ints); any block size.
extern "C" __global__ void stencil_1d(const int* in, int* out, int n) {
  extern __shared__ int s[];
  const int w[2 * kRadius + 1] = {1, -2, 3, 10, 3, -2, 1};
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  const int l = threadIdx.x + kRadius;
  s[l] = g < n ? in[g] : 0;
  if (threadIdx.x < kRadius) {
    const int left = g - kRadius;
    s[threadIdx.x] = left >= 0 && left < n ? in[left] : 0;
    const int right = g + blockDim.x;
    s[l + blockDim.x] = right < n ? in[right] : 0;
  }
  __syncthreads();
  if (g >= n) return;
  int r = 0;
  for (int k = -kRadius; k <= kRadius; ++k) r += w[k + kRadius] * s[l + k];
  out[g] = r;
}

constexpr int kBx = 16;
constexpr int kBy = 12;

// 5-point stencil on a w x h grid of floats (zero outside): out = 4*c - n - s - e - w; block
// (16, 12), tile with a one-cell halo in static shared memory.
extern "C" __global__ void stencil_2d(const float* in, float* out, int w, int h) {
  __shared__ float tile[kBy + 2][kBx + 2];
  const int x = blockIdx.x * kBx + threadIdx.x;
  const int y = blockIdx.y * kBy + threadIdx.y;
  // Fill the (kBy+2) x (kBx+2) tile cooperatively.
  for (int j = threadIdx.y; j < kBy + 2; j += kBy)
    for (int i = threadIdx.x; i < kBx + 2; i += kBx) {
      const int gx = blockIdx.x * kBx + i - 1;
      const int gy = blockIdx.y * kBy + j - 1;
      tile[j][i] = gx >= 0 && gx < w && gy >= 0 && gy < h ? in[gy * w + gx] : 0.0f;
    }
  __syncthreads();
  if (x >= w || y >= h) return;
  const int tx = threadIdx.x + 1;
  const int ty = threadIdx.y + 1;
  out[y * w + x] = 4.0f * tile[ty][tx] - tile[ty - 1][tx] - tile[ty + 1][tx] - tile[ty][tx - 1] -
                   tile[ty][tx + 1];
}
