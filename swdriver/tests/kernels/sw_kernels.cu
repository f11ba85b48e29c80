// Kernels the software driver's tests load as PTX, cubin and fatbin (nvcc builds them; nothing
// runs them: the tests check what the driver reads from the images).
#include <cstdint>

struct pair {
  double a;
  int b;
};

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void with_struct(pair p, unsigned char c, short s, long long* out) {
  if (threadIdx.x == 0) *out = static_cast<long long>(p.a) + p.b + c + s;
}

extern "C" __global__ void no_params() {}

extern "C" __global__ void __launch_bounds__(256) bounded(int* out) { out[threadIdx.x] = 1; }

extern "C" __global__ void static_shared(int* out) {
  __shared__ int scratch[100];
  scratch[threadIdx.x % 100] = static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = scratch[(threadIdx.x + 1) % 100];
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(int* out) { out[blockIdx.x] = 1; }
#endif

extern "C" __global__ void by_value(const __grid_constant__ pair p, double* out) { *out = p.a; }

__device__ __noinline__ int triple(int x) { return 3 * x; }

extern "C" __global__ void calls_device_function(int* out) { out[threadIdx.x] = triple(out[0]); }

namespace ns {
template <class T>
__global__ void fill(T* data, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}
template __global__ void fill<double>(double*, double, int);
}  // namespace ns

__device__ int counter;
__device__ int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__constant__ float coefficients[4];

extern "C" __global__ void count_up(int times) {
  if (threadIdx.x == 0 && blockIdx.x == 0) counter += times + table[0] + coefficients[0];
}
