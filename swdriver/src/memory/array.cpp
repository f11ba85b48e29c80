// CUDA arrays and mipmapped arrays: creation with cuda.h's validation, descriptors, levels and
// destruction (array.hpp explains the storage).
#include "memory/array.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <memory>

#include "context/device.hpp"
#include "core/api.hpp"
#include "core/config.hpp"
#include "memory/memory.hpp"

namespace swcu {

CUresult format_info(int format, unsigned channels, FormatInfo& out) noexcept {
  // The channel count a format names itself (0: any of 1, 2, 4) and its bytes per element.
  unsigned fixed = 0, bytes = 0, channel = 0, block = 1;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: channel = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: channel = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: channel = 4; break;
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1: fixed = 1, channel = 1; break;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2: fixed = 2, channel = 1; break;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4: fixed = 4, channel = 1; break;
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1: fixed = 1, channel = 2; break;
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2: fixed = 2, channel = 2; break;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4: fixed = 4, channel = 2; break;
    case CU_AD_FORMAT_UNORM_INT_101010_2: fixed = 4, bytes = 4; break;
    // Block-compressed: 4x4 texel blocks of 8 (BC1, BC4) or 16 bytes.
    case CU_AD_FORMAT_BC1_UNORM:
    case CU_AD_FORMAT_BC1_UNORM_SRGB: fixed = 4, bytes = 8, block = 4; break;
    case CU_AD_FORMAT_BC2_UNORM:
    case CU_AD_FORMAT_BC2_UNORM_SRGB:
    case CU_AD_FORMAT_BC3_UNORM:
    case CU_AD_FORMAT_BC3_UNORM_SRGB:
    case CU_AD_FORMAT_BC7_UNORM:
    case CU_AD_FORMAT_BC7_UNORM_SRGB: fixed = 4, bytes = 16, block = 4; break;
    case CU_AD_FORMAT_BC4_UNORM:
    case CU_AD_FORMAT_BC4_SNORM: fixed = 1, bytes = 8, block = 4; break;
    case CU_AD_FORMAT_BC5_UNORM:
    case CU_AD_FORMAT_BC5_SNORM: fixed = 2, bytes = 16, block = 4; break;
    case CU_AD_FORMAT_BC6H_UF16:
    case CU_AD_FORMAT_BC6H_SF16: fixed = 3, bytes = 16, block = 4; break;
    // Video formats: planar or subsampled layouts (cuArrayGetPlane) that are not modelled.
    case CU_AD_FORMAT_NV12:
    case CU_AD_FORMAT_P010:
    case CU_AD_FORMAT_P016:
    case CU_AD_FORMAT_NV16:
    case CU_AD_FORMAT_P210:
    case CU_AD_FORMAT_P216:
    case CU_AD_FORMAT_YUY2:
    case CU_AD_FORMAT_Y210:
    case CU_AD_FORMAT_Y216:
    case CU_AD_FORMAT_AYUV:
    case CU_AD_FORMAT_Y410:
    case CU_AD_FORMAT_Y416:
    case CU_AD_FORMAT_Y444_PLANAR8:
    case CU_AD_FORMAT_Y444_PLANAR10:
    case CU_AD_FORMAT_YUV444_8bit_SemiPlanar:
    case CU_AD_FORMAT_YUV444_16bit_SemiPlanar: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (fixed == 0) {  // "NumChannels ... may be 1, 2, or 4"
    if (channels != 1 && channels != 2 && channels != 4) return CUDA_ERROR_INVALID_VALUE;
  } else if (channels != fixed) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out.channel_bytes = channel;
  out.element_bytes = bytes != 0 ? bytes : channel * channels;
  out.block = block;
  return CUDA_SUCCESS;
}

namespace {

int attribute(int which, int device) { return device_attribute(which, device).value_or(0); }

bool within(std::size_t value, int limit) {
  return value >= 1 && value <= static_cast<std::size_t>(limit);
}

// The shapes of cuArray3DCreate's table.
enum class Shape { d1, d2, d3, layered1, layered2, cubemap, cubemap_layered };

// The extents table of cuArray3DCreate / cuMipmappedArrayCreate: the texture limits that must
// always be met, and the surface limits as well when `ldst`.
bool extents_ok(Shape shape, const CUDA_ARRAY3D_DESCRIPTOR& d, bool mipmapped, bool gather,
                int dev) {
  const std::size_t w = d.Width, h = d.Height, z = d.Depth;
  const bool ldst = (d.Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
  auto a = [dev](int which) { return attribute(which, dev); };
  switch (shape) {
    case Shape::d1: {
      const int tex = a(mipmapped ? CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH
                                  : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
      return within(w, tex) && (!ldst || within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH)));
    }
    case Shape::d2: {
      int tw = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
      int th = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
      if (mipmapped) {
        tw = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH);
        th = a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT);
      }
      if (gather) {  // "Width and Height must not be greater than ... GATHER_WIDTH/HEIGHT"
        tw = std::min(tw, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH));
        th = std::min(th, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT));
      }
      return within(w, tw) && within(h, th) &&
             (!ldst || (within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH)) &&
                        within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT))));
    }
    case Shape::d3: {
      const bool normal = within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH)) &&
                          within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT)) &&
                          within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH));
      const bool alternate = within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE)) &&
                             within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE)) &&
                             within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE));
      return (normal || alternate) &&
             (!ldst || (within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH)) &&
                        within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT)) &&
                        within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH))));
    }
    case Shape::layered1:
      return within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH)) &&
             within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS)) &&
             (!ldst || (within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH)) &&
                        within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS))));
    case Shape::layered2:
      return within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH)) &&
             within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT)) &&
             within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS)) &&
             (!ldst || (within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH)) &&
                        within(h, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT)) &&
                        within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS))));
    case Shape::cubemap:
      return within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH)) &&
             (!ldst || within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH)));
    case Shape::cubemap_layered:
      return within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH)) &&
             within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS)) &&
             (!ldst || (within(w, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH)) &&
                        within(z, a(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS))));
  }
  return false;
}

