// Tensor maps (CUtensorMap) for the tensor memory accelerator: typed builders over a device span
// that check every requirement cuda.h lists for cuTensorMapEncodeTiled / Im2col / Im2colWide
// before the driver is called, naming the one violated.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <type_traits>

#include "cuwrap/context.hpp"
#include "cuwrap/device_span.hpp"

namespace cuwrap {

/// The element type of a tensor map (CUtensorMapDataType; the packed sub-byte types are left
/// out: they need compute capability 10.0).
enum class tensor_data_type {
  uint8 = CU_TENSOR_MAP_DATA_TYPE_UINT8,
  uint16 = CU_TENSOR_MAP_DATA_TYPE_UINT16,
  uint32 = CU_TENSOR_MAP_DATA_TYPE_UINT32,
  int32 = CU_TENSOR_MAP_DATA_TYPE_INT32,
  uint64 = CU_TENSOR_MAP_DATA_TYPE_UINT64,
  int64 = CU_TENSOR_MAP_DATA_TYPE_INT64,
  float16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
  float32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
  float64 = CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
  bfloat16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
  float32_ftz = CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
  tfloat32 = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
  tfloat32_ftz = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
};

/// How shared memory is swizzled (CUtensorMapSwizzle): 16-byte chunks XORed within a 32, 64
/// or 128-byte span.
enum class tensor_swizzle {
  none = CU_TENSOR_MAP_SWIZZLE_NONE,
  bytes32 = CU_TENSOR_MAP_SWIZZLE_32B,
  bytes64 = CU_TENSOR_MAP_SWIZZLE_64B,
  bytes128 = CU_TENSOR_MAP_SWIZZLE_128B,
  bytes128_atom32 = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B,                ///< compute capability 10.0
  bytes128_atom32_flip8 = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,  ///< 10.0
  bytes128_atom64 = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B,                ///< 10.0
};

/// Interleaved layouts (CUtensorMapInterleave), such as NC/8HWC8.
enum class tensor_interleave {
  none = CU_TENSOR_MAP_INTERLEAVE_NONE,
  bytes16 = CU_TENSOR_MAP_INTERLEAVE_16B,
  bytes32 = CU_TENSOR_MAP_INTERLEAVE_32B,
};

/// L2 fetch granularity (CUtensorMapL2promotion).
enum class tensor_l2_promotion {
  none = CU_TENSOR_MAP_L2_PROMOTION_NONE,
  bytes64 = CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
  bytes128 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
  bytes256 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
};

/// What a load reads outside the tensor (CUtensorMapFloatOOBfill).
enum class tensor_oob_fill {
  zero = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
  nan_request_zero_fma = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,  ///< floats only
};

/// The data type of T, for the types that have one (others name it with .data_type()).
template <class T>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of = std::nullopt;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::uint8_t> =
    tensor_data_type::uint8;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::uint16_t> =
    tensor_data_type::uint16;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::uint32_t> =
    tensor_data_type::uint32;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::int32_t> =
    tensor_data_type::int32;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::uint64_t> =
    tensor_data_type::uint64;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<std::int64_t> =
    tensor_data_type::int64;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<float> =
    tensor_data_type::float32;
template <>
inline constexpr std::optional<tensor_data_type> tensor_data_type_of<double> =
    tensor_data_type::float64;

/// Up to five values, one per dimension, innermost (contiguous) first.
template <class V>
struct tensor_extents {
  std::array<V, 5> values{};
  std::size_t rank = 0;
  constexpr tensor_extents() = default;
  /// {innermost, ..., outermost}.
  constexpr tensor_extents(std::initializer_list<V> list) : rank{list.size()} {
    std::size_t i = 0;
    for (V v : list) {
      if (i < values.size()) values[i] = v;
      ++i;
    }
  }
};

/// What every kind of tensor map is made of, as given to a builder (see tensor_map::tiled).
struct tensor_map_description {
  enum class kind_type { tiled, im2col, im2col_wide };
  kind_type kind = kind_type::tiled;
  CUcontext context = nullptr;  ///< made current for the encode call (if it is not)
  std::optional<tensor_data_type> data_type;
  std::size_t element_size = 0;  ///< sizeof(T)
  CUdeviceptr address = 0;
  std::size_t span_bytes = 0;             ///< the span's size: the tensor must fit in it
  tensor_extents<std::uint64_t> dims;     ///< elements per dimension
  tensor_extents<std::uint64_t> strides;  ///< bytes between indices of dims 1.. (empty: dense)
  tensor_extents<std::uint32_t> box;      ///< tiled: elements per dimension of the box
  tensor_extents<std::uint32_t> steps;    ///< element strides (empty: all 1)
  tensor_interleave interleave = tensor_interleave::none;
  tensor_swizzle swizzle = tensor_swizzle::none;
  tensor_l2_promotion l2_promotion = tensor_l2_promotion::none;
  tensor_oob_fill oob_fill = tensor_oob_fill::zero;
  tensor_extents<int> lower;  ///< im2col: pixelBoxLowerCorner (rank - 2 values)
  tensor_extents<int> upper;  ///< im2col: pixelBoxUpperCorner
  int lower_width = 0;        ///< im2col wide
  int upper_width = 0;
  bool w128 = false;                     ///< im2col wide: CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128
  std::uint32_t channels_per_pixel = 0;  ///< im2col
  std::uint32_t pixels_per_column = 0;   ///< im2col
};

class tensor_map;

namespace detail {
/// Checks `d` against cuda.h's requirements (throws cuwrap::usage_error naming the one
/// violated), then encodes it (one cuTensorMapEncode* call).
tensor_map encode_tensor_map(const tensor_map_description& d, std::source_location where);
}  // namespace detail

/// A builder of a tensor map over a device span; its setters return it, build() makes the map.
template <class T>
class tensor_map_builder {
 public:
  /// A map of `ctx`'s memory `span`, with `dims` elements per dimension, innermost first (the
  /// span must hold the tensor).
  tensor_map_builder(tensor_map_description::kind_type kind, const owning_context& ctx,
                     device_span<T> span, tensor_extents<std::uint64_t> dims) {
    d_.kind = kind;
    d_.context = ctx.get();
    d_.data_type = tensor_data_type_of<std::remove_cv_t<T>>;
    d_.element_size = sizeof(T);
    d_.address = span.address();
    d_.span_bytes = span.size_bytes();
    d_.dims = dims;
  }
  /// Bytes between consecutive indices of dimensions 1.. (rank - 1 values; default: dense).
  tensor_map_builder& strides(tensor_extents<std::uint64_t> bytes) {
    d_.strides = bytes;
    return *this;
  }
  /// Tiled maps: the box's elements per dimension (1..256 each).
  tensor_map_builder& box(tensor_extents<std::uint32_t> elements) {
    d_.box = elements;
    return *this;
  }
  /// The traversal step per dimension (1..8; default 1; the first is ignored).
  tensor_map_builder& element_strides(tensor_extents<std::uint32_t> steps) {
    d_.steps = steps;
    return *this;
  }
  /// The element type, for T without a default (e.g. __half: tensor_data_type::float16).
  tensor_map_builder& data_type(tensor_data_type type) {
    d_.data_type = type;
    return *this;
  }
  /// Shared memory swizzling.
  tensor_map_builder& swizzle(tensor_swizzle mode) {
    d_.swizzle = mode;
    return *this;
  }
  /// An interleaved layout.
  tensor_map_builder& interleave(tensor_interleave mode) {
    d_.interleave = mode;
    return *this;
  }
  /// L2 promotion.
  tensor_map_builder& l2_promotion(tensor_l2_promotion mode) {
    d_.l2_promotion = mode;
    return *this;
  }
  /// What loads read outside the tensor.
  tensor_map_builder& oob_fill(tensor_oob_fill fill) {
    d_.oob_fill = fill;
    return *this;
  }
  /// im2col maps: the pixel box corners (rank - 2 offsets each, W first).
  tensor_map_builder& pixel_box(tensor_extents<int> lower, tensor_extents<int> upper) {
    d_.lower = lower;
    d_.upper = upper;
    return *this;
  }
  /// im2col wide maps: the W corners, and whether the mode is W128.
  tensor_map_builder& pixel_box_width(int lower, int upper, bool w128 = false) {
    d_.lower_width = lower;
    d_.upper_width = upper;
    d_.w128 = w128;
    return *this;
  }
  /// im2col maps: elements along C, and pixels along N, D, H, W.
  tensor_map_builder& pixels(std::uint32_t channels_per_pixel, std::uint32_t pixels_per_column) {
    d_.channels_per_pixel = channels_per_pixel;
    d_.pixels_per_column = pixels_per_column;
    return *this;
  }
  /// Checks every requirement (cuwrap::usage_error naming the one violated, before any driver
  /// call), then encodes the map (one cuTensorMapEncode* call).
  [[nodiscard]] tensor_map build(
      std::source_location where = std::source_location::current()) const;
  /// What the builder holds.
  [[nodiscard]] const tensor_map_description& description() const noexcept { return d_; }

