// Texture objects (cuTexObjectCreate): a read-only, filtered view of linear memory (a
// device_span), pitched 2D memory (a pitched_span or pitched_buffer) or a CUDA array, with typed
// sampler options. A kernel takes the object's handle() as a cudaTextureObject_t.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <source_location>

#include "cuwrap/array.hpp"
#include "cuwrap/context.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/pitched_buffer.hpp"

namespace cuwrap {

/// How coordinates outside the texture are resolved (CUaddress_mode). wrap and mirror need
/// normalized coordinates; without them every mode but border acts as clamp.
enum class address_mode : int {
  wrap = CU_TR_ADDRESS_MODE_WRAP,      ///< the coordinate's fraction (repeat)
  clamp = CU_TR_ADDRESS_MODE_CLAMP,    ///< the nearest edge texel
  mirror = CU_TR_ADDRESS_MODE_MIRROR,  ///< repeat, reflected on every other period
  border = CU_TR_ADDRESS_MODE_BORDER,  ///< the border color
};

/// How texels are combined (CUfilter_mode).
enum class filter_mode : int {
  point = CU_TR_FILTER_MODE_POINT,    ///< the texel the coordinate falls in
  linear = CU_TR_FILTER_MODE_LINEAR,  ///< the neighbours weighed (floating-point results only)
};

/// What a fetch returns for integer formats.
enum class read_mode {
  element_type,      ///< the integers themselves (CU_TRSF_READ_AS_INTEGER)
  normalized_float,  ///< 8- and 16-bit integers as floats in [0, 1] or [-1, 1]
};

/// How a texture object samples (CUDA_TEXTURE_DESC). The defaults: clamp, point, element type,
/// unnormalized coordinates.
struct texture_options {
  std::array<address_mode, 3> address{address_mode::clamp, address_mode::clamp,
                                      address_mode::clamp};  ///< per dimension
  filter_mode filter = filter_mode::point;                   ///< within a level
  read_mode read = read_mode::element_type;                  ///< integer formats' results
  bool normalized_coordinates = false;  ///< [0, 1) spans each dimension instead of [0, N)
  bool srgb = false;                    ///< 8-bit unsigned RGB channels are sRGB: read linear
  filter_mode mipmap_filter = filter_mode::point;  ///< between mipmap levels
  float mipmap_level_bias = 0;                     ///< added to the computed level
  float min_mipmap_level = 0;                      ///< lowest level used
  float max_mipmap_level = 0;                      ///< highest level used
  unsigned max_anisotropy = 0;                     ///< clamped by the driver to [1, 16]
  std::array<float, 4> border_color{};             ///< what address_mode::border reads
  bool disable_trilinear_optimization = false;     ///< CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION
  bool seamless_cubemap = false;                   ///< CU_TRSF_SEAMLESS_CUBEMAP (cubemaps only)

