// Conformance kernels: grid-wide barriers (cooperative_groups::this_grid().sync()), launched
// cooperatively (cuLaunchCooperativeKernel, or cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_COOPERATIVE).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Phase 1 writes buf; after the grid barrier each thread reads a value another block wrote;
// then a second round in the other direction.
extern "C" __global__ void grid_sync_neighbors(const int* in, int* buf, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  const int i = static_cast<int>(grid.thread_rank());
  if (i < n) buf[i] = in[i] * 2;
  grid.sync();
  int v = 0;
  if (i < n) v = buf[(i + 97) % n];
  grid.sync();
  if (i < n) buf[i] = v + 1;
  grid.sync();
  if (i < n) out[i] = buf[(i + n - 13) % n] - v;
}

// A grid-wide reduction: each block sums its grid-stride share of `in` into partials[block];
// after grid.sync() every block adds up all partials and writes the total to totals[block];
// after a second grid.sync() block 0 clears the partials, so the kernel can run again.
extern "C" __global__ void grid_sync_reduce(const int* in, long long* partials, long long* totals,
                                            int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ long long warp_sums[32];
  long long v = 0;
  for (unsigned long long i = grid.thread_rank(); i < static_cast<unsigned long long>(n);
       i += grid.size())
    v += in[i];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31u) == 0) warp_sums[threadIdx.x >> 5] = v;
  block.sync();
  if (threadIdx.x == 0) {
    long long sum = 0;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) sum += warp_sums[w];
    partials[blockIdx.x] = sum;
  }
  grid.sync();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partials[b];
    totals[blockIdx.x] = total;
  }
  grid.sync();
  if (blockIdx.x == 0)
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) partials[b] = 0;
}
