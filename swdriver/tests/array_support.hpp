// CUDA arrays for the tests that create them and copy to and from them (array_test.cpp,
// array_copy_test.cpp, copy_batch_test.cpp, graph_array_copy_test.cpp, the texture conformance
// tests), and the host data they compare with.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "swdriver_test.hpp"

namespace swcu::test {

/// A CUDA_ARRAY3D_DESCRIPTOR (Height 0: 1D, Depth 0: 2D, as cuArray3DCreate reads them).
[[nodiscard]] inline CUDA_ARRAY3D_DESCRIPTOR array_desc(std::size_t w, std::size_t h, std::size_t d,
                                                        CUarray_format format,
                                                        unsigned channels = 1, unsigned flags = 0) {
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  desc.Width = w;
  desc.Height = h;
  desc.Depth = d;
  desc.Format = format;
  desc.NumChannels = channels;
  desc.Flags = flags;
  return desc;
}

/// A new array in the current context (32-bit unsigned elements unless told).
[[nodiscard]] inline CUarray make_array(std::size_t w, std::size_t h, std::size_t d,
                                        unsigned channels = 1,
                                        CUarray_format format = CU_AD_FORMAT_UNSIGNED_INT32,
                                        unsigned flags = 0) {
  const CUDA_ARRAY3D_DESCRIPTOR desc = array_desc(w, h, d, format, channels, flags);
  CUarray a = nullptr;
  REQUIRE(api().cuArray3DCreate_v2(&a, &desc) == CUDA_SUCCESS);
  return a;
}

/// `n` consecutive 32-bit values from `first`: data whose every element differs.
[[nodiscard]] inline std::vector<std::uint32_t> iota_words(std::size_t n, std::uint32_t first = 1) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

/// Host memory to a whole array of w x h x d elements of `element_bytes` (32-bit unless told),
/// dense.
[[nodiscard]] inline CUDA_MEMCPY3D host_to_array(const void* src, CUarray dst, std::size_t w,
                                                 std::size_t h, std::size_t d,
                                                 std::size_t element_bytes = 4) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_HOST;
  p.srcHost = src;
  p.srcPitch = w * element_bytes;
  p.srcHeight = h;
  p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  p.dstArray = dst;
  p.WidthInBytes = w * element_bytes;
  p.Height = h;
  p.Depth = d;
  return p;
}

/// A whole array of w x h x d elements of `element_bytes` (32-bit unless told) to dense host
/// memory.
[[nodiscard]] inline CUDA_MEMCPY3D array_to_host(CUarray src, void* dst, std::size_t w,
                                                 std::size_t h, std::size_t d,
                                                 std::size_t element_bytes = 4) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  p.srcArray = src;
  p.dstMemoryType = CU_MEMORYTYPE_HOST;
  p.dstHost = dst;
  p.dstPitch = w * element_bytes;
  p.dstHeight = h;
  p.WidthInBytes = w * element_bytes;
  p.Height = h;
  p.Depth = d;
  return p;
}

}  // namespace swcu::test
