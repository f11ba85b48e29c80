// CUDA arrays: owning 1D, 2D, 3D, layered and cubemap arrays and mipmapped arrays of a typed
// format (array<float, 4>), their runtime descriptors, level views and queries. Copies to and
// from them are in cuwrap/copy_3d.hpp.
#pragma once

#include <cuda.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/flags.hpp"

namespace cuwrap {

/// The channel format of an element type, for arrays and textures alike: its CUarray_format
/// and channel count. Defined for the 8-, 16- and 32-bit integers and float, alone or as
/// std::array of 1, 2 or 4 of them.
template <class T>
struct texel_format {
  static_assert(
      sizeof(T) == 0,
      "no CUarray_format for this channel type: use an 8-, 16- or 32-bit integer or float");
};
namespace detail {
/// One channel of format F.
template <CUarray_format F>
struct one_channel {
  static constexpr CUarray_format format = F;  ///< the channel's CUarray_format
  static constexpr unsigned channels = 1;      ///< one channel
};
}  // namespace detail
/// @cond
template <>
struct texel_format<std::uint8_t> : detail::one_channel<CU_AD_FORMAT_UNSIGNED_INT8> {};
template <>
struct texel_format<std::int8_t> : detail::one_channel<CU_AD_FORMAT_SIGNED_INT8> {};
template <>
struct texel_format<std::uint16_t> : detail::one_channel<CU_AD_FORMAT_UNSIGNED_INT16> {};
template <>
struct texel_format<std::int16_t> : detail::one_channel<CU_AD_FORMAT_SIGNED_INT16> {};
template <>
struct texel_format<std::uint32_t> : detail::one_channel<CU_AD_FORMAT_UNSIGNED_INT32> {};
template <>
struct texel_format<std::int32_t> : detail::one_channel<CU_AD_FORMAT_SIGNED_INT32> {};
template <>
struct texel_format<float> : detail::one_channel<CU_AD_FORMAT_FLOAT> {};
/// @endcond
/// Format of N channels of T.
template <class T, std::size_t N>
struct texel_format<std::array<T, N>> {
  static_assert(N == 1 || N == 2 || N == 4, "a texel has 1, 2 or 4 channels");
  static constexpr CUarray_format format = texel_format<T>::format;  ///< T's format
  static constexpr unsigned channels = N;                            ///< N channels
};

/// The host type of one element of an array of `Channels` channels of T: T itself for one
/// channel, std::array<T, Channels> otherwise.
template <class T, unsigned Channels>
using array_element_t = std::conditional_t<Channels == 1, T, std::array<T, Channels>>;

/// How an array is made (CUDA_ARRAY3D_* flags). Combine with |; test with has().
enum class array_flags : unsigned {
  none = 0,
  layered = CUDA_ARRAY3D_LAYERED,                ///< depth counts layers
  surface_ldst = CUDA_ARRAY3D_SURFACE_LDST,      ///< usable as a surface
  cubemap = CUDA_ARRAY3D_CUBEMAP,                ///< six square faces (per cube when layered)
  texture_gather = CUDA_ARRAY3D_TEXTURE_GATHER,  ///< a 2D array for texture gather
};
/// array_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<array_flags> = true;

/// Extents in elements as cuArray3DCreate takes them: height 0 for 1D, depth 0 for 2D; with
/// array_flags::layered, depth is the number of layers.
struct array_extent {
  std::size_t width = 0;   ///< elements per row
  std::size_t height = 0;  ///< rows (0: a 1D array)
  std::size_t depth = 0;   ///< slices or layers (0: no third dimension)
  friend constexpr bool operator==(const array_extent&, const array_extent&) = default;
};

/// An array's description at run time (cuArray3DGetDescriptor).
struct array_descriptor {
  CUarray_format format = CU_AD_FORMAT_FLOAT;  ///< the channel format
  unsigned channels = 1;                       ///< 1, 2 or 4 for the classic formats
  array_extent extent;                         ///< as created
  array_flags flags = array_flags::none;       ///< as created
  /// The driver's form.
  [[nodiscard]] CUDA_ARRAY3D_DESCRIPTOR native() const noexcept {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = extent.width;
    d.Height = extent.height;
    d.Depth = extent.depth;
    d.Format = format;
    d.NumChannels = channels;
    d.Flags = static_cast<unsigned>(flags);
    return d;
  }
  /// From the driver's form.
  [[nodiscard]] static array_descriptor from_native(const CUDA_ARRAY3D_DESCRIPTOR& d) noexcept {
    return {d.Format, d.NumChannels, {d.Width, d.Height, d.Depth}, array_flags{d.Flags}};
  }
  friend bool operator==(const array_descriptor&, const array_descriptor&) = default;
};

/// A non-owning view of any CUDA array (a plain array or a mipmap level).
class array_ref {
 public:
  using native_handle_type = CUarray;  ///< the driver's handle type
  /// Views `handle` (not owned).
  constexpr explicit array_ref(CUarray handle = nullptr) noexcept : handle_{handle} {}
  /// The driver handle; null when empty.
  [[nodiscard]] constexpr CUarray get() const noexcept { return handle_; }
  /// True for a moved-from owner's view.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }
  /// Format, channels, extents and flags (cuArray3DGetDescriptor; one driver call).
  [[nodiscard]] array_descriptor descriptor(
      std::source_location where = std::source_location::current()) const;
  /// What mapping the array on `dev` needs (cuArrayGetMemoryRequirements; one driver call).
  /// The driver answers only for arrays made with CUDA_ARRAY3D_DEFERRED_MAPPING, which cuwrap's
  /// owners do not make: errc::invalid_value otherwise.
  [[nodiscard]] CUDA_ARRAY_MEMORY_REQUIREMENTS memory_requirements(
      CUdevice dev, std::source_location where = std::source_location::current()) const;
  /// The layout of a sparse array (cuArrayGetSparseProperties; one driver call);
  /// errc::invalid_value for an array that is not sparse.
  [[nodiscard]] CUDA_ARRAY_SPARSE_PROPERTIES sparse_properties(
      std::source_location where = std::source_location::current()) const;

