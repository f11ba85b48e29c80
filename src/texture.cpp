#include "cuwrap/texture.hpp"

#include <cstring>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/surface.hpp"

namespace cuwrap {
namespace detail {
namespace {

CUDA_TEXTURE_DESC native(const texture_options& o) {
  CUDA_TEXTURE_DESC t{};
  for (std::size_t i = 0; i < 3; ++i) t.addressMode[i] = static_cast<CUaddress_mode>(o.address[i]);
  t.filterMode = static_cast<CUfilter_mode>(o.filter);
  t.mipmapFilterMode = static_cast<CUfilter_mode>(o.mipmap_filter);
  if (o.read == read_mode::element_type) t.flags |= CU_TRSF_READ_AS_INTEGER;
  if (o.normalized_coordinates) t.flags |= CU_TRSF_NORMALIZED_COORDINATES;
  if (o.srgb) t.flags |= CU_TRSF_SRGB;
  if (o.disable_trilinear_optimization) t.flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
  if (o.seamless_cubemap) t.flags |= CU_TRSF_SEAMLESS_CUBEMAP;
  t.maxAnisotropy = o.max_anisotropy;
  t.mipmapLevelBias = o.mipmap_level_bias;
  t.minMipmapLevelClamp = o.min_mipmap_level;
  t.maxMipmapLevelClamp = o.max_mipmap_level;
  std::memcpy(t.borderColor, o.border_color.data(), sizeof t.borderColor);
  return t;
}

}  // namespace

// Runs `destroy` with `ctx` current (the driver needs a context to destroy these objects).
template <class F>
void in_context(const std::shared_ptr<const context_owner>& ctx, F&& destroy) noexcept {
  try {
    const scoped_current_context current{context_ref{ctx->handle}, {}};
    destroy();
  } catch (...) {  // a destructor must not throw; the driver call reports through check_nothrow
  }
}

CUtexObject create_texture(const owning_context& ctx, const CUDA_RESOURCE_DESC& res,
                           const texture_options& options, std::source_location where) {
  (void)ctx.lifetime_for("texture_object", "texture_object", where);
  const scoped_current_context current{ctx, where};
  const CUDA_TEXTURE_DESC tex = native(options);
  CUtexObject t = 0;
  check(driver().cuTexObjectCreate(&t, &res, &tex, nullptr), "cuTexObjectCreate", where);
  return t;
}

void destroy_texture(const std::shared_ptr<const context_owner>& ctx, CUtexObject t) noexcept {
  in_context(ctx, [t] { check_nothrow(driver().cuTexObjectDestroy(t), "cuTexObjectDestroy"); });
}

CUDA_RESOURCE_DESC linear_resource(CUdeviceptr p, CUarray_format f, unsigned channels,
                                   std::size_t bytes) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_LINEAR;
  r.res.linear.devPtr = p;
  r.res.linear.format = f;
  r.res.linear.numChannels = channels;
  r.res.linear.sizeInBytes = bytes;
  return r;
}

CUDA_RESOURCE_DESC pitch2d_resource(CUdeviceptr p, CUarray_format f, unsigned channels,
                                    std::size_t width, std::size_t height, std::size_t pitch) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_PITCH2D;
  r.res.pitch2D.devPtr = p;
  r.res.pitch2D.format = f;
  r.res.pitch2D.numChannels = channels;
  r.res.pitch2D.width = width;
  r.res.pitch2D.height = height;
  r.res.pitch2D.pitchInBytes = pitch;
  return r;
}

}  // namespace detail

namespace {

CUDA_RESOURCE_DESC array_resource(CUarray a) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_ARRAY;
  r.res.array.hArray = a;
  return r;
}

CUDA_RESOURCE_DESC mipmapped_resource(CUmipmappedArray a) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  r.res.mipmap.hMipmappedArray = a;
  return r;
}

}  // namespace

texture_object::texture_object(const owning_context& ctx, const CUDA_RESOURCE_DESC& resource,
                               const texture_options& options, std::source_location where)
    : handle_{detail::create_texture(ctx, resource, options, where)}, ctx_{ctx.lifetime()} {}

texture_object::texture_object(const owning_context& ctx, array_ref array,
                               const texture_options& options, std::source_location where)
    : texture_object{ctx, array_resource(array.get()), options, where} {}

texture_object::texture_object(const owning_context& ctx, mipmapped_array_view array,
                               const texture_options& options, std::source_location where)
    : texture_object{ctx, mipmapped_resource(array.handle), options, where} {}

texture_object::texture_object(texture_object&& other) noexcept
    : handle_{std::exchange(other.handle_, 0)}, ctx_{std::move(other.ctx_)} {}

texture_object& texture_object::operator=(texture_object&& other) noexcept {
  if (this != &other) {
    texture_object old{std::move(*this)};
    handle_ = std::exchange(other.handle_, 0);
    ctx_ = std::move(other.ctx_);
  }
  return *this;
}

texture_object::~texture_object() {
  if (handle_ != 0) detail::destroy_texture(ctx_, handle_);
}

CUtexObject texture_object::handle(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "texture_object", "handle", where);
  return handle_;
}

CUDA_RESOURCE_DESC texture_object::resource_desc(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "texture_object", "resource_desc", where);
  CUDA_RESOURCE_DESC r{};
  const scoped_current_context current{context_ref{ctx_->handle}, where};
  check(detail::driver().cuTexObjectGetResourceDesc(&r, handle_), "cuTexObjectGetResourceDesc",
        where);
  return r;
}

CUDA_TEXTURE_DESC texture_object::texture_desc(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "texture_object", "texture_desc", where);
  CUDA_TEXTURE_DESC t{};
  const scoped_current_context current{context_ref{ctx_->handle}, where};
  check(detail::driver().cuTexObjectGetTextureDesc(&t, handle_), "cuTexObjectGetTextureDesc",
        where);
  return t;
}

surface_object::surface_object(const owning_context& ctx, array_ref array,
                               std::source_location where)
    : ctx_{ctx.lifetime()} {
  (void)ctx.lifetime_for("surface_object", "surface_object", where);
  const scoped_current_context current{ctx, where};
  const CUDA_RESOURCE_DESC r = array_resource(array.get());
  check(detail::driver().cuSurfObjectCreate(&handle_, &r), "cuSurfObjectCreate", where);
}

surface_object::surface_object(surface_object&& other) noexcept
    : handle_{std::exchange(other.handle_, 0)}, ctx_{std::move(other.ctx_)} {}

surface_object& surface_object::operator=(surface_object&& other) noexcept {
  if (this != &other) {
    surface_object old{std::move(*this)};
    handle_ = std::exchange(other.handle_, 0);
    ctx_ = std::move(other.ctx_);
  }
  return *this;
}

surface_object::~surface_object() {
  if (handle_ != 0) {
    const CUsurfObject s = handle_;
    detail::in_context(ctx_, [s] {
      check_nothrow(detail::driver().cuSurfObjectDestroy(s), "cuSurfObjectDestroy");
    });
  }
}

CUsurfObject surface_object::handle(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "surface_object", "handle", where);
  return handle_;
}

CUDA_RESOURCE_DESC surface_object::resource_desc(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "surface_object", "resource_desc", where);
  CUDA_RESOURCE_DESC r{};
  const scoped_current_context current{context_ref{ctx_->handle}, where};
  check(detail::driver().cuSurfObjectGetResourceDesc(&r, handle_), "cuSurfObjectGetResourceDesc",
        where);
  return r;
}

}  // namespace cuwrap
