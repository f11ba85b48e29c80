// Host references for the tensor memory accelerator's im2col mode and interleaved tile copies
// (conformance/tma_modes.cu), written from the PTX ISA ("Tensor modes": "im2col mode",
// "Bounding Box", "Traversal Stride"; "Interleave layout") and cuda.h's
// cuTensorMapEncodeIm2col/Tiled, independently of the interpreter. Each reference lists, for
// every element of a box in shared memory order, the byte offset of the tensor element it
// holds, or -1 when that element lies outside the tensor (a load fills it, a tile store skips
// it).
#pragma once

#include <cstdint>
#include <vector>

namespace tmaref {

/// A tensor as a map describes it: `rank` dimensions, dimension 0 innermost, `pitch[i]` bytes
/// between consecutive indices of dimension i (pitch[0]: the element size).
struct Tensor {
  unsigned rank = 0;
  std::int64_t dim[5] = {};
  std::int64_t pitch[5] = {};
};

/// The byte offset of element `c` of `t`, or -1 outside it.
inline std::int64_t offset_of(const Tensor& t, const std::int64_t* c) {
  std::int64_t off = 0;
  for (unsigned i = 0; i < t.rank; ++i) {
    if (c[i] < 0 || c[i] >= t.dim[i]) return -1;
    off += c[i] * t.pitch[i];
  }
  return off;
}

/// An im2col map's box: the bounding box corners (W, H, D: dimensions 1..rank-2, as
/// pixelBoxLowerCorner/UpperCorner list them), channelsPerPixel, pixelsPerColumn and the
/// traversal strides (elementStrides) of dimensions 1..rank-1.
struct Im2col {
  int lower[3] = {};
  int upper[3] = {};
  unsigned channels = 0;
  unsigned pixels = 0;
  unsigned stride[5] = {1, 1, 1, 1, 1};
};

/// The elements of an im2col load at coordinates `coord` (C, W, H, D, N order, `rank` of them)
/// with im2col offsets `offset` (W, H, D). The PTX ISA: the bounding box spans, in each spatial
/// dimension, from its lower corner to the tensor's last index plus its upper corner; the pixels
/// are taken from the coordinates on, W varying fastest by its traversal stride, a pixel past the
/// box's end going back to its lower corner and on to the next H (then D, then N);
/// pixelsPerColumn pixels, each read at its position plus the offsets; of each, channelsPerPixel
/// channels from coordinate C on.
inline std::vector<std::int64_t> im2col_elements(const Tensor& t, const Im2col& m, const int* coord,
                                                 const unsigned short* offset) {
  const unsigned spatial = t.rank - 2;
  std::vector<std::int64_t> out;
  std::int64_t pos[5] = {};  // the pixel, dimensions 1..rank-1
  for (unsigned i = 1; i < t.rank; ++i) pos[i] = coord[i];
  for (unsigned p = 0; p < m.pixels; ++p) {
    for (unsigned ch = 0; ch < m.channels; ++ch) {
      std::int64_t c[5] = {coord[0] + static_cast<std::int64_t>(ch)};
      for (unsigned i = 1; i < t.rank; ++i) c[i] = pos[i] + (i <= spatial ? offset[i - 1] : 0);
      out.push_back(offset_of(t, c));
    }
    // the next pixel: an odometer over W, H, D bounded by the box, carrying into N
    bool carry = true;
    for (unsigned i = 1; carry && i <= spatial; ++i) {
      const std::int64_t last = t.dim[i] - 1 + m.upper[i - 1];
      pos[i] += m.stride[i];
      carry = pos[i] > last;
      if (carry) pos[i] = m.lower[i - 1];
    }
    if (carry) pos[t.rank - 1] += m.stride[t.rank - 1];
  }
  return out;
}

/// The elements of a tiled copy of box `box` with element strides `stride` at `coord`:
/// ceil(box[i] / stride[i]) elements per dimension, dimension 0 innermost; stride[0] counts
/// only when the layout is interleaved (cuda.h: "when interleave is
/// CU_TENSOR_MAP_INTERLEAVE_NONE, the first element of this array is ignored").
inline std::vector<std::int64_t> tile_elements(const Tensor& t, const unsigned* box,
                                               const unsigned* stride, bool interleaved,
                                               const int* coord) {
  unsigned step[5] = {1, 1, 1, 1, 1}, count[5] = {1, 1, 1, 1, 1};
  std::size_t total = 1;
  for (unsigned i = 0; i < t.rank; ++i) {
    step[i] = i == 0 && !interleaved ? 1 : stride[i];
    count[i] = (box[i] + step[i] - 1) / step[i];
    total *= count[i];
  }
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < total; ++k) {
    std::size_t rest = k;
    std::int64_t c[5] = {};
    for (unsigned i = 0; i < t.rank; ++i) {
      c[i] = coord[i] + static_cast<std::int64_t>(rest % count[i]) * step[i];
      rest /= count[i];
    }
    out.push_back(offset_of(t, c));
  }
  return out;
}

}  // namespace tmaref