 protected:
  CUarray handle_;
};

/// A typed view of an array: its handle and element extents (each at least 1; `depth` counts
/// slices or layers). What copy_3d takes.
template <class T, unsigned Channels = 1>
class array_view : public array_ref {
 public:
  using channel_type = T;                             ///< one channel
  using element_type = array_element_t<T, Channels>;  ///< one element on the host
  static constexpr unsigned channels = Channels;      ///< channels per element
  /// Views `handle`, whose element extents are `width` x `height` x `depth`.
  constexpr array_view(CUarray handle, std::size_t width, std::size_t height,
                       std::size_t depth) noexcept
      : array_ref{handle}, width_{width}, height_{height}, depth_{depth} {}
  /// Elements per row.
  [[nodiscard]] constexpr std::size_t width() const noexcept { return width_; }
  /// Rows (1 for a 1D array).
  [[nodiscard]] constexpr std::size_t height() const noexcept { return height_; }
  /// Slices or layers (1 for a 1D or 2D array).
  [[nodiscard]] constexpr std::size_t depth() const noexcept { return depth_; }
  /// Elements in all.
  [[nodiscard]] constexpr std::size_t size() const noexcept { return width_ * height_ * depth_; }

 private:
  std::size_t width_, height_, depth_;
};

namespace detail {
CUarray create_array(const owning_context& ctx, const array_descriptor& desc, const char* what,
                     std::source_location where);
CUmipmappedArray create_mipmapped_array(const owning_context& ctx, const array_descriptor& desc,
                                        unsigned levels, std::source_location where);
CUarray mipmap_level(CUmipmappedArray handle, unsigned level, unsigned levels,
                     std::source_location where);
/// The levels cuMipmappedArrayCreate makes: `requested` clamped to [1, 1 + floor(log2(max
/// extent))] (layers are no extent).
[[nodiscard]] constexpr unsigned clamp_levels(const array_extent& e, array_flags flags,
                                              unsigned requested) noexcept {
  std::size_t largest = e.width > e.height ? e.width : e.height;
  if (!has(flags, array_flags::layered) && !has(flags, array_flags::cubemap) && e.depth > largest) {
    largest = e.depth;
  }
  const auto most = static_cast<unsigned>(std::bit_width(largest == 0 ? 1 : largest));
  return requested < 1 ? 1 : requested > most ? most : requested;
}
struct array_state {
  std::shared_ptr<const context_owner> ctx;  ///< keeps the context alive
  array_extent extent;                       ///< as created
  array_flags flags = array_flags::none;     ///< as created
  unsigned levels = 0;                       ///< mipmapped arrays: the levels made
};
struct array_traits {
  using ref_type = array_ref;
  using state_type = array_state;
  static constexpr CUarray empty_handle() noexcept { return nullptr; }
  static void destroy(CUarray handle) noexcept {
    check_nothrow(driver().cuArrayDestroy(handle), "cuArrayDestroy");
  }
};
class mipmapped_ref : public handle_view<CUmipmappedArray> {
 public:
  using handle_view::handle_view;
};
struct mipmapped_traits {
  using ref_type = mipmapped_ref;
  using state_type = array_state;
  static constexpr CUmipmappedArray empty_handle() noexcept { return nullptr; }
  static void destroy(CUmipmappedArray handle) noexcept {
    check_nothrow(driver().cuMipmappedArrayDestroy(handle), "cuMipmappedArrayDestroy");
  }
};
/// Element extents of `e` at mip `level` (at least 1 each; layers stay).
[[nodiscard]] constexpr array_extent level_extent(const array_extent& e, array_flags flags,
                                                  unsigned level) noexcept {
  const auto shrink = [level](std::size_t n) -> std::size_t {
    return n == 0 ? 1 : (n >> level) == 0 ? 1 : n >> level;
  };
  const bool layers = has(flags, array_flags::layered) || has(flags, array_flags::cubemap);
  return {shrink(e.width), shrink(e.height),
          layers ? (e.depth == 0 ? 1 : e.depth) : shrink(e.depth)};
}
}  // namespace detail

/// An owning CUDA array of elements of `Channels` channels of T (cuArray3DCreate, destroyed with
/// cuArrayDestroy). Move-only; keeps its context alive; a moved-from array throws
/// cuwrap::usage_error. Its view (view()) is what copy_3d copies to and from.
template <class T, unsigned Channels = 1>
class array : public detail::unique_handle<detail::array_traits> {
  static_assert(Channels == 1 || Channels == 2 || Channels == 4, "arrays have 1, 2 or 4 channels");