 private:
  tensor_map_description d_;
};

/// A tensor map: the 128-byte CUtensorMap (128-byte aligned, as cuda.h declares it). Trivially
/// copyable: pass it by value to a kernel (a `const __grid_constant__ CUtensorMap` parameter) or
/// copy it to device memory.
class alignas(128) tensor_map {
 public:
  /// A tiled map (cuTensorMapEncodeTiled) over `span`, memory of `ctx` (current for the encode
  /// call only if it is not), with `dims` elements per dimension, innermost first.
  template <class T>
  [[nodiscard]] static tensor_map_builder<T> tiled(const owning_context& ctx, device_span<T> span,
                                                   tensor_extents<std::uint64_t> dims) {
    return {tensor_map_description::kind_type::tiled, ctx, span, dims};
  }
  /// An im2col map (cuTensorMapEncodeIm2col; rank 3..5, dims {C, W, H, D, N}).
  template <class T>
  [[nodiscard]] static tensor_map_builder<T> im2col(const owning_context& ctx, device_span<T> span,
                                                    tensor_extents<std::uint64_t> dims) {
    return {tensor_map_description::kind_type::im2col, ctx, span, dims};
  }
  /// A wide im2col map (cuTensorMapEncodeIm2colWide).
  template <class T>
  [[nodiscard]] static tensor_map_builder<T> im2col_wide(const owning_context& ctx,
                                                         device_span<T> span,
                                                         tensor_extents<std::uint64_t> dims) {
    return {tensor_map_description::kind_type::im2col_wide, ctx, span, dims};
  }
  /// Wraps a map the driver encoded.
  [[nodiscard]] static tensor_map adopt(const CUtensorMap& map) noexcept {
    tensor_map m;
    m.map_ = map;
    return m;
  }

