// Kernels of the multi-GPU samples.

// dst[i] = 2 * src[i]: with peer access enabled, src may live on another GPU.
extern "C" __global__ void scale_peer(const float* src, float* dst, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = 2.0f * src[i];
}

// data[i] = rank + i * 0.5: each MPI rank's contribution.
extern "C" __global__ void fill_rank(double* data, int rank, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = rank + i * 0.5;
}

// *sum = the sum of data[0..n) (one block of 256 threads).
extern "C" __global__ void sum_all(const double* data, double* sum, int n) {
  __shared__ double partial[256];
  double s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += data[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = partial[0];
}