constexpr unsigned kKnownFlags =
    CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
    CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT |
    CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_VIDEO_ENCODE_DECODE;
// Valid flags whose arrays the software driver does not model (their device attributes,
// SPARSE_CUDA_ARRAY_SUPPORTED and DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, are 0).
constexpr unsigned kUnmodelledFlags =
    CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING | CUDA_ARRAY3D_VIDEO_ENCODE_DECODE;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Extent `e` (texels; 0: absent) at mip level `l`.
std::size_t level_extent(std::size_t e, unsigned l) {
  return e == 0 ? 0 : std::max<std::size_t>(1, e >> l);
}

// A new array's description (extents, layout; no storage yet) with `desc`'s extents.
std::unique_ptr<Array> describe_array(Context& ctx, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                                      unsigned level, CUresult& result) {
  auto a = std::make_unique<Array>();
  a->desc = desc;
  result = format_info(raw(desc.Format), desc.NumChannels, a->info);
  if (result != CUDA_SUCCESS) return nullptr;
  const unsigned b = a->info.block;
  a->width = (std::max<std::size_t>(desc.Width, 1) + b - 1) / b;
  a->height = (std::max<std::size_t>(desc.Height, 1) + b - 1) / b;
  a->depth = std::max<std::size_t>(desc.Depth, 1);
  a->level = level;
  a->ctx = &ctx;
  a->device = ctx.device;
  // At most 2^17 x 2^16 elements of 16 bytes, or 2^14 cubed: no overflow in 64 bits.
  a->bytes = a->slice_bytes() * a->depth;
  result = CUDA_SUCCESS;
  return a;
}

