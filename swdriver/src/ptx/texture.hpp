// Texture and surface objects as the interpreter sees them (exec_texture.cpp): what
// exec/interpret.cpp hands a launch for each live CUtexObject and CUsurfObject of the context
// (memory/texture.cpp creates them). The field values are cuda.h's (CUarray_format,
// CUaddress_mode, CUfilter_mode); this layer does not include cuda.h.
#pragma once

#include <cstdint>
#include <vector>

namespace swcu::ptx {

/// CUarray_format values the interpreter reads and writes.
enum TexelFormat : std::uint8_t {
  kFormatU8 = 0x01,
  kFormatU16 = 0x02,
  kFormatU32 = 0x03,
  kFormatS8 = 0x08,
  kFormatS16 = 0x09,
  kFormatS32 = 0x0a,
  kFormatHalf = 0x10,
  kFormatFloat = 0x20,
};

/// The bytes of one channel of `format` (0 for a format the interpreter does not know).
[[nodiscard]] constexpr unsigned channel_size(unsigned format) noexcept {
  switch (format) {
    case kFormatU8:
    case kFormatS8: return 1;
    case kFormatU16:
    case kFormatS16:
    case kFormatHalf: return 2;
    case kFormatU32:
    case kFormatS32:
    case kFormatFloat: return 4;
    default: return 0;
  }
}

/// One mipmap level (or the only level) of a resource: texels at host address `address`,
/// `pitch` bytes between rows and `slice` bytes between 2D slices (layers, depth, cube faces).
struct TexLevel {
  std::uint64_t address = 0;
  std::uint32_t width = 1, height = 1, depth = 1;
  std::uint64_t pitch = 0;
  std::uint64_t slice = 0;
};

/// What a texture or surface object reads (its resource) and how (its sampler state).
struct Texture {
  std::uint64_t handle = 0;  ///< the CUtexObject or CUsurfObject value
  bool surface = false;
  /// The resource (CUresourcetype): 0 array, 1 mipmapped array, 2 linear, 3 pitch2D; arrays'
  /// `layers` (0: not layered) and `cubemap`.
  std::uint8_t resource = 0;
  std::uint8_t dims = 1;  ///< 1, 2 or 3
  bool cubemap = false;
  std::uint32_t layers = 0;  ///< layered arrays: the number of layers (cubemaps: faces x layers)
  std::uint8_t format = kFormatFloat;
  std::uint8_t channels = 1;
  std::vector<TexLevel> levels;  ///< at least one
  // sampler state (textures)
  std::uint8_t address_mode[3] = {};  ///< CUaddress_mode: 0 wrap, 1 clamp, 2 mirror, 3 border
  bool linear_filter = false;
  bool mip_linear = false;
  bool read_as_integer = false;  ///< CU_TRSF_READ_AS_INTEGER: no conversion to [0, 1]
  bool normalized_coords = false;
  bool srgb = false;
  float border[4] = {};
  float mip_bias = 0, min_lod = 0, max_lod = 0;
  /// CUDA_TEXTURE_DESC::maxAnisotropy clamped to [1, 16]: the most probes tex.grad takes.
  std::uint8_t max_anisotropy = 1;
  /// CU_TRSF_SEAMLESS_CUBEMAP: linear filtering at a cube face's edge reads the next face.
  bool seamless_cube = false;

  /// The bytes of one element (every channel).
  [[nodiscard]] unsigned element_size() const noexcept { return channel_size(format) * channels; }
};

}  // namespace swcu::ptx
