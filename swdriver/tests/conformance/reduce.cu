// Conformance kernels: reductions (shared-memory tree, warp shuffles, cooperative groups).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

// Classic tree in dynamic shared memory; any block size (the tree pads to a power of two).
// partial[blockIdx.x] = sum of in[blockIdx.x * blockDim.x + t] for t < blockDim.x (in range).
extern "C" __global__ void reduce_tree(const int* in, int* partial, int n) {
  extern __shared__ int sdata[];
  const unsigned t = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + t;
  unsigned pow2 = 1;
  while (pow2 < blockDim.x) pow2 <<= 1;
  sdata[t] = i < static_cast<unsigned>(n) ? in[i] : 0;
  // Threads past blockDim.x do not exist: the ones below fill the padding.
  for (unsigned j = t + blockDim.x; j < pow2; j += blockDim.x) sdata[j] = 0;
  __syncthreads();
  for (unsigned s = pow2 / 2; s > 0; s >>= 1) {
    for (unsigned j = t; j < s; j += blockDim.x) sdata[j] += sdata[j + s];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = sdata[0];
}

// Grid-stride sum of floats with __shfl_down_sync within each warp, then shared memory across
// warps (block size a multiple of 32, at most 1024); one partial per block.
extern "C" __global__ void reduce_shfl_down(const float* in, float* partial, int n) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += in[i];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x / 32;
    v = lane < warps ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// Butterfly (__shfl_xor_sync): every lane ends with its warp's total, and writes it; also the
// warp's maximum.
extern "C" __global__ void reduce_shfl_xor(const unsigned* in, unsigned* sums, unsigned* maxima) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = in[i];
  unsigned m = in[i];
  for (int mask = 1; mask < 32; mask <<= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, mask);
    m = max(m, __shfl_xor_sync(0xffffffffu, m, mask));
  }
  sums[i] = s;
  maxima[i] = m;
}

// cooperative_groups: thread_block + tiled_partition<32>, cg::reduce per tile, then the tile
// results combined in shared memory; writes each tile's sum and the block's sum.
extern "C" __global__ void reduce_cg(const int* in, int* tile_sums, int* block_sums, int n) {
  __shared__ int tiles[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const int i = static_cast<int>(blockIdx.x * blockDim.x + block.thread_rank());
  const int v = i < n ? in[i] : 0;
  const int tile_sum = cg::reduce(tile, v, cg::plus<int>());
  const unsigned tile_index = block.thread_rank() / 32;
  if (tile.thread_rank() == 0) {
    tiles[tile_index] = tile_sum;
    tile_sums[blockIdx.x * (blockDim.x / 32) + tile_index] = tile_sum;
  }
  block.sync();
  if (tile_index == 0) {
    const int mine = tile.thread_rank() < blockDim.x / 32 ? tiles[tile.thread_rank()] : 0;
    const int total = cg::reduce(tile, mine, cg::plus<int>());
    const int biggest = cg::reduce(tile, mine, cg::greater<int>());
    if (tile.thread_rank() == 0) {
      block_sums[2 * blockIdx.x] = total;
      block_sums[2 * blockIdx.x + 1] = biggest;
    }
  }
}
