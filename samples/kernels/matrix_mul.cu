// The matrix_mul sample's kernel: C = A * B for square tiles of TILE x TILE threads, staging
// tiles of A and B in shared memory (as NVIDIA's matrixMulDrv does). Dimensions are multiples
// of TILE.
constexpr int TILE = 16;

extern "C" __global__ void matrix_mul(float* c, const float* a, const float* b, int a_width,
                                      int b_width) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < a_width / TILE; ++t) {
    as[ty][tx] = a[row * a_width + t * TILE + tx];
    bs[ty][tx] = b[(t * TILE + ty) * b_width + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * b_width + col] = sum;
}
