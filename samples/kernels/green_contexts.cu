// Kernels of the green_contexts sample: two different workloads, one per green context.
extern "C" __global__ void saxpy_stride(float a, const float* x, float* y, int n) {
  for (int i = blockDim.x * blockIdx.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

// bins[v % nbins] counts the values v of data.
extern "C" __global__ void histogram(const int* data, int n, unsigned* bins, int nbins) {
  for (int i = blockDim.x * blockIdx.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[data[i] % nbins], 1u);
  }
}
