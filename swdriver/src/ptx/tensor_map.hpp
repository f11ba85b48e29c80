// The software driver's tensor map (CUtensorMap, the 128-byte opaque object that
// cuTensorMapEncodeTiled/Im2col/Im2colWide fill and cp.async.bulk.tensor reads): what the
// driver stores in it, checked and encoded by exec/tensor_map.cpp, decoded by the interpreter
// (exec_tensor.cpp) each time a kernel uses it, as the GPU reads the descriptor. The field values
// are cuda.h's enumerators (CUtensorMapDataType, CUtensorMapInterleave, ...); this layer does not
// include cuda.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

namespace swcu::ptx {

/// How a tensor map addresses its box.
enum class TensorMapMode : std::uint8_t { tiled, im2col, im2col_wide };

/// The contents of a tensor map, in the object's 128 bytes. Trivially copyable; `magic` tells
/// a map the driver encoded from any other bytes.
struct TensorMapDesc {
  static constexpr std::uint32_t kMagic = 0x4d545753;  // "SWTM"
  std::uint32_t magic = kMagic;
  TensorMapMode mode = TensorMapMode::tiled;
  std::uint8_t data_type = 0;  ///< CUtensorMapDataType
  std::uint8_t rank = 0;       ///< 1..5
  std::uint8_t interleave = 0;
  std::uint8_t swizzle = 0;
  std::uint8_t l2_promotion = 0;
  std::uint8_t oob_fill = 0;  ///< CUtensorMapFloatOOBfill
  std::uint8_t wide_mode = 0;
  std::uint64_t address = 0;
  std::uint32_t dim_minus_one[5] = {};  ///< globalDim - 1 (a dimension is 1..2^32)
  std::uint64_t stride[4] = {};         ///< bytes between consecutive indices of dims 1..4
  std::uint16_t box[5] = {};            ///< tiled: boxDim (1..256)
  std::uint8_t element_stride[5] = {};  ///< 1..8
  std::uint8_t unused = 0;
  std::int16_t lower[3] = {};  ///< im2col: pixelBoxLowerCorner (W, H, D)
  std::int16_t upper[3] = {};  ///< im2col: pixelBoxUpperCorner
  std::uint16_t channels_per_pixel = 0;
  std::uint16_t pixels_per_column = 0;
  std::int32_t lower_width = 0;  ///< im2col wide
  std::int32_t upper_width = 0;

  /// The element's size in bytes, 0 for the packed sub-byte types (CU_TENSOR_MAP_DATA_TYPE_16U4*,
  /// 16U6*), which the interpreter does not move.
  static unsigned element_size(unsigned data_type) {
    constexpr unsigned kSizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    return data_type < 13 ? kSizes[data_type] : 0;
  }
  /// Whether the data type is a floating-point one (CU_TENSOR_MAP_DATA_TYPE_FLOAT16..TFLOAT32_FTZ).
  static bool is_float(unsigned data_type) { return data_type >= 6 && data_type <= 12; }

  /// The map in `bytes` (128 of them), or nothing when they hold no encoded map.
  static std::optional<TensorMapDesc> read(const void* bytes) {
    TensorMapDesc d;
    std::memcpy(&d, bytes, sizeof d);
    if (d.magic != kMagic || d.rank == 0 || d.rank > 5) return std::nullopt;
    return d;
  }
  /// Writes the map into the object's 128 bytes (the rest zero).
  void write(void* bytes) const {
    std::memset(bytes, 0, 128);
    std::memcpy(bytes, this, sizeof *this);
  }
};

static_assert(sizeof(TensorMapDesc) <= 128, "a tensor map is 128 bytes");

}  // namespace swcu::ptx