// A new array (not yet registered) with `desc`'s extents, on ctx's device; nullptr with
// CUDA_ERROR_OUT_OF_MEMORY in `result` when the device or the host cannot hold it.
std::unique_ptr<Array> make_array(State& s, Context& ctx, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                                  unsigned level, CUresult& result) {
  auto a = describe_array(ctx, desc, level, result);
  if (!a) return nullptr;
  a->charged = round_up(a->bytes, kArrayAlignment);
  Device& dev = s.devices[static_cast<std::size_t>(ctx.device)];
  if (a->charged > config().device_memory - dev.memory_used) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
    return nullptr;
  }
  void* const p = mmap(nullptr, a->charged, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
    return nullptr;
  }
  a->data = static_cast<unsigned char*>(p);
  dev.memory_used += a->charged;
  result = CUDA_SUCCESS;
  return a;
}

// Gives back what an array charged, then destroys (or reclaims) its handle.
void destroy_array(State& s, Array& a, bool reclaimed) noexcept {
  s.devices[static_cast<std::size_t>(a.device)].memory_used -= a.charged;
  a.charged = 0;
  if (reclaimed) {
    s.reclaim(SWCU_ARRAY, &a);
  } else {
    s.destroy(SWCU_ARRAY, &a);
  }
}

void destroy_mipmapped(State& s, MipmappedArray& m, bool reclaimed) noexcept {
  for (Array* level : m.levels) destroy_array(s, *level, reclaimed);
  m.levels.clear();
  if (reclaimed) {
    s.reclaim(SWCU_MIPMAPPED_ARRAY, &m);
  } else {
    s.destroy(SWCU_MIPMAPPED_ARRAY, &m);
  }
}

// The number of levels cuMipmappedArrayCreate allocates: numMipmapLevels "clamped to the range
// [1, 1 + floor(log2(max(width, height, depth)))]" (the layers of a layered array are no extent).
unsigned clamp_levels(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned requested) {
  const bool layered = (d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  std::size_t largest = std::max<std::size_t>(d.Width, d.Height);
  if (!layered) largest = std::max<std::size_t>(largest, d.Depth);
  const unsigned most = static_cast<unsigned>(std::bit_width(std::max<std::size_t>(largest, 1)));
  return std::clamp(requested, 1u, most);
}

// Where the levels of a mipmapped array mapped from external memory lie.
struct Backing {
  int fd;
  std::uint64_t offset;  ///< of level 0 in the file
  std::uint64_t limit;   ///< the file's bytes that may be used
};

// Maps `bytes` of the file at `at` shared into `a` (a level over external memory).
CUresult map_level(Array& a, const Backing& b, std::uint64_t at) {
  const std::size_t page = page_size();
  const std::uint64_t start = at / page * page;
  const std::size_t lead = static_cast<std::size_t>(at - start);
  const std::size_t length = round_up(lead + std::max<std::size_t>(a.bytes, 1), page);
  void* const p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, b.fd,
                       static_cast<off_t>(start));
  if (p == MAP_FAILED) return CUDA_ERROR_OPERATING_SYSTEM;
  a.mapping = p;
  a.mapping_bytes = length;
  a.data = static_cast<unsigned char*>(p) + lead;
  return CUDA_SUCCESS;
}

