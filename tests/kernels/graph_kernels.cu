// Kernels for conditional graph nodes: they set a node's condition from the device with
// cudaGraphSetConditional (cuda_device_runtime_api.h), and do the work of the bodies.

// Sets `condition` to 1 if *value > 0, else 0.
extern "C" __global__ void set_if_positive(cudaGraphConditionalHandle condition, const int* value) {
  if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(condition, *value > 0 ? 1u : 0u);
}

// Sets `condition` to *value (a switch node's case).
extern "C" __global__ void set_to(cudaGraphConditionalHandle condition, const unsigned* value) {
  if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(condition, *value);
}

// Decrements *counter and keeps `condition` set while it stays positive (a while node's body).
extern "C" __global__ void count_down(cudaGraphConditionalHandle condition, int* counter) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int left = --*counter;
    cudaGraphSetConditional(condition, left > 0 ? 1u : 0u);
  }
}

// data[i] = data[i] * factor + offset.
extern "C" __global__ void axpb(float* data, float factor, float offset, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + offset;
}
