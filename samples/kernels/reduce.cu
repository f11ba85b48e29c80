// The cuda_graphs sample's kernels: a two-stage sum (as in NVIDIA's simpleCudaGraphs) and a
// tiny kernel for timing chains of launches.
constexpr int THREADS = 256;

// partial[blockIdx.x] = the sum of this block's elements of `in` (grid-stride over n).
extern "C" __global__ void reduce(const float* in, float* partial, int n) {
  __shared__ float sums[THREADS];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    sum += in[i];
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// *result = the sum of partial[0..n), by one block.
extern "C" __global__ void reduce_final(const float* partial, double* result, int n) {
  __shared__ double sums[THREADS];
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += partial[i];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = sums[0];
}

extern "C" __global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}
