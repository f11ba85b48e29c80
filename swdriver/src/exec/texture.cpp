// cuTexObjectCreate, cuTexObjectDestroy, cuTexObjectGetResourceDesc, cuTexObjectGetTextureDesc,
// cuTexObjectGetResourceViewDesc, cuSurfObjectCreate, cuSurfObjectDestroy and
// cuSurfObjectGetResourceDesc, with the requirements cuda.h lists for them; a violated one is
// CUDA_ERROR_INVALID_VALUE and one logged line naming it ("cuTexObjectCreate: pitchInBytes 100
// is not a multiple of CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT (32)").
//
// A handle is a small nonzero integer, never reused in the process, as the real driver's are
// opaque 64-bit values a kernel passes by value. The objects live in this file's map (not a
// counted handle kind): the interpreter gets a snapshot of the context's at each launch
// (launch_textures), with the memory each reads checked then.
#include "exec/texture.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "core/api.hpp"
#include "core/logs.hpp"
#include "memory/array.hpp"
#include "memory/memory.hpp"

namespace swcu {
namespace {

constexpr std::size_t kTextureAlignment = 512;      // CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
constexpr std::size_t kPitchAlignment = 32;         // ..._TEXTURE_PITCH_ALIGNMENT
constexpr std::size_t kMax1DLinear = 1ull << 28;    // ..._MAXIMUM_TEXTURE1D_LINEAR_WIDTH
constexpr std::size_t kMax2DLinearWidth = 131072;   // ..._MAXIMUM_TEXTURE2D_LINEAR_WIDTH
constexpr std::size_t kMax2DLinearHeight = 65000;   // ..._MAXIMUM_TEXTURE2D_LINEAR_HEIGHT
constexpr std::size_t kMax2DLinearPitch = 2097120;  // ..._MAXIMUM_TEXTURE2D_LINEAR_PITCH
constexpr unsigned kKnownFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES |
                                 CU_TRSF_SRGB | CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION |
                                 CU_TRSF_SEAMLESS_CUBEMAP;

struct TexObject {
  Context* ctx = nullptr;
  bool surface = false;
  CUDA_RESOURCE_DESC res{};
  CUDA_TEXTURE_DESC tex{};
  bool has_view = false;
  CUDA_RESOURCE_VIEW_DESC view{};
  ptx::Texture desc;        ///< the interpreter's view; addresses filled in at each launch
  CUarray array = nullptr;  ///< an array resource (looked up at each launch)
  CUmipmappedArray mipmapped = nullptr;      ///< a mipmapped array resource
  unsigned first_level = 0, last_level = 0;  ///< a resource view's levels
  unsigned first_layer = 0;                  ///< a resource view's first layer
};

std::map<std::uint64_t, TexObject>& objects() {
  static std::map<std::uint64_t, TexObject> m;
  return m;
}
std::uint64_t next_handle = 0;

CUresult fail(const char* api, const std::string& why) {
  report(CU_LOG_LEVEL_ERROR, std::string(api) + ": " + why);
  return CUDA_ERROR_INVALID_VALUE;
}

// The format's channel size, 0 for a value that is no CUarray_format the driver reads.
unsigned format_size(int format) { return ptx::channel_size(static_cast<unsigned>(format)); }

// Checks a linear or pitch2D resource and fills in the interpreter's view of it: "" or why not.
std::string linear_resource(State& s, const CUDA_RESOURCE_DESC& r, ptx::Texture& d) {
  const bool pitch2d = raw(r.resType) == CU_RESOURCE_TYPE_PITCH2D;
  const CUdeviceptr ptr = pitch2d ? r.res.pitch2D.devPtr : r.res.linear.devPtr;
  const int format = raw(pitch2d ? r.res.pitch2D.format : r.res.linear.format);
  const unsigned channels = pitch2d ? r.res.pitch2D.numChannels : r.res.linear.numChannels;
  const unsigned cs = format_size(format);
  if (cs == 0) {
    return "format " + std::to_string(format) +
           " is not a CUarray_format the software driver textures from (UNSIGNED_INT8/16/32, "
           "SIGNED_INT8/16/32, HALF, FLOAT)";
  }
  if (channels != 1 && channels != 2 && channels != 4) {
    return "numChannels is " + std::to_string(channels) + "; it must be 1, 2 or 4";
  }
  if (ptr == 0 || ptr % kTextureAlignment != 0) {
    return "devPtr is not a multiple of CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT (512)";
  }
  const std::size_t es = std::size_t{cs} * channels;
  ptx::TexLevel lv;
  lv.address = ptr;
  std::size_t bytes = 0;
  if (!pitch2d) {
    const std::size_t elements = r.res.linear.sizeInBytes / es;
    if (elements == 0 || elements > kMax1DLinear) {
      return "sizeInBytes " + std::to_string(r.res.linear.sizeInBytes) + " holds " +
             std::to_string(elements) + " elements; it must hold 1..2^28 " +
             "(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)";
    }
    lv.width = static_cast<std::uint32_t>(elements);
    lv.pitch = lv.slice = elements * es;
    bytes = r.res.linear.sizeInBytes;
    d.dims = 1;
  } else {
    const auto& p = r.res.pitch2D;
    if (p.width == 0 || p.width > kMax2DLinearWidth || p.height == 0 ||
        p.height > kMax2DLinearHeight) {
      return "width x height is " + std::to_string(p.width) + " x " + std::to_string(p.height) +
             "; they must be 1..131072 x 1..65000 (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_*)";
    }
    if (p.pitchInBytes % kPitchAlignment != 0 || p.pitchInBytes > kMax2DLinearPitch) {
      return "pitchInBytes " + std::to_string(p.pitchInBytes) +
             " is not a multiple of CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT (32) up to "
             "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH (2097120)";
    }
    if (p.pitchInBytes < p.width * es) {
      return "pitchInBytes " + std::to_string(p.pitchInBytes) + " is less than a row (" +
             std::to_string(p.width * es) + " bytes)";
    }
    lv.width = static_cast<std::uint32_t>(p.width);
    lv.height = static_cast<std::uint32_t>(p.height);
    lv.pitch = p.pitchInBytes;
    lv.slice = p.pitchInBytes * p.height;
    bytes = p.pitchInBytes * (p.height - 1) + p.width * es;
    d.dims = 2;
  }
  if (find_range(s, ptr, bytes, Access::now) == nullptr) {
    return "devPtr .. devPtr + " + std::to_string(bytes) + " does not lie in one live allocation";
  }
  d.format = static_cast<std::uint8_t>(format);
  d.channels = static_cast<std::uint8_t>(channels);
  d.levels.assign(1, lv);
  return "";
}

// The interpreter's level of array level `a` (from layer `first_layer` on).
ptx::TexLevel array_level(const Array& a, unsigned first_layer) {
  ptx::TexLevel lv;
  lv.address = reinterpret_cast<std::uint64_t>(a.data) + first_layer * a.slice_bytes();
  lv.width = static_cast<std::uint32_t>(a.width);
  lv.height = static_cast<std::uint32_t>(a.height);
  lv.depth = static_cast<std::uint32_t>(a.depth);
  lv.pitch = a.row_bytes();
  lv.slice = a.slice_bytes();
  return lv;
}

// Fills in the interpreter's view of array `a` (level 0 of a mipmapped array): "" or why not.
std::string array_shape(const Array& a, bool surface, ptx::Texture& d) {
  const unsigned cs = ptx::channel_size(static_cast<unsigned>(raw(a.desc.Format)));
  if (cs == 0 || a.info.block != 1) {
    return "the array's format " + std::to_string(raw(a.desc.Format)) +
           " is not one the software driver textures from (UNSIGNED_INT8/16/32, "
           "SIGNED_INT8/16/32, HALF, FLOAT)";
  }
  d.format = static_cast<std::uint8_t>(raw(a.desc.Format));
  d.channels = static_cast<std::uint8_t>(a.desc.NumChannels);
  d.cubemap = a.cubemap() && !surface;  // surfaces reach a cubemap's faces as layers
  if (a.cubemap() || a.layered()) {
    d.dims = a.desc.Height == 0 ? 1 : 2;
    d.layers = a.cubemap() && !a.layered() && !surface ? 0 : static_cast<std::uint32_t>(a.depth);
  } else {
    d.dims = a.desc.Depth != 0 ? 3 : a.desc.Height != 0 ? 2 : 1;
  }
  return "";
}

// Checks an array or mipmapped array resource (and its view) and fills in `o`: "" or why not.
std::string array_resource(State& s, const CUDA_RESOURCE_DESC& r,
                           const CUDA_RESOURCE_VIEW_DESC* view, TexObject& o) {
  const Array* a = nullptr;
  unsigned levels = 1;
  if (raw(r.resType) == CU_RESOURCE_TYPE_ARRAY) {
    Array* found = nullptr;
    if (find_array(s, r.res.array.hArray, found) != CUDA_SUCCESS) {
      return "hArray is no live CUDA array";
    }
    a = found;
    o.array = r.res.array.hArray;
  } else {
    MipmappedArray* m = nullptr;
    if (find_mipmapped_array(s, r.res.mipmap.hMipmappedArray, m) != CUDA_SUCCESS) {
      return "hMipmappedArray is no live mipmapped array";
    }
    a = m->level(0);
    levels = static_cast<unsigned>(m->levels.size());
    o.mipmapped = r.res.mipmap.hMipmappedArray;
  }
  if (std::string why = array_shape(*a, false, o.desc); !why.empty()) return why;
  o.last_level = levels - 1;
  if (view != nullptr) {
    // cuda.h: the view's extents equal the resource's for non-block-compressed formats; levels
    // and layers only where the resource has them.
    const std::size_t width = a->desc.Width, height = a->desc.Height, depth = a->desc.Depth;
    if (view->format != CU_RES_VIEW_FORMAT_NONE) {
      return "a resource view's format other than CU_RES_VIEW_FORMAT_NONE is not modelled";
    }
    if (view->width != width || view->height != height || view->depth != depth) {
      return "the resource view's width, height and depth must be the array's";
    }
    if (view->firstMipmapLevel > view->lastMipmapLevel || view->lastMipmapLevel >= levels) {
      return "the resource view's mipmap levels are not levels of the resource";
    }
    const std::uint32_t layers = o.desc.layers;
    if (view->firstLayer > view->lastLayer || (layers == 0 && view->lastLayer != 0) ||
        (layers != 0 && view->lastLayer >= layers)) {
      return "the resource view's layers are not layers of the resource";
    }
    o.first_level = view->firstMipmapLevel;
    o.last_level = view->lastMipmapLevel;
    o.first_layer = view->firstLayer;
    if (layers != 0) o.desc.layers = view->lastLayer - view->firstLayer + 1;
    o.has_view = true;
    o.view = *view;
  }
  return "";
}

// The interpreter's view of the object as it is now, or false when its resource is gone (freed
// memory, a destroyed array).
bool current_view(State& s, const TexObject& o, ptx::Texture& out) {
  out = o.desc;
  if (o.array != nullptr) {
    Array* a = nullptr;
    if (find_array(s, o.array, a) != CUDA_SUCCESS) return false;
    out.levels.assign(1, array_level(*a, o.first_layer));
    return true;
  }
  if (o.mipmapped != nullptr) {
    MipmappedArray* m = nullptr;
    if (find_mipmapped_array(s, o.mipmapped, m) != CUDA_SUCCESS) return false;
    out.levels.clear();
    for (unsigned l = o.first_level; l <= o.last_level && l < m->levels.size(); ++l) {
      out.levels.push_back(array_level(*m->levels[l], o.first_layer));
    }
    return !out.levels.empty();
  }
  const ptx::TexLevel& lv = o.desc.levels[0];
  const std::size_t bytes =
      o.desc.dims == 1 ? lv.pitch
                       : lv.pitch * (lv.height - 1) + std::size_t{lv.width} * o.desc.element_size();
  return find_range(s, lv.address, bytes, Access::execute) != nullptr;
}

TexObject* find(std::uint64_t handle, bool surface) {
  const auto it = objects().find(handle);
  if (it == objects().end() || it->second.surface != surface) return nullptr;
  return &it->second;
}

}  // namespace

std::vector<ptx::Texture> launch_textures(State& s, const Context& ctx) {
  std::vector<ptx::Texture> out;
  for (const auto& [handle, o] : objects()) {
    ptx::Texture view;
    if (o.ctx == &ctx && current_view(s, o, view)) out.push_back(std::move(view));
  }
  return out;  // the map is ordered: sorted by handle
}

void reclaim_textures(State& s, const Context& ctx) noexcept {
  (void)s;
  std::erase_if(objects(), [&ctx](const auto& e) { return e.second.ctx == &ctx; });
}

}  // namespace swcu