  /// Points the map at `span` (cuTensorMapReplaceAddress; one call). The address must be
  /// 16-byte aligned (usage_error before the call otherwise; the driver also wants 32 for a
  /// 32-byte interleaved map), and the span must hold the tensor, which only the caller knows.
  /// `ctx` is made current for the call only if it is not.
  template <class T>
  void replace_address(const owning_context& ctx, device_span<T> span,
                       std::source_location where = std::source_location::current()) {
    replace_address(ctx, span.address(), where);
  }

  /// The driver's object.
  [[nodiscard]] const CUtensorMap& native() const noexcept { return map_; }
  [[nodiscard]] CUtensorMap& native() noexcept { return map_; }

 private:
  friend tensor_map detail::encode_tensor_map(const tensor_map_description&, std::source_location);
  tensor_map() = default;
  void replace_address(const owning_context& ctx, CUdeviceptr address, std::source_location where);

  CUtensorMap map_{};
};

static_assert(std::is_trivially_copyable_v<tensor_map> && alignof(tensor_map) == 128 &&
              sizeof(tensor_map) == sizeof(CUtensorMap));

template <class T>
tensor_map tensor_map_builder<T>::build(std::source_location where) const {
  return detail::encode_tensor_map(d_, where);
}

}  // namespace cuwrap
