// The tma_transpose sample's kernel: a 32 x 32 tile of floats moved by the tensor memory
// accelerator (cp.async.bulk.tensor) into shared memory with the 128-byte swizzle, transposed
// there, and stored by it to the transposed position of the output.
#include <cuda.h>

#include <cuda/ptx>

namespace ptx = cuda::ptx;

constexpr int kTile = 32;

// The byte offset of element (row, col) of the swizzled tile: its 16-byte chunk XOR the row
// (128-byte rows, CU_TENSOR_MAP_SWIZZLE_128B).
__device__ unsigned swizzled(unsigned row, unsigned col) {
  const unsigned offset = (row * kTile + col) * sizeof(float);
  return offset ^ ((row & 7) << 4);
}

// Block (bx, by) transposes the tile at column 32 bx, row 32 by of `in` (through `in_map`) into
// the tile at column 32 by, row 32 bx of `out` (through `out_map`). Tiles at the edges reach
// outside the matrices: the loads read zeros there and the stores leave those elements out.
extern "C" __global__ void tma_transpose(const __grid_constant__ CUtensorMap in_map,
                                         const __grid_constant__ CUtensorMap out_map) {
  __shared__ __align__(1024) unsigned char tile[kTile * kTile * sizeof(float)];
  __shared__ __align__(128) float transposed[kTile][kTile];
  __shared__ alignas(8) cuda::std::uint64_t bar;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    ptx::mbarrier_init(&bar, 1);
    const int at[2] = {static_cast<int>(blockIdx.x) * kTile, static_cast<int>(blockIdx.y) * kTile};
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, tile, &in_map, at, &bar);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                   sizeof tile);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  // blockDim (32, 8): each thread moves 4 elements
  for (unsigned r = threadIdx.y; r < kTile; r += blockDim.y) {
    float v;
    memcpy(&v, tile + swizzled(r, threadIdx.x), sizeof v);
    transposed[threadIdx.x][r] = v;
  }
  ptx::fence_proxy_async(ptx::space_shared);  // the writes above, visible to the TMA store
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const int at[2] = {static_cast<int>(blockIdx.y) * kTile, static_cast<int>(blockIdx.x) * kTile};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &out_map, at, transposed);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
