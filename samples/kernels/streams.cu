// Kernels of the stream samples: async_api (NVIDIA's asyncAPI increments every element),
// stream_priorities (NVIDIA's StreamPriorities races a copy kernel at two priorities) and
// unified_memory (y = a * x + y on managed memory).
extern "C" __global__ void increment(int* data, int value, int n) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) data[i] += value;
}

extern "C" __global__ void copy_ints(int* dst, const int* src, int n) {
  for (int i = blockDim.x * blockIdx.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    dst[i] = src[i];
  }
}

extern "C" __global__ void managed_saxpy(float a, const float* x, float* y, int n) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
