// An LTO-IR input of the JIT linker tests (link_test.cpp): a kernel that calls a device function
// which another input (PTX) defines.
extern "C" __device__ int link_offset(int x);

extern "C" __global__ void link_lto_kernel(int* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] = link_offset(data[i]) * 3;
}
