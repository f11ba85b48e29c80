// Conformance kernels: atomics in shared and global memory.

// Histogram of bytes into `bins` bins (bins <= 256): shared-memory atomics per block, then
// global atomics; grid-stride.
extern "C" __global__ void histogram(const unsigned char* data, int n, unsigned* hist, int bins) {
  extern __shared__ unsigned local_hist[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) local_hist[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local_hist[data[i] % bins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x)
    if (local_hist[b] != 0) atomicAdd(&hist[b], local_hist[b]);
}

// Global atomics of several types. out layout:
//   fsum (float), dsum (double), llsum (unsigned long long), llmax (long long),
//   imin, imax, iand, ior, ixor (int), dmax_cas (double, by an atomicCAS loop),
//   fmul_cas (float, by an atomicCAS loop), counter (unsigned, atomicInc with wrap).
struct AtomicResults {
  float fsum;
  float fmul;
  double dsum;
  unsigned long long llsum;
  long long llmax;
  long long llmin;
  int imin;
  int imax;
  int iand;
  int ior;
  int ixor;
  unsigned wrap;
  double dmax;
  int exch_count;
  int cas_winner;
};

__device__ double atomic_max_double(double* address, double value) {
  auto* bits = reinterpret_cast<unsigned long long*>(address);
  unsigned long long old = *bits;
  while (__longlong_as_double(old) < value) {
    const unsigned long long assumed = old;
    old = atomicCAS(bits, assumed, __double_as_longlong(value));
    if (old == assumed) break;
  }
  return __longlong_as_double(old);
}

__device__ float atomic_mul_float(float* address, float factor) {
  auto* bits = reinterpret_cast<unsigned*>(address);
  unsigned old = *bits;
  unsigned assumed;
  do {
    assumed = old;
    old = atomicCAS(bits, assumed, __float_as_uint(__uint_as_float(assumed) * factor));
  } while (assumed != old);
  return __uint_as_float(old);
}

extern "C" __global__ void atomics_mixed(const int* values, int n, AtomicResults* r,
                                         int* exch_slots) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = values[i];
  atomicAdd(&r->fsum, static_cast<float>(v));
  atomicAdd(&r->dsum, static_cast<double>(v) * 0.5);
  atomicAdd(&r->llsum, static_cast<unsigned long long>(v) << 33);
  atomicMax(&r->llmax, static_cast<long long>(v) * -1000000007LL);
  atomicMin(&r->llmin, static_cast<long long>(v) * 3000000000LL);
  atomicMin(&r->imin, v);
  atomicMax(&r->imax, v);
  atomicAnd(&r->iand, ~(1 << (v & 31)));
  atomicOr(&r->ior, 1 << (v & 31));
  atomicXor(&r->ixor, v);
  atomicInc(&r->wrap, 16u);
  atomic_max_double(&r->dmax, static_cast<double>(v) / 7.0);
  if ((i & 63) == 0) atomic_mul_float(&r->fmul, 2.0f);
  // Every thread swaps its id into one of 4 slots; the old values are counted on the host
  // through exch_slots (each thread writes what it got back).
  exch_slots[4 + i] = atomicExch(&exch_slots[i & 3], i);
  // Exactly one thread wins the CAS from -1.
  if (atomicCAS(&r->cas_winner, -1, i) == -1) atomicAdd(&r->exch_count, 1);
}

// More atomics: shared-memory double adds, 16-bit CAS, half2 and bfloat16 adds, block- and
// system-scope adds, float exchange, atomicDec and atomicSub. One result record per block plus
// global ones.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct MoreAtomics {
  __half2 h2;
  __nv_bfloat16 bf;
  unsigned short u16;
  unsigned dec;
  int sub;
  int block_scope;
  unsigned long long system_scope;
  float exch;
  int exch_seen;
};

extern "C" __global__ void atomics_more(const int* values, int n, MoreAtomics* r,
                                        double* block_sums) {
  __shared__ double shared_sum;
  if (threadIdx.x == 0) shared_sum = 0.0;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int v = values[i];
    atomicAdd(&shared_sum, static_cast<double>(v) * 0.25);
    atomicAdd(&r->h2, __halves2half2(__float2half(1.0f), __float2half(0.5f)));
    atomicAdd(&r->bf, __float2bfloat16(2.0f));
    // 16-bit CAS loop: count in a 16-bit field.
    unsigned short old = r->u16;
    for (;;) {
      const unsigned short seen = atomicCAS(&r->u16, old, static_cast<unsigned short>(old + 3));
      if (seen == old) break;
      old = seen;
    }
    atomicDec(&r->dec, 1000u);
    atomicSub(&r->sub, v);
    atomicAdd_block(&r->block_scope, 1);
    atomicAdd_system(&r->system_scope, static_cast<unsigned long long>(v & 0xff));
    const float before = atomicExch(&r->exch, static_cast<float>(i));
    if (before == -1.0f) atomicAdd(&r->exch_seen, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) block_sums[blockIdx.x] = shared_sum;
}

// The "last block" pattern: each block stores its partial sum, fences, and takes a ticket; the
// block with the last ticket adds all the partials.
extern "C" __global__ void last_block_sum(const float* in, float* partials, unsigned* tickets,
                                          float* total, int n) {
  __shared__ float sums[256];
  __shared__ bool last;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  sums[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sums[0];
    __threadfence();
    const unsigned ticket = atomicInc(tickets, gridDim.x);
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float t = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) t += *(volatile float*)&partials[b];
    *total = t;
    *tickets = 0;
  }
}
