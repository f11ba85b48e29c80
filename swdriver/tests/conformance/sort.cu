// Conformance kernels: bitonic sort in shared memory (extern "C" and templated, mangled).

// Sorts each block's segment of 2 * blockDim.x elements (a power of two) ascending, in dynamic
// shared memory; each thread handles two elements per step.
template <class T>
__device__ void bitonic_block(T* data) {
  extern __shared__ unsigned char raw[];
  T* s = reinterpret_cast<T*>(raw);
  const unsigned n = 2 * blockDim.x;
  T* segment = data + static_cast<size_t>(blockIdx.x) * n;
  s[threadIdx.x] = segment[threadIdx.x];
  s[threadIdx.x + blockDim.x] = segment[threadIdx.x + blockDim.x];
  __syncthreads();
  for (unsigned size = 2; size <= n; size <<= 1) {
    for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
      // The pair (lo, lo + stride) this thread compares.
      const unsigned t = threadIdx.x;
      const unsigned lo = 2 * stride * (t / stride) + t % stride;
      const unsigned hi = lo + stride;
      const bool ascending = (lo & size) == 0;
      const T a = s[lo];
      const T b = s[hi];
      if ((a > b) == ascending) {
        s[lo] = b;
        s[hi] = a;
      }
      __syncthreads();
    }
  }
  segment[threadIdx.x] = s[threadIdx.x];
  segment[threadIdx.x + blockDim.x] = s[threadIdx.x + blockDim.x];
}

extern "C" __global__ void bitonic_sort_int(int* data) { bitonic_block(data); }

template <class T>
__global__ void bitonic_sort(T* data) {
  bitonic_block(data);
}

template __global__ void bitonic_sort<float>(float*);
template __global__ void bitonic_sort<unsigned long long>(unsigned long long*);
