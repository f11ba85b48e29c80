// The cases of the im2col and interleaved tensor copy conformance tests
// (conformance_tma_modes_test.cpp): tensors, maps and per-block coordinates, checked against
// tma_modes_reference.hpp. Float tensors for im2col (NWC, NHWC, NDHWC: C innermost), 16-bit
// ones for the interleaved layouts (NC/8HWC8: dimension 0 holds one 16-byte slice of 8
// channels; NC/16HWC16 one 32-byte slice).
#pragma once

#include <cuda.h>

#include <vector>

#include "tma_modes_reference.hpp"

namespace tmacases {

/// An im2col map over a float tensor and the copies of its blocks.
struct Im2colCase {
  const char* name;
  tmaref::Tensor t;
  tmaref::Im2col m;
  unsigned swizzle;  ///< CUtensorMapSwizzle
  bool nan_fill;
  std::vector<int> coords;              ///< 5 per block (C, W, H, D, N; rank of them used)
  std::vector<unsigned short> offsets;  ///< 3 per block (W, H, D; rank - 2 used)
};

/// A rank-3 tiled map (interleaved or not) and the boxes its blocks copy.
struct TileCase {
  const char* name;
  tmaref::Tensor t;
  unsigned es;  ///< element size
  CUtensorMapDataType type;
  unsigned box[3], stride[3];
  CUtensorMapInterleave il;
  unsigned swizzle;
  std::vector<int> coords;  ///< 3 per block
};

/// A tensor of `rank` dimensions `dims` (innermost first) with rows `pitch0` bytes apart and
/// the rest packed.
inline tmaref::Tensor tensor(unsigned rank, std::initializer_list<long> dims, long es,
                             long pitch0) {
  tmaref::Tensor t;
  t.rank = rank;
  unsigned i = 0;
  for (const long d : dims) t.dim[i++] = d;
  t.pitch[0] = es;
  t.pitch[1] = pitch0;
  for (i = 2; i < rank; ++i) t.pitch[i] = t.pitch[i - 1] * t.dim[i - 1];
  return t;
}

/// Im2col loads: a 3x3 convolution with padding 1 over NHWC (its taps as offsets), with a
/// swizzle and NaN fill, traversal strides 2, NWC with a 128B swizzle, NDHWC. Blocks start at
/// the box's corner, inside it, near its end (wrapping into the next row and image, and past the
/// last image), and read channels past C.
inline std::vector<Im2colCase> im2col_loads() {
  const tmaref::Tensor nhwc = tensor(4, {12, 7, 5, 2}, 4, 48);
  const tmaref::Im2col pad1{{-1, -1, 0}, {-1, -1, 0}, 8, 32, {1, 1, 1, 1, 1}};
  const std::vector<int> pad1_coords = {0, -1, -1, 0, 0, 0, -1, -1, 0, 0, 4, 2, 1,
                                        0, 0,  8,  3, 3, 1, 0,  0,  5, 2, 0, 0};
  const std::vector<unsigned short> pad1_offsets = {0, 0, 0, 1, 1, 0, 2, 0, 0, 2, 2, 0, 0, 2, 0};
  return {
      {"im2col 4d, 3x3 taps, padding 1", nhwc, pad1, CU_TENSOR_MAP_SWIZZLE_NONE, false, pad1_coords,
       pad1_offsets},
      {"im2col 4d, 32B swizzle, NaN fill", nhwc, pad1, CU_TENSOR_MAP_SWIZZLE_32B, true, pad1_coords,
       pad1_offsets},
      {"im2col 4d, traversal stride 2, 64B swizzle",
       tensor(4, {16, 9, 7, 2}, 4, 64),
       {{-1, -1, 0}, {-2, -2, 0}, 16, 20, {1, 2, 2, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_64B,
       false,
       {0, -1, -1, 0, 0, 0, -1, -1, 0, 0, 0, 1, 3, 0, 0, 0, 5, 3, 1, 0},
       {0, 0, 0, 2, 1, 0, 1, 2, 0, 0, 0, 0}},
      {"im2col 3d, 128B swizzle",
       tensor(3, {40, 50, 3}, 4, 160),
       {{-2, 0, 0}, {1, 0, 0}, 32, 64, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_128B,
       false,
       {0, -2, 0, 0, 0, 8, 30, 1, 0, 0, 0, 40, 2, 0, 0},
       {0, 0, 0, 3, 0, 0, 1, 0, 0}},
      {"im2col 5d",
       tensor(5, {4, 5, 4, 3, 2}, 4, 16),
       {{-1, -1, -1}, {0, -1, 0}, 4, 48, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_NONE,
       false,
       {0, -1, -1, -1, 0, 0, 2, 1, 0, 0, 0, 3, 2, 2, 1},
       {1, 0, 1, 0, 1, 2, 1, 1, 1}},
  };
}

/// Im2col_no_offs stores, one block each, in 3d, 4d and 5d: each is an illegal instruction on
/// sm_90 (an H200 faults on the first, 2026-11-27), so the test checks the fault, not data.
inline std::vector<Im2colCase> im2col_stores() {
  return {
      {"im2col_no_offs 4d",
       tensor(4, {12, 7, 5, 2}, 4, 48),
       {{-1, -1, 0}, {-1, -1, 0}, 8, 40, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_32B,
       false,
       {4, 3, 0, 0, 0},
       {0, 0, 0}},
      {"im2col_no_offs 3d",
       tensor(3, {40, 50, 3}, 4, 160),
       {{-2, 0, 0}, {1, 0, 0}, 32, 64, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_128B,
       false,
       {8, 30, 1, 0, 0},
       {0, 0, 0}},
      {"im2col_no_offs 5d",
       tensor(5, {4, 5, 4, 3, 2}, 4, 16),
       {{-1, -1, -1}, {0, -1, 0}, 4, 48, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_NONE,
       false,
       {0, 2, 1, 0, 0},
       {0, 0, 0}},
  };
}

/// Im2col_no_offs .add reductions (4d), several blocks: illegal instructions like the stores.
inline std::vector<Im2colCase> im2col_reductions() {
  return {
      {"im2col_no_offs 4d .add",
       tensor(4, {12, 7, 5, 2}, 4, 48),
       {{-1, -1, 0}, {-1, -1, 0}, 8, 40, {1, 1, 1, 1, 1}},
       CU_TENSOR_MAP_SWIZZLE_NONE,
       false,
       {0, -1, -1, 0, 0, 4, 0, 0, 0, 0, 0, 2, 1, 0, 0, 8, 4, 3, 1, 0},
       {0, 0, 0}},
  };
}

/// Rank-3 tiled copies: NC/8HWC8 (16-byte slices) in every swizzle mode and with element
/// strides, NC/16HWC16 (32-byte slices, which need the 32B swizzle), and a plain layout.
inline std::vector<TileCase> tiles() {
  const tmaref::Tensor c8 = tensor(3, {8, 20, 6}, 2, 16);
  const std::vector<int> c8_coords = {0, -3, -1, 0, 5, 2, 0, 16, 4};
  return {
      {"interleave 16B",
       c8,
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {8, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_16B,
       CU_TENSOR_MAP_SWIZZLE_NONE,
       c8_coords},
      {"interleave 16B, 32B swizzle",
       c8,
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {8, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_16B,
       CU_TENSOR_MAP_SWIZZLE_32B,
       c8_coords},
      {"interleave 16B, 64B swizzle",
       c8,
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {8, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_16B,
       CU_TENSOR_MAP_SWIZZLE_64B,
       c8_coords},
      {"interleave 16B, 128B swizzle",
       c8,
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {8, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_16B,
       CU_TENSOR_MAP_SWIZZLE_128B,
       c8_coords},
      {"interleave 16B, element strides 2",
       c8,
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {8, 8, 4},
       {1, 2, 2},
       CU_TENSOR_MAP_INTERLEAVE_16B,
       CU_TENSOR_MAP_SWIZZLE_NONE,
       c8_coords},
      {"interleave 32B",
       tensor(3, {16, 20, 6}, 2, 32),
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {16, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_32B,
       CU_TENSOR_MAP_SWIZZLE_32B,
       c8_coords},
      {"no interleave, 3d, 32B swizzle",
       tensor(3, {24, 20, 6}, 2, 48),
       2,
       CU_TENSOR_MAP_DATA_TYPE_UINT16,
       {16, 8, 3},
       {1, 1, 1},
       CU_TENSOR_MAP_INTERLEAVE_NONE,
       CU_TENSOR_MAP_SWIZZLE_32B,
       {0, -3, -1, 8, 5, 2, 16, 16, 4}},
  };
}

}  // namespace tmacases