  /// Sets every dimension's address mode.
  texture_options& with_address(address_mode m) noexcept {
    address = {m, m, m};
    return *this;
  }
};

/// A mipmapped CUDA array a texture object reads (not owned: it must outlive the object).
struct mipmapped_array_view {
  /// Views `h` (a raw handle, e.g. from cuExternalMemoryGetMappedMipmappedArray).
  constexpr mipmapped_array_view(CUmipmappedArray h = nullptr) noexcept : handle{h} {}
  /// Views an owning mipmapped array.
  template <class T, unsigned Channels>
  mipmapped_array_view(const mipmapped_array<T, Channels>& m) noexcept  // NOLINT: converting
      : handle{m.get()} {}
  CUmipmappedArray handle;  ///< the mipmapped array
};

namespace detail {
CUtexObject create_texture(const owning_context& ctx, const CUDA_RESOURCE_DESC& res,
                           const texture_options& options, std::source_location where);
void destroy_texture(const std::shared_ptr<const context_owner>& ctx, CUtexObject t) noexcept;
CUDA_RESOURCE_DESC linear_resource(CUdeviceptr p, CUarray_format f, unsigned channels,
                                   std::size_t bytes);
CUDA_RESOURCE_DESC pitch2d_resource(CUdeviceptr p, CUarray_format f, unsigned channels,
                                    std::size_t width, std::size_t height, std::size_t pitch);
}  // namespace detail

/// An owning texture object (cuTexObjectCreate, destroyed with cuTexObjectDestroy). Move-only;
/// keeps its context alive; does not own the memory it reads, which must outlive it. A
/// moved-from object is empty: handle() and the getters throw cuwrap::usage_error, its
/// destructor does nothing.
class texture_object {
 public:
  /// Over linear memory (CU_RESOURCE_TYPE_LINEAR: tex1Dfetch; address and filter modes are
  /// ignored), in `ctx`.
  template <class T>
  texture_object(const owning_context& ctx, device_span<const T> data,
                 const texture_options& options = {},
                 std::source_location where = std::source_location::current())
      : texture_object{ctx,
                       detail::linear_resource(reinterpret_cast<CUdeviceptr>(data.data()),
                                               texel_format<T>::format, texel_format<T>::channels,
                                               data.size() * sizeof(T)),
                       options, where} {}
  /// Over pitched 2D memory (CU_RESOURCE_TYPE_PITCH2D), e.g. a pitched_buffer.
  template <class T>
  texture_object(const owning_context& ctx, pitched_span<const T> data,
                 const texture_options& options = {},
                 std::source_location where = std::source_location::current())
      : texture_object{ctx,
                       detail::pitch2d_resource(reinterpret_cast<CUdeviceptr>(data.data),
                                                texel_format<T>::format, texel_format<T>::channels,
                                                data.width, data.height, data.pitch_bytes),
                       options, where} {}
  /// Over a pitched_buffer's memory.
  template <class T>
  texture_object(const owning_context& ctx, const pitched_buffer<T>& data,
                 const texture_options& options = {},
                 std::source_location where = std::source_location::current())
      : texture_object{ctx, static_cast<pitched_span<const T>>(data.view(where)), options, where} {}
  /// Over a CUDA array (CU_RESOURCE_TYPE_ARRAY).
  texture_object(const owning_context& ctx, array_ref array, const texture_options& options = {},
                 std::source_location where = std::source_location::current());
  /// Over a mipmapped CUDA array (CU_RESOURCE_TYPE_MIPMAPPED_ARRAY).
  texture_object(const owning_context& ctx, mipmapped_array_view array,
                 const texture_options& options = {},
                 std::source_location where = std::source_location::current());
  /// From descriptors as cuda.h defines them.
  texture_object(const owning_context& ctx, const CUDA_RESOURCE_DESC& resource,
                 const texture_options& options,
                 std::source_location where = std::source_location::current());

  texture_object(const texture_object&) = delete;
  texture_object& operator=(const texture_object&) = delete;
  /// Takes `other`'s object; `other` is left empty.
  texture_object(texture_object&& other) noexcept;
  /// Destroys the object owned now (if any), then takes `other`'s.
  texture_object& operator=(texture_object&& other) noexcept;
  /// Destroys the object (cuTexObjectDestroy, in its context).
  ~texture_object();

  /// The handle a kernel takes (cudaTextureObject_t). Throws cuwrap::usage_error if moved from.
  [[nodiscard]] CUtexObject handle(
      std::source_location where = std::source_location::current()) const;
  /// The resource descriptor (cuTexObjectGetResourceDesc, in the object's context).
  [[nodiscard]] CUDA_RESOURCE_DESC resource_desc(
      std::source_location where = std::source_location::current()) const;
  /// The texture descriptor (cuTexObjectGetTextureDesc, in the object's context).
  [[nodiscard]] CUDA_TEXTURE_DESC texture_desc(
      std::source_location where = std::source_location::current()) const;
  /// True after a move: the object owns nothing.
  [[nodiscard]] bool empty() const noexcept { return handle_ == 0; }

 private:
  CUtexObject handle_ = 0;
  std::shared_ptr<const detail::context_owner> ctx_;
};

}  // namespace cuwrap
