// Conformance kernels: the tensor memory accelerator (cp.async.bulk.tensor through a tensor map
// made by cuTensorMapEncodeTiled), with cuda::ptx as Hopper kernels write it: a block loads a
// box of a 2D tensor into shared memory (completing an mbarrier), reads it back through the
// swizzle pattern, and stores the box into a second tensor (a bulk group).
#include <cuda.h>

#include <cuda/ptx>

namespace ptx = cuda::ptx;

// The byte offset in shared memory where element `offset` (a byte offset in the dense box)
// lands under CUtensorMapSwizzle `swizzle` (0 none, 1 32B, 2 64B, 3 128B): the 16-byte chunk
// (bits 4..6) XOR the 128-byte row (bits 7..9), as many bits as the mode has.
__device__ unsigned swizzled(unsigned offset, unsigned swizzle) {
  if (swizzle == 0) return offset;
  const unsigned mask = (1u << swizzle) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

// One block per box of `box_rows` x `box_cols` floats (the rows the map loads: boxDim[1] /
// elementStrides[1]) of a 2D tensor (the tensor map `in_map`); block (bx, by) loads the box at
// column bx * x_step + shift_x, row by * y_step + shift_y, so boxes at the edges reach outside
// the tensor. Each block writes the box it received, read through the swizzle pattern, to
// boxes[(by * gridDim.x + bx) * box_rows * box_cols + ...], then stores it through `out_map` at
// the same coordinates.
extern "C" __global__ void tma_box_roundtrip(const __grid_constant__ CUtensorMap in_map,
                                             const __grid_constant__ CUtensorMap out_map,
                                             float* boxes, int box_rows, int box_cols, int x_step,
                                             int y_step, int shift_x, int shift_y,
                                             unsigned swizzle) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ alignas(8) unsigned long long bar;
  const int x = static_cast<int>(blockIdx.x) * x_step + shift_x;
  const int y = static_cast<int>(blockIdx.y) * y_step + shift_y;
  const unsigned bytes = static_cast<unsigned>(box_rows * box_cols) * sizeof(float);
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(reinterpret_cast<cuda::std::uint64_t*>(&bar), 1);
    ptx::fence_proxy_async(ptx::space_shared);
    const int coords[2] = {x, y};
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, smem, &in_map, coords,
                              reinterpret_cast<cuda::std::uint64_t*>(&bar));
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                   reinterpret_cast<cuda::std::uint64_t*>(&bar), bytes);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(reinterpret_cast<cuda::std::uint64_t*>(&bar), 0)) {
  }
  float* mine = boxes + (blockIdx.y * gridDim.x + blockIdx.x) * box_rows * box_cols;
  for (int i = threadIdx.x; i < box_rows * box_cols; i += blockDim.x) {
    float v;
    memcpy(&v, smem + swizzled(i * sizeof(float), swizzle), sizeof v);
    mine[i] = v;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    const int coords[2] = {x, y};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &out_map, coords, smem);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}

// Bulk reductions (cp.reduce.async.bulk): each block puts its slice of `in` (n ints per block,
// n a multiple of 4) into shared memory and reduces it element by element into `sums` (.add.u32),
// `mins` (.min.s32) and `fsums` (.add.f32 of in[i] / 8), all blocks into the same n elements.
extern "C" __global__ void bulk_reduce_global(const int* in, int n, unsigned* sums, int* mins,
                                              float* fsums) {
  extern __shared__ __align__(16) int slice[];
  unsigned* as_unsigned = reinterpret_cast<unsigned*>(slice + n);
  float* as_float = reinterpret_cast<float*>(slice + 2 * n);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int v = in[blockIdx.x * n + i];
    slice[i] = v;
    as_unsigned[i] = static_cast<unsigned>(v);
    as_float[i] = static_cast<float>(v) / 8.0f;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    const auto bytes = static_cast<cuda::std::uint32_t>(n * sizeof(int));
    ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_add, sums, as_unsigned,
                              bytes);
    ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_min, mins, slice,
                              bytes);
    ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_add, fsums, as_float,
                              bytes);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}

// Tensor reductions (cp.reduce.async.bulk.tensor, tile mode): block (bx, by) fills a box of
// box_rows x box_cols floats with values[(by * gridDim.x + bx) * box_rows * box_cols + ...] and
// adds it into the 2D tensor of `out_map` at column bx * x_step + shift_x, row by * y_step +
// shift_y: boxes overlap (steps smaller than the box) and reach outside the tensor.
extern "C" __global__ void tma_box_reduce_add(const __grid_constant__ CUtensorMap out_map,
                                              const float* values, int box_rows, int box_cols,
                                              int x_step, int y_step, int shift_x, int shift_y) {
  extern __shared__ __align__(128) float box[];
  const float* mine = values + (blockIdx.y * gridDim.x + blockIdx.x) * box_rows * box_cols;
  for (int i = threadIdx.x; i < box_rows * box_cols; i += blockDim.x) box[i] = mine[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    const int coords[2] = {static_cast<int>(blockIdx.x) * x_step + shift_x,
                           static_cast<int>(blockIdx.y) * y_step + shift_y};
    ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, ptx::op_add, &out_map,
                                     coords, box);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
