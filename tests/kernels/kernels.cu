// Kernels the tests load as PTX, cubin and fatbin (compiled by nvcc at build time). The software
// driver runs them from their PTX (the .ptx file, or the PTX a fatbin carries).
#include <cstdint>

extern "C" __global__ void scale(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

struct pair {
  double a;
  int b;
};

extern "C" __global__ void with_struct(pair p, unsigned char c, short s, long long* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = static_cast<long long>(p.a) + p.b + c + s;
}

extern "C" __global__ void no_params() {}

extern "C" __global__ void sixteen(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7,
                                   int a8, int a9, int a10, int a11, int a12, int a13, int a14,
                                   int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *out = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14;
}

template <class T>
__global__ void fill(T* data, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}
template __global__ void fill<float>(float*, float, int);

__device__ int counter;
__constant__ float coefficients[4];

extern "C" __global__ void count_up(int times) {
  if (threadIdx.x == 0 && blockIdx.x == 0) counter += times;
}

extern "C" __global__ void uses_shared(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = static_cast<float>(threadIdx.x) * coefficients[0];
  __syncthreads();
  out[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}
