// Kernels for the PTX interpreter benchmark (bench/interpreter.cpp): compiled to PTX by nvcc at
// build time and run on the software driver. Each has a fixed dynamic instruction count per
// thread (no data-dependent branches), which interpreter.cpp uses for thread-instructions/s.

// c[i] = a[i] + b[i] for i < n; one element per thread.
extern "C" __global__ void interp_vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// C = A * B for n x n row-major matrices, n a multiple of 16; 16x16 blocks, one output each,
// through 16x16 tiles of A and B in shared memory.
extern "C" __global__ void interp_matmul16(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[16][16];
  __shared__ float tb[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float sum = 0.0f;
  for (int t = 0; t < n; t += 16) {
    ta[ty][tx] = a[row * n + t + tx];
    tb[ty][tx] = b[(t + ty) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) sum += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

// out[0] += the sum of in[0, n), n a multiple of the block size: each warp adds its 32 elements
// with shuffles, lane 0 adds the warp's sum atomically.
extern "C" __global__ void interp_warp_reduce(const int* in, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
