// Conformance kernels: thread-block clusters (cooperative_groups::this_cluster()) exchanging
// data through distributed shared memory (cluster.map_shared_rank) between cluster.sync()
// calls; launched with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, or with compile-time dimensions
// (__cluster_dims__).
#include <cooperative_groups.h>

#include <cuda/ptx>

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

// Bulk copies and mbarriers across the CTAs of a cluster (the Hopper producer/consumer pattern:
// mbarrier objects set up by each CTA, armed with expect_tx by their owner and completed by
// copies and arrivals issued by other CTAs of the cluster). kWords ints per tile; 4 tiles per
// block in `in`: tile 0 is pushed to the previous rank, tile 1 is multicast by rank 0, tiles 2-3
// are unused. out[4 * kWords * block + ...]:
//   [0, kWords)            what the block received from the next rank's tile 0 (global source)
//   [kWords, 2 kWords)     what the next rank forwarded from its shared memory (shared::cta
//                          source): the tile it received, tile 0 of the rank after it
//   [2 kWords, 3 kWords)   rank 0's tile 1, multicast to every block of the cluster
//   3 kWords + 0..size-1   on rank 0: each rank's value stored into rank 0's shared memory before
//                          its remote release arrive; elsewhere unwritten
constexpr unsigned kWords = 64;  // 256 bytes, a multiple of 16

__device__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The .shared::cluster address of `p` (a variable of this CTA) in the CTA of `rank`.
__device__ unsigned remote_address(const void* p, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_address(p)), "r"(rank));
  return r;
}

__device__ void wait_parity(const unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
  }
}

__device__ void expect_bytes(unsigned long long* bar, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
      "r"(bytes)
      : "memory");
}

extern "C" __global__ void cluster_bulk_exchange(const int* in, int* out) {
  __shared__ alignas(16) int received[kWords];
  __shared__ alignas(16) int forwarded[kWords];
  __shared__ alignas(16) int multicast[kWords];
  __shared__ int posted[16];
  __shared__ unsigned long long bars[4];  // received, forwarded, multicast, posted
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  const unsigned prev = (rank + size - 1) % size;
  const int* tiles = in + 4 * kWords * blockIdx.x;
  int* mine = out + 4 * kWords * blockIdx.x;
  constexpr unsigned kBytes = kWords * sizeof(int);
  if (threadIdx.x == 0) {
    for (int b = 0; b < 3; ++b) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bars[b])));
    }
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(&bars[3])),
                 "r"(size));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster.sync();  // every CTA's barriers are initialized before any other CTA uses them
  if (threadIdx.x == 0) {
    expect_bytes(&bars[0], kBytes);
    expect_bytes(&bars[1], kBytes);
    expect_bytes(&bars[2], kBytes);
    // tile 0 from global memory into the previous rank's `received`, completing its barrier
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(remote_address(received, prev)),
        "l"(tiles), "r"(kBytes), "r"(remote_address(&bars[0], prev))
        : "memory");
    if (rank == 0) {  // tile 1 to every CTA of the cluster, completing each one's barrier
      const unsigned short mask = static_cast<unsigned short>((1u << size) - 1);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
          "[%0], [%1], %2, [%3], %4;" ::"r"(smem_address(multicast)),
          "l"(tiles + kWords), "r"(kBytes), "r"(smem_address(&bars[2])), "h"(mask)
          : "memory");
    }
  }
  wait_parity(&bars[0], 0);
  for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) mine[i] = received[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    // forward what arrived, from this CTA's shared memory into the previous rank's `forwarded`
    asm volatile(
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];" ::"r"(remote_address(forwarded, prev)),
        "r"(smem_address(received)), "r"(kBytes), "r"(remote_address(&bars[1], prev))
        : "memory");
    // post a value into rank 0's shared memory, then release it with a remote arrive
    const int value = static_cast<int>(1000 * rank + blockIdx.x);
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(remote_address(&posted[rank], 0)),
                 "r"(value)
                 : "memory");
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                     remote_address(&bars[3], 0))
                 : "memory");
  }
  wait_parity(&bars[1], 0);
  wait_parity(&bars[2], 0);
  for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) {
    mine[kWords + i] = forwarded[i];
    mine[2 * kWords + i] = multicast[i];
  }
  if (rank == 0) {
    wait_parity(&bars[3], 0);
    if (threadIdx.x < size) mine[3 * kWords + threadIdx.x] = posted[threadIdx.x];
  }
  cluster.sync();  // no CTA leaves while another may still reach its shared memory
}

