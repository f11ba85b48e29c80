// CUDA arrays and mipmapped arrays (cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate).
//
// A CUDA array is device memory in a layout only the driver knows. Here it is host memory
// (anonymous mmap, zero-filled until written) laid out densely, without padding:
//
//   element (x, y, z) lies at  data + ((z * height + y) * width + x) * element_bytes
//
// x fastest, then y (rows), then z: the depth slice of a 3D array, or the layer of a layered or
// cubemap array (a cubemap's layer is its face, CUarray_cubemap_face order; a layered cubemap's
// layer is face + 6 * cube). All extents here are in elements and at least 1: a 1D array
// (Height 0 in its descriptor) has height 1, a 2D array (Depth 0) depth 1.
//
// Block-compressed formats (CU_AD_FORMAT_BC1_UNORM .. BC7_UNORM_SRGB) store 4x4 texel blocks: an
// element is one block (8 bytes for BC1 and BC4, 16 for the others), `width` and `height` count
// blocks (texel extents / 4 rounded up) and the descriptor keeps the texel extents. Copies address
// such arrays in blocks, as the driver's copies do.
//
// A mipmapped array owns one Array per level (kind SWCU_ARRAY, `owner` set, counted as live
// arrays while the mipmapped array lives), each with its own storage: level l has width
// max(1, Width >> l), likewise height and (3D only) depth; the layer count never shrinks.
// cuMipmappedArrayGetLevel hands out these handles; cuArrayDestroy refuses them.
//
// Every array belongs to the context current at its creation and is reclaimed with it. Its
// storage is charged to its device's memory (SWCUDA_DEVICE_MEMORY), rounded up to
// kArrayAlignment per level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/state.hpp"

namespace swcu {

/// Alignment of every array level's storage (and of what it is charged): the device's
/// CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT.
inline constexpr std::size_t kArrayAlignment = 512;

/// What the driver knows about a CUarray_format with a channel count.
struct FormatInfo {
  unsigned element_bytes = 0;  ///< bytes of one element (of one 4x4 block when `block` is 4)
  unsigned block = 1;          ///< texels per element along x and y: 4 for BC formats, else 1
  unsigned channel_bytes = 0;  ///< bytes of one channel; 0 for packed and BC formats
};

/// The layout of `format` (the raw CUarray_format value) with `channels` channels:
/// CUDA_SUCCESS and `out`, CUDA_ERROR_INVALID_VALUE for an unknown format or a channel count the
/// format does not have (1, 2 or 4 for the eight classic formats; the count the format names for
/// the UNORM/SNORM_INTnXk, R10G10B10A2 and BC formats), CUDA_ERROR_NOT_SUPPORTED for the video
/// (YUV: NV12, P010, ...) formats, which are not modelled.
[[nodiscard]] CUresult format_info(int format, unsigned channels, FormatInfo& out) noexcept;

struct MipmappedArray;

/// A CUDA array (SWCU_ARRAY), or one level of a mipmapped array.
struct Array final : Object {
  Array() noexcept : Object(SWCU_ARRAY) {}
  void release() noexcept override;  ///< unmaps the storage

  /// The descriptor cuArray3DGetDescriptor returns: texel extents (0 for absent dimensions),
  /// format, channels, flags (a level: its own extents and the mipmapped array's flags).
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  FormatInfo info;
  std::size_t width = 1, height = 1, depth = 1;  ///< element extents, each at least 1
  unsigned level = 0;                            ///< the mip level (0 for a plain array)
  MipmappedArray* owner = nullptr;               ///< the mipmapped array of a level; else nullptr
  Context* ctx = nullptr;                        ///< the context it belongs to
  int device = 0;
  unsigned char* data = nullptr;  ///< the storage, `bytes` long (nullptr after release)
  /// A level mapped from external memory: the shared mapping `data` lies in (else nullptr, and
  /// `data` is the array's own anonymous mapping).
  void* mapping = nullptr;
  std::size_t mapping_bytes = 0;
  std::size_t bytes = 0;
  unsigned long long charged = 0;  ///< bytes charged to the device (own storage, aligned)

