// The consumer's kernel, compiled by cuwrap_compile_kernels() to PTX, a cubin and a fatbin.
extern "C" __global__ void scale(float* x, float factor, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] *= factor;
}