// Asynchronous stores and reductions into rank 0's shared memory (cuda::ptx::st_async and
// red_async: st.async / red.async .shared::cluster completing bytes on rank 0's mbarrier). Each
// thread stores its two input ints (a .v2 store) and adds and maxes into rank 0's counters;
// rank 0 waits for every byte, then writes the gathered ints over `out` (the cluster's part) and
// totals[2 * cluster] = the sum of (u32)(v0 + v1), totals[2 * cluster + 1] = the max of (u32)v0.
extern "C" __global__ void cluster_async_stores(const int* in, int* out, unsigned* totals) {
  constexpr unsigned kMaxThreads = 16 * 64;  // a cluster of at most 16 blocks of 64 threads
  __shared__ alignas(16) int gathered[2 * kMaxThreads];
  __shared__ unsigned sum, largest;
  __shared__ unsigned long long bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  if (rank == 0 && threadIdx.x == 0) {
    sum = 0;
    largest = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster.sync();
  if (rank == 0 && threadIdx.x == 0) {
    expect_bytes(&bar, size * blockDim.x * (2 * sizeof(int) + 2 * sizeof(unsigned)));
  }
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v[2] = {in[2 * i], in[2 * i + 1]};
  auto* bar0 = reinterpret_cast<cuda::std::uint64_t*>(cluster.map_shared_rank(&bar, 0));
  cuda::ptx::st_async(cluster.map_shared_rank(&gathered[2 * (rank * blockDim.x + threadIdx.x)], 0),
                      v, bar0);
  cuda::ptx::red_async(cuda::ptx::op_add, cluster.map_shared_rank(&sum, 0),
                       static_cast<unsigned>(v[0] + v[1]), bar0);
  cuda::ptx::red_async(cuda::ptx::op_max, cluster.map_shared_rank(&largest, 0),
                       static_cast<unsigned>(v[0]), bar0);
  if (rank == 0) {
    wait_parity(&bar, 0);
    const unsigned first = blockIdx.x * 2 * blockDim.x;
    for (unsigned k = threadIdx.x; k < 2 * size * blockDim.x; k += blockDim.x) {
      out[first + k] = gathered[k];
    }
    if (threadIdx.x == 0) {
      totals[2 * (blockIdx.x / size)] = sum;
      totals[2 * (blockIdx.x / size) + 1] = largest;
    }
  }
  cluster.sync();
}

// Bulk reductions into rank 0's shared memory (cuda::ptx::cp_reduce_async_bulk with
// .shared::cluster: cp.reduce.async.bulk completing bytes on rank 0's mbarrier). Each block
// puts its blockDim.x ints of `in` into shared memory and one thread adds them (.add.u32) and
// takes their minimum (.min.s32) into rank 0's accumulators; rank 0 waits for every byte and
// writes both over out[2 * blockDim.x * cluster + ...].
extern "C" __global__ void cluster_bulk_reduce(const int* in, unsigned* out) {
  constexpr unsigned kMaxThreads = 64;
  __shared__ alignas(16) unsigned mine[kMaxThreads];
  __shared__ alignas(16) int mine_signed[kMaxThreads];
  __shared__ alignas(16) unsigned sums[kMaxThreads];
  __shared__ alignas(16) int mins[kMaxThreads];
  __shared__ unsigned long long bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  mine[threadIdx.x] = static_cast<unsigned>(v);
  mine_signed[threadIdx.x] = v;
  if (rank == 0) {
    sums[threadIdx.x] = 0;
    mins[threadIdx.x] = 0x7fffffff;
  }
  if (rank == 0 && threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster.sync();
  const auto bytes = static_cast<cuda::std::uint32_t>(blockDim.x * sizeof(int));
  if (rank == 0 && threadIdx.x == 0) expect_bytes(&bar, 2 * size * bytes);
  if (threadIdx.x == 0) {
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    auto* bar0 = reinterpret_cast<cuda::std::uint64_t*>(cluster.map_shared_rank(&bar, 0));
    cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_shared,
                                    cuda::ptx::op_add, cluster.map_shared_rank(sums, 0), mine,
                                    bytes, bar0);
    cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_shared,
                                    cuda::ptx::op_min, cluster.map_shared_rank(mins, 0),
                                    mine_signed, bytes, bar0);
  }
  if (rank == 0) {
    wait_parity(&bar, 0);
    unsigned* part = out + 2 * blockDim.x * (blockIdx.x / size);
    part[threadIdx.x] = sums[threadIdx.x];
    part[blockDim.x + threadIdx.x] = static_cast<unsigned>(mins[threadIdx.x]);
  }
  cluster.sync();
}