// cuMipmappedArrayCreate, or with `backing` cuExternalMemoryGetMappedMipmappedArray: checks the
// descriptor, makes every level and registers them.
CUresult make_mipmapped(State& s, Context& ctx, const CUDA_ARRAY3D_DESCRIPTOR& d,
                        unsigned requested, const Backing* backing, CUmipmappedArray* out) {
  if (const CUresult r = check_descriptor(d, true, ctx.device)) return r;
  const unsigned count = clamp_levels(d, requested);
  const bool layers = (d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  std::vector<std::unique_ptr<Array>> levels;
  const auto undo = [&] {
    for (const auto& done : levels) {
      s.devices[static_cast<std::size_t>(done->device)].memory_used -= done->charged;
      done->release();
    }
  };
  std::uint64_t at = backing != nullptr ? backing->offset : 0;
  for (unsigned l = 0; l < count; ++l) {
    CUDA_ARRAY3D_DESCRIPTOR ld = d;
    ld.Width = level_extent(d.Width, l);
    ld.Height = level_extent(d.Height, l);
    if (!layers) ld.Depth = level_extent(d.Depth, l);
    CUresult result = CUDA_SUCCESS;
    std::unique_ptr<Array> level;
    if (backing == nullptr) {
      level = make_array(s, ctx, ld, l, result);
    } else {
      level = describe_array(ctx, ld, l, result);
      if (level && (at > backing->limit || level->bytes > backing->limit - at)) {
        result = CUDA_ERROR_INVALID_VALUE;  // the levels do not fit the imported memory
        level.reset();
      }
      if (level) {
        result = map_level(*level, *backing, at);
        at = round_up(at + level->bytes, kArrayAlignment);
        if (result != CUDA_SUCCESS) level.reset();
      }
    }
    if (!level) {
      undo();
      return result;
    }
    levels.push_back(std::move(level));
  }
  auto m = std::make_unique<MipmappedArray>();
  m->desc = d;
  m->ctx = &ctx;
  m->device = ctx.device;
  MipmappedArray* const made = s.registry(SWCU_MIPMAPPED_ARRAY).add(std::move(m));
  for (auto& level : levels) {
    level->owner = made;
    made->levels.push_back(s.registry(SWCU_ARRAY).add(std::move(level)));
  }
  *out = made->handle();
  return CUDA_SUCCESS;
}

CUresult create(State& s, CUarray* out, const CUDA_ARRAY3D_DESCRIPTOR& desc) {
  Context* ctx = nullptr;
  if (const CUresult r = current_context(s, ctx)) return r;
  if (const CUresult r = check_descriptor(desc, false, ctx->device)) return r;
  CUresult result = CUDA_SUCCESS;
  auto a = make_array(s, *ctx, desc, 0, result);
  if (!a) return result;
  *out = s.registry(SWCU_ARRAY).add(std::move(a))->handle();
  return CUDA_SUCCESS;
}

}  // namespace