 public:
  using element_type = array_element_t<T, Channels>;  ///< one element on the host

  /// A 1D (height and depth 0), 2D (depth 0) or 3D array in `ctx`; with array_flags::layered
  /// depth counts layers. The driver checks the extents against the device's limits
  /// (errc::invalid_value).
  array(const owning_context& ctx, array_extent extent, array_flags flags = array_flags::none,
        std::source_location where = std::source_location::current())
      : unique_handle{array_ref{detail::create_array(
                          ctx, {texel_format<T>::format, Channels, extent, flags}, "array", where)},
                      {ctx.lifetime(), extent, flags, 1}} {}
  /// `layers` layers of width x height (height 0: 1D layers).
  [[nodiscard]] static array layered(const owning_context& ctx, std::size_t width,
                                     std::size_t height, std::size_t layers,
                                     array_flags flags = array_flags::none,
                                     std::source_location where = std::source_location::current()) {
    return array{ctx, {width, height, layers}, flags | array_flags::layered, where};
  }
  /// A cubemap: six `size` x `size` faces in CUarray_cubemap_face order.
  [[nodiscard]] static array cubemap(const owning_context& ctx, std::size_t size,
                                     array_flags flags = array_flags::none,
                                     std::source_location where = std::source_location::current()) {
    return array{ctx, {size, size, 6}, flags | array_flags::cubemap, where};
  }
  /// `cubes` cubemaps (6 * cubes layers).
  [[nodiscard]] static array cubemap_layered(
      const owning_context& ctx, std::size_t size, std::size_t cubes,
      array_flags flags = array_flags::none,
      std::source_location where = std::source_location::current()) {
    return array{
        ctx, {size, size, 6 * cubes}, flags | array_flags::cubemap | array_flags::layered, where};
  }
  /// The extents as created (no driver call).
  [[nodiscard]] array_extent extent() const noexcept { return state().extent; }
  /// The flags as created (no driver call).
  [[nodiscard]] array_flags flags() const noexcept { return state().flags; }
  /// The context the array was made in (no driver call; the driver has no query for it); null
  /// when moved from.
  [[nodiscard]] CUcontext context() const noexcept {
    return state().ctx ? state().ctx->handle : nullptr;
  }
  /// The typed view (element extents at least 1). Throws cuwrap::usage_error if moved from.
  [[nodiscard]] array_view<T, Channels> view(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "array", "view", where);
    const auto e = detail::level_extent(state().extent, state().flags, 0);
    return {get(), e.width, e.height, e.depth};
  }
  /// The same view, for copy_3d (a moved-from array gives an empty view, which copy_3d refuses).
  operator array_view<T, Channels>() const noexcept {
    const auto e = detail::level_extent(state().extent, state().flags, 0);
    return {get(), e.width, e.height, e.depth};
  }
};

