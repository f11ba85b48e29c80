// The vector_add sample's kernel (NVIDIA's vectorAddDrv uses the same one).
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