CUresult check_descriptor(const CUDA_ARRAY3D_DESCRIPTOR& d, bool mipmapped, int device) noexcept {
  FormatInfo info;
  if (const CUresult r = format_info(raw(d.Format), d.NumChannels, info)) return r;
  if ((d.Flags & ~kKnownFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  const bool layered = (d.Flags & CUDA_ARRAY3D_LAYERED) != 0;
  const bool cube = (d.Flags & CUDA_ARRAY3D_CUBEMAP) != 0;
  const bool gather = (d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) != 0;
  if (d.Width == 0) return CUDA_ERROR_INVALID_VALUE;
  Shape shape = Shape::d1;
  if (cube) {
    // "Width must be equal to Height, and Depth must be six" (a multiple of six when layered).
    if (d.Height != d.Width || d.Depth == 0) return CUDA_ERROR_INVALID_VALUE;
    if (layered ? d.Depth % 6 != 0 : d.Depth != 6) return CUDA_ERROR_INVALID_VALUE;
    shape = layered ? Shape::cubemap_layered : Shape::cubemap;
  } else if (layered) {
    if (d.Depth == 0) return CUDA_ERROR_INVALID_VALUE;  // no layers
    shape = d.Height == 0 ? Shape::layered1 : Shape::layered2;
  } else if (d.Height == 0) {
    if (d.Depth != 0) return CUDA_ERROR_INVALID_VALUE;  // a depth without a height
    shape = Shape::d1;
  } else {
    shape = d.Depth == 0 ? Shape::d2 : Shape::d3;
  }
  // "Texture gather can only be performed on 2D CUDA arrays."
  if (gather && shape != Shape::d2) return CUDA_ERROR_INVALID_VALUE;
  if (!extents_ok(shape, d, mipmapped, gather, device)) return CUDA_ERROR_INVALID_VALUE;
  if ((d.Flags & kUnmodelledFlags) != 0) return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

void Array::release() noexcept {
  if (mapping != nullptr) {
    munmap(mapping, mapping_bytes);
  } else if (data != nullptr) {
    munmap(data, round_up(bytes, kArrayAlignment));
  }
  mapping = nullptr;
  data = nullptr;
}

CUresult find_array(State& s, CUarray handle, Array*& out) noexcept {
  out = handle == nullptr ? nullptr : s.find<Array>(SWCU_ARRAY, handle);
  return out == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}

CUresult find_mipmapped_array(State& s, CUmipmappedArray handle, MipmappedArray*& out) noexcept {
  out = handle == nullptr ? nullptr : s.find<MipmappedArray>(SWCU_MIPMAPPED_ARRAY, handle);
  return out == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}

CUresult map_mipmapped_array(State& s, Context& ctx, const CUDA_ARRAY3D_DESCRIPTOR& desc,
                             unsigned levels, int fd, std::uint64_t offset, std::uint64_t limit,
                             CUmipmappedArray* out) noexcept {
  if (levels == 0) return CUDA_ERROR_INVALID_VALUE;
  const Backing backing{fd, offset, limit};
  return make_mipmapped(s, ctx, desc, levels, &backing, out);
}

void reclaim_arrays(State& s, Context& ctx) noexcept {
  for (const void* h : s.registry(SWCU_MIPMAPPED_ARRAY).handles_if([&ctx](const Object& o) {
         return static_cast<const MipmappedArray&>(o).ctx == &ctx;
       })) {
    destroy_mipmapped(s, *s.find<MipmappedArray>(SWCU_MIPMAPPED_ARRAY, h), true);
  }
  for (const void* h : s.registry(SWCU_ARRAY).handles_if([&ctx](const Object& o) {
         return static_cast<const Array&>(o).ctx == &ctx;
       })) {
    destroy_array(s, *s.find<Array>(SWCU_ARRAY, h), true);
  }
}

}  // namespace swcu

extern "C" {

using swcu::Sym;

CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) {
  return swcu::call(Sym::cuArrayCreate_v2, [&](swcu::State& s) -> CUresult {
    if (pHandle == nullptr || pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto limit = std::numeric_limits<unsigned>::max();
    if (pAllocateArray->Width > limit || pAllocateArray->Height > limit) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = pAllocateArray->Width;
    d.Height = pAllocateArray->Height;
    d.Format = pAllocateArray->Format;
    d.NumChannels = pAllocateArray->NumChannels;
    return swcu::create(s, pHandle, d);
  });
}

CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) {
  return swcu::call(Sym::cuArray3DCreate_v2, [&](swcu::State& s) -> CUresult {
    if (pHandle == nullptr || pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return swcu::create(s, pHandle, *pAllocateArray);
  });
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
  return swcu::call(Sym::cuArrayGetDescriptor_v2, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, hArray, a)) return r;
    if (pArrayDescriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    pArrayDescriptor->Width = a->desc.Width;
    pArrayDescriptor->Height = a->desc.Height;
    pArrayDescriptor->Format = a->desc.Format;
    pArrayDescriptor->NumChannels = a->desc.NumChannels;
    return CUDA_SUCCESS;
  });
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
  return swcu::call(Sym::cuArray3DGetDescriptor_v2, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, hArray, a)) return r;
    if (pArrayDescriptor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pArrayDescriptor = a->desc;
    return CUDA_SUCCESS;
  });
}

