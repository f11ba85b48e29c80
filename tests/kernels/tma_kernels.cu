// Test kernels that use a tensor map (tests/sw/tensor_map_test.cpp): the tensor memory
// accelerator's load of a box into shared memory, completing an mbarrier.
#include <cuda.h>

#include <cuda/ptx>

namespace ptx = cuda::ptx;

// Block (bx, by) loads the box of `box_cols` x `box_rows` floats at (bx * box_cols,
// by * box_rows) through `map` (no swizzle, rank 2) and writes it densely to
// out[(by * gridDim.x + bx) * box_rows * box_cols ...].
extern "C" __global__ void tma_load_boxes(const __grid_constant__ CUtensorMap map, float* out,
                                          int box_cols, int box_rows) {
  extern __shared__ __align__(128) float box[];
  __shared__ alignas(8) cuda::std::uint64_t bar;
  const int n = box_cols * box_rows;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    const int coords[2] = {static_cast<int>(blockIdx.x) * box_cols,
                           static_cast<int>(blockIdx.y) * box_rows};
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, box, &map, coords, &bar);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                   static_cast<unsigned>(n * sizeof(float)));
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  float* mine = out + (blockIdx.y * gridDim.x + blockIdx.x) * n;
  for (int i = threadIdx.x; i < n; i += blockDim.x) mine[i] = box[i];
}