/// An owning mipmapped array (cuMipmappedArrayCreate, destroyed with cuMipmappedArrayDestroy).
/// Its levels are arrays it owns: level(l) views one. Move-only; a moved-from one throws
/// cuwrap::usage_error.
template <class T, unsigned Channels = 1>
class mipmapped_array : public detail::unique_handle<detail::mipmapped_traits> {
  static_assert(Channels == 1 || Channels == 2 || Channels == 4, "arrays have 1, 2 or 4 channels");

 public:
  using element_type = array_element_t<T, Channels>;  ///< one element on the host

  /// `levels` levels (clamped as the driver does to [1, 1 + floor(log2(largest extent))]) of
  /// an array of `extent` and `flags` in `ctx`.
  mipmapped_array(const owning_context& ctx, array_extent extent, unsigned levels,
                  array_flags flags = array_flags::none,
                  std::source_location where = std::source_location::current())
      : unique_handle{
            detail::mipmapped_ref{detail::create_mipmapped_array(
                ctx, {texel_format<T>::format, Channels, extent, flags}, levels, where)},
            {ctx.lifetime(), extent, flags, detail::clamp_levels(extent, flags, levels)}} {}
  /// Takes ownership of `handle`, a mipmapped array of `levels` levels of `extent` and `flags`
  /// in `ctx` made elsewhere (cuExternalMemoryGetMappedMipmappedArray): destroyed with
  /// cuMipmappedArrayDestroy, as cuda.h requires of a mapped one. The extents and level count
  /// must be what the handle holds (level() relies on them).
  [[nodiscard]] static mipmapped_array adopt(const owning_context& ctx, CUmipmappedArray handle,
                                             array_extent extent, unsigned levels,
                                             array_flags flags = array_flags::none) noexcept {
    return mipmapped_array{handle, {ctx.lifetime(), extent, flags, levels}};
  }
  /// The number of levels (no driver call).
  [[nodiscard]] unsigned levels() const noexcept { return state().levels; }
  /// Level 0's extents as created (no driver call).
  [[nodiscard]] array_extent extent() const noexcept { return state().extent; }
  /// A view of level `l` (cuMipmappedArrayGetLevel; one driver call): errc::invalid_value
  /// naming the level count for a level past the last, before the driver call.
  [[nodiscard]] array_view<T, Channels> level(
      unsigned l, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "mipmapped_array", "level", where);
    const CUarray handle = detail::mipmap_level(get(), l, state().levels, where);
    const auto e = detail::level_extent(state().extent, state().flags, l);
    return {handle, e.width, e.height, e.depth};
  }
  /// As array_ref::memory_requirements (cuMipmappedArrayGetMemoryRequirements).
  [[nodiscard]] CUDA_ARRAY_MEMORY_REQUIREMENTS memory_requirements(
      CUdevice dev, std::source_location where = std::source_location::current()) const;
  /// As array_ref::sparse_properties (cuMipmappedArrayGetSparseProperties).
  [[nodiscard]] CUDA_ARRAY_SPARSE_PROPERTIES sparse_properties(
      std::source_location where = std::source_location::current()) const;

 private:
  mipmapped_array(CUmipmappedArray handle, detail::array_state state) noexcept
      : unique_handle{detail::mipmapped_ref{handle}, std::move(state)} {}
};

namespace detail {
CUDA_ARRAY_MEMORY_REQUIREMENTS mipmapped_requirements(CUmipmappedArray handle, CUdevice dev,
                                                      std::source_location where);
CUDA_ARRAY_SPARSE_PROPERTIES mipmapped_sparse(CUmipmappedArray handle, std::source_location where);
}  // namespace detail

template <class T, unsigned Channels>
CUDA_ARRAY_MEMORY_REQUIREMENTS mipmapped_array<T, Channels>::memory_requirements(
    CUdevice dev, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "mipmapped_array", "memory_requirements", where);
  return detail::mipmapped_requirements(get(), dev, where);
}

template <class T, unsigned Channels>
CUDA_ARRAY_SPARSE_PROPERTIES mipmapped_array<T, Channels>::sparse_properties(
    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "mipmapped_array", "sparse_properties", where);
  return detail::mipmapped_sparse(get(), where);
}

}  // namespace cuwrap
