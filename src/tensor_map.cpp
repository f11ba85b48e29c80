// Tensor maps: every requirement cuda.h lists for cuTensorMapEncodeTiled / Im2col / Im2colWide,
// checked before the one driver call, and the span checked to hold the tensor.
#include "cuwrap/tensor_map.hpp"

#include <string>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {
namespace {

using kind_type = tensor_map_description::kind_type;

const char* builder_name(kind_type k) {
  switch (k) {
    case kind_type::tiled: return "cuwrap::tensor_map::tiled";
    case kind_type::im2col: return "cuwrap::tensor_map::im2col";
    default: return "cuwrap::tensor_map::im2col_wide";
  }
}

std::size_t size_of(tensor_data_type t) {
  switch (t) {
    case tensor_data_type::uint8: return 1;
    case tensor_data_type::uint16:
    case tensor_data_type::float16:
    case tensor_data_type::bfloat16: return 2;
    case tensor_data_type::uint64:
    case tensor_data_type::int64:
    case tensor_data_type::float64: return 8;
    default: return 4;
  }
}

bool is_float(tensor_data_type t) {
  return t == tensor_data_type::float16 || t == tensor_data_type::float32 ||
         t == tensor_data_type::float64 || t == tensor_data_type::bfloat16 ||
         t == tensor_data_type::float32_ftz || t == tensor_data_type::tfloat32 ||
         t == tensor_data_type::tfloat32_ftz;
}

std::string at(const char* what, std::size_t i) {
  return std::string(what) + "[" + std::to_string(i) + "]";
}

// The requirement `d` violates, or "" (cuda.h, cuTensorMapEncodeTiled/Im2col/Im2colWide).
std::string violation(const tensor_map_description& d, std::uint64_t (&strides)[4],
                      std::uint32_t (&steps)[5]) {
  if (!d.data_type) {
    return "the element type has no tensor data type: name one with .data_type()";
  }
  const std::size_t es = size_of(*d.data_type);
  if (es != d.element_size) {
    return "the data type's elements are " + std::to_string(es) + " bytes, the span's " +
           std::to_string(d.element_size);
  }
  const std::size_t rank = d.dims.rank;
  const std::size_t min_rank = d.kind == kind_type::tiled ? 1 : 3;
  if (rank < min_rank || rank > 5) {
    return "the tensor has " + std::to_string(rank) + " dimensions; it must have " +
           std::to_string(min_rank) + " to 5";
  }
  const bool il32 = d.interleave == tensor_interleave::bytes32;
  if (d.interleave != tensor_interleave::none && rank < 3) {
    return "an interleaved layout needs 3 or more dimensions";
  }
  const std::uint64_t align = il32 ? 32 : 16;
  if (d.address % align != 0) {
    return "the span's address is not " + std::to_string(align) + "-byte aligned";
  }
  for (std::size_t i = 0; i < rank; ++i) {
    if (d.dims.values[i] == 0 || d.dims.values[i] > (1ull << 32)) {
      return at("dims", i) + " is " + std::to_string(d.dims.values[i]) + "; it must be 1..2^32";
    }
  }
  if (d.strides.rank != 0 && d.strides.rank != rank - 1) {
    return "strides has " + std::to_string(d.strides.rank) + " values; a tensor of " +
           std::to_string(rank) + " dimensions has " + std::to_string(rank - 1);
  }
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    const std::uint64_t below = i == 0 ? d.dims.values[0] * es : strides[i - 1] * d.dims.values[i];
    strides[i] = d.strides.rank != 0 ? d.strides.values[i] : below;
    if (strides[i] % align != 0 || strides[i] >= (1ull << 40)) {
      return at("strides", i) + " is " + std::to_string(strides[i]) + " bytes; it must be a " +
             "multiple of " + std::to_string(align) + " below 2^40";
    }
    if (strides[i] < below) {
      return at("strides", i) + " is " + std::to_string(strides[i]) + " bytes, less than the " +
             std::to_string(below) + " bytes of the dimension below it";
    }
  }
  std::uint64_t last = (d.dims.values[0] - 1) * es + es;  // one past the tensor's last byte
  for (std::size_t i = 1; i < rank; ++i) last += (d.dims.values[i] - 1) * strides[i - 1];
  if (last > d.span_bytes) {
    return "the tensor spans " + std::to_string(last) + " bytes; the span has " +
           std::to_string(d.span_bytes);
  }
  if (d.steps.rank != 0 && d.steps.rank != rank) {
    return "element_strides has " + std::to_string(d.steps.rank) + " values, not " +
           std::to_string(rank);
  }
  for (std::size_t i = 0; i < rank; ++i) {
    steps[i] = d.steps.rank != 0 ? d.steps.values[i] : 1;
    if (steps[i] == 0 || steps[i] > 8) {
      return at("element_strides", i) + " is " + std::to_string(steps[i]) + "; it must be 1..8";
    }
  }
  std::uint64_t inner = 0;  // the box's inner dimension, in bytes
  if (d.kind == kind_type::tiled) {
    if (d.box.rank != rank) {
      return "box has " + std::to_string(d.box.rank) + " values, not " + std::to_string(rank);
    }
    for (std::size_t i = 0; i < rank; ++i) {
      if (d.box.values[i] == 0 || d.box.values[i] > 256) {
        return at("box", i) + " is " + std::to_string(d.box.values[i]) + "; it must be 1..256";
      }
    }
    inner = d.box.values[0] * es;
    if (d.interleave == tensor_interleave::none && inner % 16 != 0) {
      return "box[0] is " + std::to_string(inner) +
             " bytes; without interleave it must be a multiple of 16";
    }
  } else {
    if (d.kind == kind_type::im2col) {
      const int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
      if (d.lower.rank != rank - 2 || d.upper.rank != rank - 2) {
        return "pixel_box needs " + std::to_string(rank - 2) + " offsets per corner";
      }
      for (std::size_t i = 0; i + 2 < rank; ++i) {
        for (const int v : {d.lower.values[i], d.upper.values[i]}) {
          if (v < -limit || v >= limit) {
            return "a pixel box corner offset is " + std::to_string(v) + "; with " +
                   std::to_string(rank) + " dimensions it must be " + std::to_string(-limit) +
                   ".." + std::to_string(limit - 1);
          }
        }
      }
      // the box spans lower .. dims[i + 1] - 1 + upper; cuda.h: it "must have non-zero area"
      for (std::size_t i = 0; i + 2 < rank; ++i) {
        if (static_cast<long long>(d.dims.values[i + 1]) + d.upper.values[i] - d.lower.values[i] <
            1) {
          return "the pixel box is empty in dimension " + std::to_string(i + 1) +
                 "; it must have non-zero area";
        }
      }
    } else {
      for (const int v : {d.lower_width, d.upper_width}) {
        if (v < -32768 || v > 32767) {
          return "a pixel box corner width is " + std::to_string(v) + "; it must be -32768..32767";
        }
      }
      if (static_cast<long long>(d.dims.values[1]) + d.upper_width - d.lower_width < 1) {
        return "the pixel box is empty along W; it must have non-zero area";
      }
    }
    if (d.channels_per_pixel == 0 || d.channels_per_pixel > 256) {
      return "channels_per_pixel is " + std::to_string(d.channels_per_pixel) +
             "; it must be 1..256";
    }
    if (!(d.kind == kind_type::im2col_wide && d.w128) &&
        (d.pixels_per_column == 0 || d.pixels_per_column > 1024)) {
      return "pixels_per_column is " + std::to_string(d.pixels_per_column) + "; it must be 1..1024";
    }
    inner = d.channels_per_pixel * es;
  }
  if (d.interleave == tensor_interleave::none && d.swizzle != tensor_swizzle::none) {
    const std::uint64_t span = d.swizzle == tensor_swizzle::bytes32   ? 32
                               : d.swizzle == tensor_swizzle::bytes64 ? 64
                                                                      : 128;
    if (inner > span) {
      return "the box's inner dimension is " + std::to_string(inner) + " bytes, more than the " +
             std::to_string(span) + "-byte swizzle span";
    }
  }
  if (il32 && d.swizzle != tensor_swizzle::bytes32) {
    return "a 32-byte interleave needs the 32-byte swizzle";
  }
  if (d.oob_fill == tensor_oob_fill::nan_request_zero_fma && !is_float(*d.data_type)) {
    return "the NaN fill needs a floating-point data type";
  }
  return {};
}

}  // namespace

