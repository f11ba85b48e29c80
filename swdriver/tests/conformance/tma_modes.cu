// Conformance kernels: the tensor memory accelerator's im2col mode and interleaved layouts
// (PTX ISA "Tensor modes", cuda.h cuTensorMapEncodeIm2col and CUtensorMapInterleave). cuda::ptx
// has no im2col copies, so they are written in inline PTX as CUTLASS's SM90_TMA_LOAD_IM2COL
// writes them: 32-bit shared addresses, the map's generic address, 16-bit im2col offsets.
// Each block moves one box; the kernels hand the box's bytes back in the dense order (undoing
// the swizzle) so the host compares them with its reference.
#include <cuda.h>

#include <cuda/ptx>

namespace ptx = cuda::ptx;

// The byte offset in shared memory where byte `offset` of the dense box lands under
// CUtensorMapSwizzle `swizzle` (0 none, 1 32B, 2 64B, 3 128B): the 16-byte chunk (bits 4..6)
// XOR the 128-byte row (bits 7..9), as many bits as the mode has.
__device__ unsigned swizzled(unsigned offset, unsigned swizzle) {
  if (swizzle == 0) return offset;
  const unsigned mask = (1u << swizzle) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

__device__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Block b loads, in im2col mode, the box at coordinates coords[b * 5 ..] (C, W, {H, {D,}} N)
// with im2col offsets offsets[b * 3 ..] (W, {H, {D}}) of the rank-`rank` map, waits for the
// mbarrier, and writes the box's `bytes` to out[b * bytes ..].
extern "C" __global__ void tma_im2col_load(const __grid_constant__ CUtensorMap map, int rank,
                                           const int* coords, const unsigned short* offsets,
                                           unsigned char* out, unsigned bytes, unsigned swizzle) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    auto* b64 = reinterpret_cast<cuda::std::uint64_t*>(&bar);
    ptx::mbarrier_init(b64, 1);
    ptx::fence_proxy_async(ptx::space_shared);
    const int* c = coords + blockIdx.x * 5;
    const unsigned short* o = offsets + blockIdx.x * 3;
    const unsigned dst = shared_address(smem), mbar = shared_address(&bar);
    switch (rank) {
      case 3:
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4}], [%5], {%6};" ::"r"(dst),
            "l"(&map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar), "h"(o[0])
            : "memory");
        break;
      case 4:
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};" ::"r"(dst),
            "l"(&map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar), "h"(o[0]), "h"(o[1])
            : "memory");
        break;
      default:
        asm volatile(
            "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};" ::"r"(dst),
            "l"(&map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mbar), "h"(o[0]),
            "h"(o[1]), "h"(o[2])
            : "memory");
        break;
    }
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, b64, bytes);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(reinterpret_cast<cuda::std::uint64_t*>(&bar), 0)) {
  }
  unsigned char* mine = out + blockIdx.x * bytes;
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) mine[i] = smem[swizzled(i, swizzle)];
}

// Block b puts in[b * bytes ..] into shared memory (through the swizzle) and stores it
// (reduce == 0) or adds it (.add, reduce != 0) in im2col_no_offs mode at coordinates
// coords[b * 5 ..] of the rank-`rank` map. ptxas assembles it for sm_90, but an H200 raises
// CUDA_ERROR_ILLEGAL_INSTRUCTION on the copy (2026-11-27), as the software driver does.
extern "C" __global__ void tma_im2col_store(const __grid_constant__ CUtensorMap map, int rank,
                                            const int* coords, const unsigned char* in,
                                            unsigned bytes, unsigned swizzle, int reduce) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned char* mine = in + blockIdx.x * bytes;
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) smem[swizzled(i, swizzle)] = mine[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    const int* c = coords + blockIdx.x * 5;
    const unsigned src = shared_address(smem);
    if (reduce == 0) {
      switch (rank) {
        case 3:
          asm volatile(
              "cp.async.bulk.tensor.3d.global.shared::cta.im2col_no_offs.bulk_group"
              " [%0, {%1, %2, %3}], [%4];" ::"l"(&map),
              "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src)
              : "memory");
          break;
        case 4:
          asm volatile(
              "cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group"
              " [%0, {%1, %2, %3, %4}], [%5];" ::"l"(&map),
              "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src)
              : "memory");
          break;
        default:
          asm volatile(
              "cp.async.bulk.tensor.5d.global.shared::cta.im2col_no_offs.bulk_group"
              " [%0, {%1, %2, %3, %4, %5}], [%6];" ::"l"(&map),
              "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(src)
              : "memory");
          break;
      }
    } else {
      asm volatile(
          "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.im2col_no_offs.bulk_group"
          " [%0, {%1, %2, %3, %4}], [%5];" ::"l"(&map),
          "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src)
          : "memory");
    }
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}

// Block b loads the box at coords[b * 3 ..] of the rank-3 tiled map `in_map` (interleaved or
// not), writes its `bytes` to out[b * bytes ..] and stores the box through `out_map` at the
// same coordinates.
extern "C" __global__ void tma_tile3_roundtrip(const __grid_constant__ CUtensorMap in_map,
                                               const __grid_constant__ CUtensorMap out_map,
                                               const int* coords, unsigned char* out,
                                               unsigned bytes, unsigned swizzle) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ alignas(8) unsigned long long bar;
  auto* b64 = reinterpret_cast<cuda::std::uint64_t*>(&bar);
  const int c[3] = {coords[blockIdx.x * 3], coords[blockIdx.x * 3 + 1], coords[blockIdx.x * 3 + 2]};
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(b64, 1);
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, smem, &in_map, c, b64);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, b64, bytes);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(b64, 0)) {
  }
  unsigned char* mine = out + blockIdx.x * bytes;
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) mine[i] = smem[swizzled(i, swizzle)];
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &out_map, c, smem);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
