// Conformance kernels: thread-block clusters (cooperative_groups::this_cluster()) exchanging
// data through distributed shared memory (cluster.map_shared_rank) between cluster.sync()
// calls; launched with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, or with compile-time dimensions
// (__cluster_dims__).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Each block loads its tile of `in` into shared memory; after cluster.sync() each thread reads
// the same element of the next block's tile (by rank, wrapping) and adds it into rank 0's
// shared sum; after a second cluster.sync() it writes what it read, and rank 0 writes the
// cluster's sum. meta[3 * block] = the block's rank, the cluster's block count and its x index.
__device__ void ring(const int* in, int* out, long long* sums, unsigned* meta) {
  extern __shared__ int tile[];
  __shared__ long long sum;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const unsigned size = cluster.num_blocks();
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  if (threadIdx.x == 0) sum = 0;
  cluster.sync();
  const int* next = cluster.map_shared_rank(tile, (rank + 1) % size);
  const int v = next[threadIdx.x];
  atomicAdd(reinterpret_cast<unsigned long long*>(cluster.map_shared_rank(&sum, 0)),
            static_cast<unsigned long long>(static_cast<long long>(v)));
  cluster.sync();
  out[i] = v;
  if (threadIdx.x == 0) {
    meta[3 * blockIdx.x] = rank;
    meta[3 * blockIdx.x + 1] = size;
    meta[3 * blockIdx.x + 2] = cluster.block_index().x;
    if (rank == 0) sums[blockIdx.x / size] = sum;
  }
}

extern "C" __global__ void cluster_ring(const int* in, int* out, long long* sums, unsigned* meta) {
  ring(in, out, sums, meta);
}

extern "C" __global__ void __cluster_dims__(4, 1, 1)
    cluster_ring_fixed(const int* in, int* out, long long* sums, unsigned* meta) {
  ring(in, out, sums, meta);
}
