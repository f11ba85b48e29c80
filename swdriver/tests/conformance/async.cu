// Conformance kernels: asynchronous copies and barriers. Double-buffered tiled matrix multiplies
// whose tiles arrive by cp.async (the __pipeline primitives: commit and wait groups) and by a
// two-stage cuda::pipeline (mbarriers tracking cp.async), cuda::memcpy_async with a
// cuda::barrier (element copies, and a bulk copy completing the barrier's tx-count), zero-fill,
// a bulk store from shared to global memory (cuda::ptx), the CUDA Programming Guide's bulk copy
// example, and a pair of kernels using programmatic dependent launch.
#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>

namespace cg = cooperative_groups;

// A __shared__ cuda::barrier or pipeline state is initialized by init() or make_pipeline(), not by
// a constructor (the CUDA Programming Guide's pattern).
#pragma nv_diag_suppress static_var_with_dynamic_init

constexpr int kTile = 16;

// C (M x N) = A (M x K) * B (K x N), row-major floats, M, N, K multiples of 16; grid (N/16, M/16),
// block (16, 16). Tile k+1 is copied (cp.async, one commit group per tile) while tile k is used.
extern "C" __global__ void matmul_cp_async(const float* A, const float* B, float* C, int M, int N,
                                           int K) {
  __shared__ float as[2][kTile][kTile];
  __shared__ float bs[2][kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int tiles = K / kTile;
  auto fetch = [&](int t, int stage) {
    __pipeline_memcpy_async(&as[stage][ty][tx], &A[row * K + t * kTile + tx], sizeof(float));
    __pipeline_memcpy_async(&bs[stage][ty][tx], &B[(t * kTile + ty) * N + col], sizeof(float));
    __pipeline_commit();
  };
  fetch(0, 0);
  float acc = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      fetch(t + 1, (t + 1) % 2);
      __pipeline_wait_prior(1);  // every group but the newest: tile t is here
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += as[t % 2][ty][k] * bs[t % 2][k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
  (void)M;
}

// The same product through a two-stage cuda::pipeline of the whole block: producer_acquire
// waits for the stage to be released, consumer_wait for every thread's copies of the stage.
extern "C" __global__ void matmul_pipeline(const float* A, const float* B, float* C, int M, int N,
                                           int K) {
  __shared__ float as[2][kTile][kTile];
  __shared__ float bs[2][kTile][kTile];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int tiles = K / kTile;
  int fetched = 0;
  float acc = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    for (; fetched < tiles && fetched < t + 2; ++fetched) {
      pipe.producer_acquire();
      const int s = fetched % 2;
      cuda::memcpy_async(&as[s][ty][tx], &A[row * K + fetched * kTile + tx], sizeof(float), pipe);
      cuda::memcpy_async(&bs[s][ty][tx], &B[(fetched * kTile + ty) * N + col], sizeof(float), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    for (int k = 0; k < kTile; ++k) acc += as[t % 2][ty][k] * bs[t % 2][k][tx];
    pipe.consumer_release();
  }
  C[row * N + col] = acc;
  (void)M;
}

// Each block copies its 256 ints into shared memory with cuda::memcpy_async on a cuda::barrier
// (cp.async element copies that the barrier tracks), then out[i] = 2 * in[neighbour].
extern "C" __global__ void barrier_copy(const int* in, int* out) {
  __shared__ int s[256];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, s, in + blockIdx.x * 256, sizeof(int) * 256, bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 256 + threadIdx.x] = 2 * s[(threadIdx.x + 1) % 256];
}

// The same with 16-byte alignment: one bulk copy that completes the barrier's tx-count.
extern "C" __global__ void barrier_copy_bulk(const int4* in, int4* out) {
  __shared__ alignas(16) int4 s[64];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, s, in + blockIdx.x * 64, cuda::aligned_size_t<16>(sizeof(int4) * 64),
                     bar);
  bar.arrive_and_wait();
  const int4 v = s[63 - threadIdx.x];
  out[blockIdx.x * 64 + threadIdx.x] = make_int4(v.w, v.z, v.y, v.x);
}

// Copies n floats (n <= 4 * blockDim.x) in 16-byte pieces, the last one partly: the copy's
// bytes past the end of the input are zero-filled (src-size), never read.
extern "C" __global__ void zero_fill(const float* in, float* out, int n) {
  __shared__ alignas(16) float s[1024];
  const int first = 4 * threadIdx.x;
  const int valid = n - first < 0 ? 0 : (n - first > 4 ? 4 : n - first);
  __pipeline_memcpy_async(&s[first], &in[valid > 0 ? first : 0], 16, 16 - 4 * valid);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  for (int i = 0; i < 4; ++i) out[first + i] = s[first + i] + 1.0f;
}

// Each block squares its 256 floats into shared memory, then thread 0 stores them to global
// memory with one bulk copy (a proxy fence first: the bulk copy reads through the async proxy).
extern "C" __global__ void bulk_store(const float* in, float* out) {
  __shared__ alignas(16) float s[256];
  const int i = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = in[i] * in[i];
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared,
                             out + blockIdx.x * 256, s, 256 * sizeof(float));
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
  }
}

// Programmatic dependent launch: the primary lets its dependent start early, then writes mid;
// the secondary does its independent part, then waits for the primary's completion and memory.
extern "C" __global__ void pdl_primary(const int* in, int* mid, int n) {
  cudaTriggerProgrammaticLaunchCompletion();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mid[i] = 3 * in[i];
}

extern "C" __global__ void pdl_secondary(const int* mid, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int bias = i % 7;  // work that does not depend on the primary
  cudaGridDependencySynchronize();
  if (i < n) out[i] = mid[i] + bias;
}

// The CUDA Programming Guide's one-dimensional bulk copy ("TMA") example: thread 0 copies the
// block's 1024 ints into shared memory with memcpy_async_tx and arrives with their byte count, the
// block adds one, and thread 0 stores the result back with a bulk copy.
extern "C" __global__ void tma_add_one(int* data) {
  constexpr int buf_len = 1024;
  __shared__ alignas(16) int smem_data[buf_len];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  const size_t offset = blockIdx.x * buf_len;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
  cuda::barrier<cuda::thread_scope_block>::arrival_token token;
  if (threadIdx.x == 0) {
    cuda::device::memcpy_async_tx(smem_data, data + offset,
                                  cuda::aligned_size_t<16>(sizeof(smem_data)), bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_data));
  } else {
    token = bar.arrive();
  }
  bar.wait(cuda::std::move(token));
  for (int i = threadIdx.x; i < buf_len; i += blockDim.x) smem_data[i] += 1;
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, data + offset,
                             smem_data, sizeof(smem_data));
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
  }
}