  [[nodiscard]] std::size_t element_bytes() const noexcept { return info.element_bytes; }
  [[nodiscard]] std::size_t row_bytes() const noexcept { return width * info.element_bytes; }
  [[nodiscard]] std::size_t slice_bytes() const noexcept { return row_bytes() * height; }
  [[nodiscard]] bool layered() const noexcept { return (desc.Flags & CUDA_ARRAY3D_LAYERED) != 0; }
  [[nodiscard]] bool cubemap() const noexcept { return (desc.Flags & CUDA_ARRAY3D_CUBEMAP) != 0; }
  [[nodiscard]] bool surface_ldst() const noexcept {
    return (desc.Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
  }
  [[nodiscard]] bool texture_gather() const noexcept {
    return (desc.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) != 0;
  }
  /// Whether element (x, y, z) exists (z: depth slice or layer).
  [[nodiscard]] bool contains(std::size_t x, std::size_t y, std::size_t z) const noexcept {
    return x < width && y < height && z < depth;
  }
  /// The address of element (x, y, z); the caller checks contains().
  [[nodiscard]] unsigned char* element(std::size_t x, std::size_t y, std::size_t z) const noexcept {
    return data + ((z * height + y) * width + x) * info.element_bytes;
  }
  [[nodiscard]] CUarray handle() noexcept { return reinterpret_cast<CUarray>(this); }
};

/// A CUDA mipmapped array (SWCU_MIPMAPPED_ARRAY): its levels are Arrays it owns.
struct MipmappedArray final : Object {
  MipmappedArray() noexcept : Object(SWCU_MIPMAPPED_ARRAY) {}
  void release() noexcept override {}  ///< the levels are destroyed by destroy_mipmapped()

  CUDA_ARRAY3D_DESCRIPTOR desc{};  ///< as created (level 0's extents)
  std::vector<Array*> levels;      ///< level l at [l]; at least one
  Context* ctx = nullptr;
  int device = 0;

  /// Level `l`, or nullptr when there is no such level.
  [[nodiscard]] Array* level(std::size_t l) const noexcept {
    return l < levels.size() ? levels[l] : nullptr;
  }
  [[nodiscard]] CUmipmappedArray handle() noexcept {
    return reinterpret_cast<CUmipmappedArray>(this);
  }
};

/// The live array (plain or a level) with this handle: CUDA_SUCCESS, or
/// CUDA_ERROR_INVALID_HANDLE for NULL, a destroyed, foreign or wrong-kind handle.
[[nodiscard]] CUresult find_array(State& s, CUarray handle, Array*& out) noexcept;

/// The live mipmapped array with this handle: CUDA_SUCCESS, or CUDA_ERROR_INVALID_HANDLE.
[[nodiscard]] CUresult find_mipmapped_array(State& s, CUmipmappedArray handle,
                                            MipmappedArray*& out) noexcept;

/// Checks a descriptor as cuArray3DCreate (levels 1) or cuMipmappedArrayCreate documents:
/// format and channels, flags and their combinations, extents against the device's limits.
/// CUDA_ERROR_INVALID_VALUE for what the driver refuses; CUDA_ERROR_NOT_SUPPORTED for what is
/// valid but not modelled (sparse, deferred-mapping and video arrays, YUV formats).
[[nodiscard]] CUresult check_descriptor(const CUDA_ARRAY3D_DESCRIPTOR& desc, bool mipmapped,
                                        int device) noexcept;

/// cuExternalMemoryGetMappedMipmappedArray: a mipmapped array in ctx whose levels are `fd`'s bytes
/// from `offset` on, level after level, each starting at a multiple of kArrayAlignment, all
/// within `limit` bytes of the file (the imported size). The levels charge nothing to the device
/// (the memory is the external object's). CUDA_ERROR_INVALID_VALUE for a descriptor
/// cuMipmappedArrayCreate refuses, no levels, or levels that do not fit; CUDA_ERROR_NOT_SUPPORTED
/// as cuMipmappedArrayCreate; CUDA_ERROR_OPERATING_SYSTEM when mmap fails.
[[nodiscard]] CUresult map_mipmapped_array(State& s, Context& ctx,
                                           const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned levels,
                                           int fd, std::uint64_t offset, std::uint64_t limit,
                                           CUmipmappedArray* out) noexcept;

/// Destroys the arrays and mipmapped arrays of a destroyed context, counted as reclaimed.
void reclaim_arrays(State& s, Context& ctx) noexcept;

}  // namespace swcu
