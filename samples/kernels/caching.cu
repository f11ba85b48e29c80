// The vmm_caching_allocator sample's kernels: fill a block with a pattern that names it, and
// update it in place.

// out[i] = seed * 7919 + i.
extern "C" __global__ void fill_pattern(int* out, int n, int seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = seed * 7919 + i;
  }
}

// data[i] = data[i] * 3 + k.
extern "C" __global__ void update(int* data, int n, int k) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] = data[i] * 3 + k;
  }
}