namespace detail {

tensor_map encode_tensor_map(const tensor_map_description& d, std::source_location where) {
  std::uint64_t strides[4] = {};
  std::uint32_t steps[5] = {};
  if (const std::string why = violation(d, strides, steps); !why.empty()) {
    throw usage_error{std::string(builder_name(d.kind)) + ": " + why, where};
  }
  const scoped_current_context current{context_ref{d.context}, where};
  // Encoded into a local: the driver wants the object 64-byte aligned, and GCC does not always
  // give a returned over-aligned object's slot its alignment.
  alignas(128) CUtensorMap map{};
  const auto type = static_cast<CUtensorMapDataType>(*d.data_type);
  const auto rank = static_cast<cuuint32_t>(d.dims.rank);
  void* address = reinterpret_cast<void*>(d.address);  // NOLINT: the driver's address type
  const auto interleave = static_cast<CUtensorMapInterleave>(d.interleave);
  const auto swizzle = static_cast<CUtensorMapSwizzle>(d.swizzle);
  const auto l2 = static_cast<CUtensorMapL2promotion>(d.l2_promotion);
  const auto fill = static_cast<CUtensorMapFloatOOBfill>(d.oob_fill);
  const driver_table& drv = driver();
  switch (d.kind) {
    case kind_type::tiled:
      check(drv.cuTensorMapEncodeTiled(&map, type, rank, address, d.dims.values.data(), strides,
                                       d.box.values.data(), steps, interleave, swizzle, l2, fill),
            "cuTensorMapEncodeTiled", where);
      break;
    case kind_type::im2col:
      check(drv.cuTensorMapEncodeIm2col(&map, type, rank, address, d.dims.values.data(), strides,
                                        d.lower.values.data(), d.upper.values.data(),
                                        d.channels_per_pixel, d.pixels_per_column, steps,
                                        interleave, swizzle, l2, fill),
            "cuTensorMapEncodeIm2col", where);
      break;
    case kind_type::im2col_wide:
      check(drv.cuTensorMapEncodeIm2colWide(
                &map, type, rank, address, d.dims.values.data(), strides, d.lower_width,
                d.upper_width, d.channels_per_pixel, d.pixels_per_column, steps, interleave,
                d.w128 ? CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128 : CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
                swizzle, l2, fill),
            "cuTensorMapEncodeIm2colWide", where);
      break;
  }
  tensor_map m;
  m.map_ = map;
  return m;
}

}  // namespace detail

void tensor_map::replace_address(const owning_context& ctx, CUdeviceptr address,
                                 std::source_location where) {
  if (address % 16 != 0) {
    throw usage_error{
        "cuwrap::tensor_map::replace_address: the span's address is not 16-byte "
        "aligned",
        where};
  }
  const scoped_current_context current{ctx, where};
  alignas(128) CUtensorMap map = map_;  // aligned for the driver, wherever *this lives
  check(detail::driver().cuTensorMapReplaceAddress(
            &map, reinterpret_cast<void*>(address)),  // NOLINT: the driver's address type
        "cuTensorMapReplaceAddress", where);
  map_ = map;
}

}  // namespace cuwrap