CUresult cuArrayDestroy(CUarray hArray) {
  return swcu::call(Sym::cuArrayDestroy, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, hArray, a)) return r;
    // A level belongs to its mipmapped array (cuMipmappedArrayDestroy frees it).
    if (a->owner != nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::destroy_array(s, *a, false);
    return CUDA_SUCCESS;
  });
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray* pHandle,
                                const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
                                unsigned int numMipmapLevels) {
  return swcu::call(Sym::cuMipmappedArrayCreate, [&](swcu::State& s) -> CUresult {
    if (pHandle == nullptr || pMipmappedArrayDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    return swcu::make_mipmapped(s, *ctx, *pMipmappedArrayDesc, numMipmapLevels, nullptr, pHandle);
  });
}

CUresult cuMipmappedArrayGetLevel(CUarray* pLevelArray, CUmipmappedArray hMipmappedArray,
                                  unsigned int level) {
  return swcu::call(Sym::cuMipmappedArrayGetLevel, [&](swcu::State& s) -> CUresult {
    swcu::MipmappedArray* m = nullptr;
    if (const CUresult r = swcu::find_mipmapped_array(s, hMipmappedArray, m)) return r;
    // "If level is greater than the maximum number of levels ... CUDA_ERROR_INVALID_VALUE"
    swcu::Array* const a = m->level(level);
    if (pLevelArray == nullptr || a == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pLevelArray = a->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  return swcu::call(Sym::cuMipmappedArrayDestroy, [&](swcu::State& s) -> CUresult {
    swcu::MipmappedArray* m = nullptr;
    if (const CUresult r = swcu::find_mipmapped_array(s, hMipmappedArray, m)) return r;
    swcu::destroy_mipmapped(s, *m, false);
    return CUDA_SUCCESS;
  });
}

// No array is sparse or deferred-mapped here (creation refuses those flags), so these return
// what cuda.h documents for every other array: CUDA_ERROR_INVALID_VALUE.
CUresult cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties, CUarray array) {
  return swcu::call(Sym::cuArrayGetSparseProperties, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, array, a)) return r;
    (void)sparseProperties;
    return CUDA_ERROR_INVALID_VALUE;  // "not allocated with flag CUDA_ARRAY3D_SPARSE"
  });
}

CUresult cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties,
                                             CUmipmappedArray mipmap) {
  return swcu::call(Sym::cuMipmappedArrayGetSparseProperties, [&](swcu::State& s) -> CUresult {
    swcu::MipmappedArray* m = nullptr;
    if (const CUresult r = swcu::find_mipmapped_array(s, mipmap, m)) return r;
    (void)sparseProperties;
    return CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* memoryRequirements,
                                      CUarray array, CUdevice device) {
  return swcu::call(Sym::cuArrayGetMemoryRequirements, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, array, a)) return r;
    if (memoryRequirements == nullptr || s.device(device) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_ERROR_INVALID_VALUE;  // "not allocated with flag CUDA_ARRAY3D_DEFERRED_MAPPING"
  });
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* memoryRequirements,
                                               CUmipmappedArray mipmap, CUdevice device) {
  return swcu::call(Sym::cuMipmappedArrayGetMemoryRequirements, [&](swcu::State& s) -> CUresult {
    swcu::MipmappedArray* m = nullptr;
    if (const CUresult r = swcu::find_mipmapped_array(s, mipmap, m)) return r;
    if (memoryRequirements == nullptr || s.device(device) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult cuArrayGetPlane(CUarray* pPlaneArray, CUarray hArray, unsigned int planeIdx) {
  return swcu::call(Sym::cuArrayGetPlane, [&](swcu::State& s) -> CUresult {
    swcu::Array* a = nullptr;
    if (const CUresult r = swcu::find_array(s, hArray, a)) return r;
    (void)pPlaneArray;
    (void)planeIdx;
    // "if the array does not have a multi-planar format ... CUDA_ERROR_INVALID_VALUE" (no
    // multi-planar format can be created here).
    return CUDA_ERROR_INVALID_VALUE;
  });
}

}  // extern "C"
