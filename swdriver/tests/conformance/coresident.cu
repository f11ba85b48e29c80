// Conformance kernels that need their blocks to run together (co-resident CTAs), launched as
// ordinary launches: a single-pass scan with decoupled look-back (each tile waits for its
// predecessors' flags), a persistent kernel whose blocks meet at a start line and then take
// work from an atomic queue, each item waiting for the one before it, and a kernel that measures
// how many blocks are resident at once. None completes when blocks run one after another.
#include <cuda/atomic>

namespace {

// A tile's status word: the state in the high 32 bits, the value in the low 32.
constexpr unsigned long long kInvalid = 0;    // nothing published yet
constexpr unsigned long long kAggregate = 1;  // the tile's own sum
constexpr unsigned long long kPrefix = 2;     // the inclusive prefix up to and with the tile

__device__ unsigned long long pack(unsigned long long state, int value) {
  return (state << 32) | static_cast<unsigned>(value);
}

// Publishing and reading status words: with cuda::atomic_ref release/acquire (st.release.gpu,
// ld.acquire.gpu), or CUB's classic volatile accesses with __threadfence() (membar.gl).
template <bool AcquireRelease>
__device__ void publish(unsigned long long* word, unsigned long long value) {
  if constexpr (AcquireRelease) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).store(
        value, cuda::memory_order_release);
  } else {
    __threadfence();
    *static_cast<volatile unsigned long long*>(word) = value;
  }
}
template <bool AcquireRelease>
__device__ unsigned long long observe(unsigned long long* word) {
  if constexpr (AcquireRelease) {
    return cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).load(
        cuda::memory_order_acquire);
  } else {
    const unsigned long long v = *static_cast<volatile unsigned long long*>(word);
    __threadfence();
    return v;
  }
}

// Inclusive scan of the block's values (block size a multiple of 32, at most 1024); `total`
// receives the block's sum.
__device__ int block_inclusive_scan(int x, int* warp_sums, int& total) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  int v = x;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= static_cast<unsigned>(offset)) v += up;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x >> 5;
    int w = lane < warps ? warp_sums[lane] : 0;
    for (int offset = 1; offset < 32; offset <<= 1) {
      const int up = __shfl_up_sync(0xffffffffu, w, offset);
      if (lane >= static_cast<unsigned>(offset)) w += up;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1];
  total = warp_sums[(blockDim.x >> 5) - 1];
  return v;
}

// Single-pass inclusive scan with decoupled look-back (Merrill and Garland): each block scans its
// tile, publishes its aggregate, then its first thread walks back over the predecessors' status
// words, spinning while one is invalid, adding aggregates until it meets an inclusive prefix.
// Tiles are numbered by blockIdx.x, or in the order blocks start (an atomic counter), as CUB
// does; `status` starts zeroed. The unused dynamic shared memory lets a test limit occupancy.
template <bool AcquireRelease>
__device__ void scan_lookback(const int* in, int* out, unsigned long long* status,
                              unsigned* tile_counter, int n, int dynamic_ids) {
  __shared__ int warp_sums[32];
  __shared__ unsigned tile_id;
  __shared__ int exclusive;
  if (threadIdx.x == 0) tile_id = dynamic_ids != 0 ? atomicAdd(tile_counter, 1u) : blockIdx.x;
  __syncthreads();
  const unsigned tile = tile_id;
  const unsigned i = tile * blockDim.x + threadIdx.x;
  const int x = i < static_cast<unsigned>(n) ? in[i] : 0;
  int total = 0;
  const int inclusive = block_inclusive_scan(x, warp_sums, total);
  if (threadIdx.x == 0) {
    int before = 0;
    if (tile == 0) {
      publish<AcquireRelease>(&status[0], pack(kPrefix, total));
    } else {
      publish<AcquireRelease>(&status[tile], pack(kAggregate, total));
      for (unsigned j = tile - 1;; --j) {
        unsigned long long word;
        do {
          word = observe<AcquireRelease>(&status[j]);
        } while ((word >> 32) == kInvalid);
        before += static_cast<int>(static_cast<unsigned>(word));
        if ((word >> 32) == kPrefix) break;
      }
      publish<AcquireRelease>(&status[tile], pack(kPrefix, before + total));
    }
    exclusive = before;
  }
  __syncthreads();
  if (i < static_cast<unsigned>(n)) out[i] = exclusive + inclusive;
}

}  // namespace

extern "C" __global__ void scan_lookback_acqrel(const int* in, int* out, unsigned long long* status,
                                                unsigned* tile_counter, int n, int dynamic_ids) {
  scan_lookback<true>(in, out, status, tile_counter, n, dynamic_ids);
}

extern "C" __global__ void scan_lookback_volatile(const int* in, int* out,
                                                  unsigned long long* status,
                                                  unsigned* tile_counter, int n, int dynamic_ids) {
  scan_lookback<false>(in, out, status, tile_counter, n, dynamic_ids);
}

// A persistent kernel: every block counts itself in at a start line and waits there until all
// gridDim.x blocks arrived (only co-resident blocks get past it), then takes items from an
// atomic queue until it is empty. Item k sums its tile of `in`; prefix[k] is the running sum of
// the tiles' sums, so item k waits for item k-1's ready flag (held by a running block: items
// are handed out in order). taken[k] counts how often item k was taken, per_block[b] how many
// items block b did. The counters start zeroed.
extern "C" __global__ void persistent_queue(const int* in, long long* prefix, int* ready,
                                            unsigned* taken, unsigned* per_block, unsigned* head,
                                            unsigned* arrived, int items, int tile) {
  __shared__ unsigned item;
  __shared__ long long warp_sums[32];
  if (threadIdx.x == 0) {
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < gridDim.x) {
    }
  }
  __syncthreads();
  for (;;) {
    if (threadIdx.x == 0) item = atomicAdd(head, 1u);
    __syncthreads();
    const unsigned k = item;
    if (k >= static_cast<unsigned>(items)) break;
    long long v = 0;
    for (int e = static_cast<int>(threadIdx.x); e < tile; e += static_cast<int>(blockDim.x))
      v += in[static_cast<long long>(k) * tile + e];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31u) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      long long sum = 0;
      for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) sum += warp_sums[w];
      long long before = 0;
      if (k > 0) {
        while (*static_cast<volatile int*>(&ready[k - 1]) == 0) {
        }
        __threadfence();
        before = prefix[k - 1];
      }
      prefix[k] = before + sum;
      __threadfence();
      *static_cast<volatile int*>(&ready[k]) = 1;
      atomicAdd(&taken[k], 1u);
      atomicAdd(&per_block[blockIdx.x], 1u);
    }
    __syncthreads();  // `item` and `warp_sums` are rewritten by the next round
  }
}

// Measures the resident set of an ordinary launch: thread 0 of every block counts itself in
// `running`, records the largest count in `peak`, and waits until `expected` blocks run at once
// (or every block not finished yet does), then counts itself out. With as many blocks resident
// as the occupancy calculation allows, and no more, `peak` ends equal to `expected`.
extern "C" __global__ void resident_peak(unsigned* running, unsigned* finished, unsigned* peak,
                                         unsigned expected) {
  if (threadIdx.x != 0) return;
  atomicMax(peak, atomicAdd(running, 1u) + 1u);
  for (;;) {
    const unsigned now = atomicAdd(running, 0u);
    const unsigned left = gridDim.x - atomicAdd(finished, 0u);
    if (now >= (expected < left ? expected : left)) break;
  }
  atomicSub(running, 1u);
  atomicAdd(finished, 1u);
}