using namespace swcu;

CUresult cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                           const CUDA_TEXTURE_DESC* pTexDesc,
                           const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  return call(Sym::cuTexObjectCreate, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    constexpr const char* api = "cuTexObjectCreate";
    if (pTexObject == nullptr || pResDesc == nullptr || pTexDesc == nullptr) {
      return fail(api, "pTexObject, pResDesc or pTexDesc is NULL");
    }
    const CUDA_RESOURCE_DESC& res = *pResDesc;
    const CUDA_TEXTURE_DESC& tex = *pTexDesc;
    if (res.flags != 0) return fail(api, "pResDesc->flags must be 0");
    TexObject o;
    o.ctx = ctx;
    o.res = res;
    o.tex = tex;
    ptx::Texture& d = o.desc;
    const int type = raw(res.resType);
    if (type == CU_RESOURCE_TYPE_ARRAY || type == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
      if (const std::string why = array_resource(s, res, pResViewDesc, o); !why.empty()) {
        return fail(api, why);
      }
    } else if (type != CU_RESOURCE_TYPE_LINEAR && type != CU_RESOURCE_TYPE_PITCH2D) {
      return fail(api, "resType " + std::to_string(type) + " is not a CUresourcetype");
    } else if (pResViewDesc != nullptr) {
      return fail(api, "a resource view (pResViewDesc) needs an array or mipmapped array resource");
    } else if (const std::string why = linear_resource(s, res, d); !why.empty()) {
      return fail(api, why);
    }
    d.resource = static_cast<std::uint8_t>(type);  // CUresourcetype: 0 array .. 3 pitch2D
    for (int i = 0; i < 3; ++i) {
      const int m = raw(tex.addressMode[i]);
      if (m < CU_TR_ADDRESS_MODE_WRAP || m > CU_TR_ADDRESS_MODE_BORDER) {
        return fail(api, "addressMode[" + std::to_string(i) + "] " + std::to_string(m) +
                             " is not a CUaddress_mode");
      }
      d.address_mode[i] = static_cast<std::uint8_t>(m);
    }
    const int filter = raw(tex.filterMode), mip_filter = raw(tex.mipmapFilterMode);
    if (filter < 0 || filter > 1 || mip_filter < 0 || mip_filter > 1) {
      return fail(api, "filterMode or mipmapFilterMode is not a CUfilter_mode");
    }
    if ((tex.flags & ~kKnownFlags) != 0) {
      return fail(api, "flags " + std::to_string(tex.flags) + " has bits no CU_TRSF_* defines");
    }
    if ((tex.flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0 && !d.cubemap) {
      return fail(api, "CU_TRSF_SEAMLESS_CUBEMAP needs a cubemap array resource");
    }
    // CU_TRSF_READ_AS_INTEGER matters for integer formats only: floats and halves read as
    // floats whatever the read mode (the runtime's cudaReadModeElementType on a float texture).
    d.read_as_integer = (tex.flags & CU_TRSF_READ_AS_INTEGER) != 0 &&
                        d.format != ptx::kFormatFloat && d.format != ptx::kFormatHalf;
    d.normalized_coords = (tex.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
    d.srgb = (tex.flags & CU_TRSF_SRGB) != 0;
    d.linear_filter = filter == CU_TR_FILTER_MODE_LINEAR;
    d.mip_linear = mip_filter == CU_TR_FILTER_MODE_LINEAR;
    const bool integer_result =
        d.read_as_integer || d.format == ptx::kFormatU32 || d.format == ptx::kFormatS32;
    if (d.linear_filter && integer_result && type != CU_RESOURCE_TYPE_LINEAR) {
      return fail(api,
                  "CU_TR_FILTER_MODE_LINEAR needs floating-point results: a float or half "
                  "format, or an 8- or 16-bit integer format without CU_TRSF_READ_AS_INTEGER");
    }
    if (type == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY && !d.normalized_coords) {
      return fail(api, "a mipmapped array needs CU_TRSF_NORMALIZED_COORDINATES");
    }
    if (type == CU_RESOURCE_TYPE_LINEAR) {  // cuda.h: address and filter modes are ignored
      d.linear_filter = false;
      d.address_mode[0] = d.address_mode[1] = d.address_mode[2] = CU_TR_ADDRESS_MODE_CLAMP;
      d.normalized_coords = false;
    }
    std::memcpy(d.border, tex.borderColor, sizeof d.border);
    d.mip_bias = tex.mipmapLevelBias;
    d.min_lod = tex.minMipmapLevelClamp;
    d.max_lod = tex.maxMipmapLevelClamp;
    // The runtime's cudaTextureDesc: "This value will be clamped to the range [1,16]."
    d.max_anisotropy = static_cast<std::uint8_t>(std::clamp(tex.maxAnisotropy, 1u, 16u));
    d.seamless_cube = (tex.flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0;
    d.handle = ++next_handle;
    objects().emplace(d.handle, std::move(o));
    *pTexObject = d.handle;
    return CUDA_SUCCESS;
  });
}

CUresult cuTexObjectDestroy(CUtexObject texObject) {
  return call(Sym::cuTexObjectDestroy, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (find(texObject, false) == nullptr) {
      return fail("cuTexObjectDestroy",
                  "texObject " + std::to_string(texObject) + " is no live texture object");
    }
    objects().erase(texObject);
    return CUDA_SUCCESS;
  });
}

CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  return call(Sym::cuTexObjectGetResourceDesc, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    const TexObject* o = find(texObject, false);
    if (pResDesc == nullptr || o == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pResDesc = o->res;
    return CUDA_SUCCESS;
  });
}

CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  return call(Sym::cuTexObjectGetTextureDesc, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    const TexObject* o = find(texObject, false);
    if (pTexDesc == nullptr || o == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pTexDesc = o->tex;
    return CUDA_SUCCESS;
  });
}

// cuda.h: "If no resource view was set for texObject, the CUDA_ERROR_INVALID_VALUE is returned."
CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc,
                                        CUtexObject texObject) {
  return call(Sym::cuTexObjectGetResourceViewDesc, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    const TexObject* o = find(texObject, false);
    if (pResViewDesc == nullptr || o == nullptr || !o->has_view) return CUDA_ERROR_INVALID_VALUE;
    *pResViewDesc = o->view;
    return CUDA_SUCCESS;
  });
}

// cuda.h: resType must be CU_RESOURCE_TYPE_ARRAY with a valid array (created with
// CUDA_ARRAY3D_SURFACE_LDST), flags 0.
CUresult cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  return call(Sym::cuSurfObjectCreate, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    constexpr const char* api = "cuSurfObjectCreate";
    if (pSurfObject == nullptr || pResDesc == nullptr) {
      return fail(api, "pSurfObject or pResDesc is NULL");
    }
    if (pResDesc->flags != 0) return fail(api, "pResDesc->flags must be 0");
    if (raw(pResDesc->resType) != CU_RESOURCE_TYPE_ARRAY) {
      return fail(api, "resType must be CU_RESOURCE_TYPE_ARRAY (surfaces are over CUDA arrays)");
    }
    Array* a = nullptr;
    if (find_array(s, pResDesc->res.array.hArray, a) != CUDA_SUCCESS) {
      return fail(api, "hArray is no live CUDA array");
    }
    if (!a->surface_ldst()) {
      return fail(api, "the array was not created with CUDA_ARRAY3D_SURFACE_LDST");
    }
    TexObject o;
    o.ctx = ctx;
    o.surface = true;
    o.res = *pResDesc;
    o.array = pResDesc->res.array.hArray;
    if (const std::string why = array_shape(*a, true, o.desc); !why.empty()) {
      return fail(api, why);
    }
    o.desc.surface = true;
    o.desc.handle = ++next_handle;
    *pSurfObject = o.desc.handle;
    objects().emplace(o.desc.handle, std::move(o));
    return CUDA_SUCCESS;
  });
}

CUresult cuSurfObjectDestroy(CUsurfObject surfObject) {
  return call(Sym::cuSurfObjectDestroy, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (find(surfObject, true) == nullptr) {
      return fail("cuSurfObjectDestroy",
                  "surfObject " + std::to_string(surfObject) + " is no live surface object");
    }
    objects().erase(surfObject);
    return CUDA_SUCCESS;
  });
}

CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  return call(Sym::cuSurfObjectGetResourceDesc, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    const TexObject* o = find(surfObject, true);
    if (pResDesc == nullptr || o == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pResDesc = o->res;
    return CUDA_SUCCESS;
  });
}
