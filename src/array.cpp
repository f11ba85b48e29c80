// CUDA arrays: creation with messages that name the extents, queries, mipmap levels.
#include "cuwrap/array.hpp"

#include <string>

namespace cuwrap {
namespace detail {
namespace {

std::string describe(const array_descriptor& d) {
  return "width " + std::to_string(d.extent.width) + ", height " + std::to_string(d.extent.height) +
         ", depth " + std::to_string(d.extent.depth) + ", format " +
         std::to_string(static_cast<int>(d.format)) + ", " + std::to_string(d.channels) +
         " channel(s), flags " + std::to_string(static_cast<unsigned>(d.flags));
}

}  // namespace

CUarray create_array(const owning_context& ctx, const array_descriptor& desc, const char* what,
                     std::source_location where) {
  (void)ctx.lifetime_for(what, "array", where);  // a moved-from context throws here
  const scoped_current_context current{ctx, where};
  const CUDA_ARRAY3D_DESCRIPTOR native = desc.native();
  CUarray handle = nullptr;
  const CUresult r = driver().cuArray3DCreate(&handle, &native);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    throw_error(make_error_code(r), "cuArray3DCreate",
                "the device cannot make an array of " + describe(desc) +
                    " (extents beyond its CU_DEVICE_ATTRIBUTE_MAXIMUM_* limits, or a shape the "
                    "flags rule out)",
                where);
  }
  check(r, "cuArray3DCreate", where);
  return handle;
}

CUmipmappedArray create_mipmapped_array(const owning_context& ctx, const array_descriptor& desc,
                                        unsigned levels, std::source_location where) {
  (void)ctx.lifetime_for("mipmapped_array", "mipmapped_array", where);
  const scoped_current_context current{ctx, where};
  const CUDA_ARRAY3D_DESCRIPTOR native = desc.native();
  CUmipmappedArray handle = nullptr;
  const CUresult r = driver().cuMipmappedArrayCreate(&handle, &native, levels);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    throw_error(make_error_code(r), "cuMipmappedArrayCreate",
                "the device cannot make a mipmapped array of " + describe(desc), where);
  }
  check(r, "cuMipmappedArrayCreate", where);
  return handle;
}

CUarray mipmap_level(CUmipmappedArray handle, unsigned level, unsigned levels,
                     std::source_location where) {
  if (level >= levels) {
    throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "mipmapped_array::level",
                "level " + std::to_string(level) + " of a mipmapped array of " +
                    std::to_string(levels) + " level(s)",
                where);
  }
  CUarray out = nullptr;
  check(driver().cuMipmappedArrayGetLevel(&out, handle, level), "cuMipmappedArrayGetLevel", where);
  return out;
}

CUDA_ARRAY_MEMORY_REQUIREMENTS mipmapped_requirements(CUmipmappedArray handle, CUdevice dev,
                                                      std::source_location where) {
  CUDA_ARRAY_MEMORY_REQUIREMENTS out{};
  const CUresult r = driver().cuMipmappedArrayGetMemoryRequirements(&out, handle, dev);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    throw_error(make_error_code(r), "cuMipmappedArrayGetMemoryRequirements",
                "only a mipmapped array made with CUDA_ARRAY3D_DEFERRED_MAPPING has them", where);
  }
  check(r, "cuMipmappedArrayGetMemoryRequirements", where);
  return out;
}

CUDA_ARRAY_SPARSE_PROPERTIES mipmapped_sparse(CUmipmappedArray handle, std::source_location where) {
  CUDA_ARRAY_SPARSE_PROPERTIES out{};
  const CUresult r = driver().cuMipmappedArrayGetSparseProperties(&out, handle);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    throw_error(make_error_code(r), "cuMipmappedArrayGetSparseProperties",
                "the mipmapped array is not sparse (CUDA_ARRAY3D_SPARSE)", where);
  }
  check(r, "cuMipmappedArrayGetSparseProperties", where);
  return out;
}

}  // namespace detail

array_descriptor array_ref::descriptor(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "array", "descriptor", where);
  CUDA_ARRAY3D_DESCRIPTOR d{};
  check(detail::driver().cuArray3DGetDescriptor(&d, handle_), "cuArray3DGetDescriptor", where);
  return array_descriptor::from_native(d);
}

CUDA_ARRAY_MEMORY_REQUIREMENTS array_ref::memory_requirements(CUdevice dev,
                                                              std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "array", "memory_requirements", where);
  CUDA_ARRAY_MEMORY_REQUIREMENTS out{};
  const CUresult r = detail::driver().cuArrayGetMemoryRequirements(&out, handle_, dev);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    detail::throw_error(make_error_code(r), "cuArrayGetMemoryRequirements",
                        "only an array made with CUDA_ARRAY3D_DEFERRED_MAPPING has them", where);
  }
  check(r, "cuArrayGetMemoryRequirements", where);
  return out;
}

CUDA_ARRAY_SPARSE_PROPERTIES array_ref::sparse_properties(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "array", "sparse_properties", where);
  CUDA_ARRAY_SPARSE_PROPERTIES out{};
  const CUresult r = detail::driver().cuArrayGetSparseProperties(&out, handle_);
  if (r == CUDA_ERROR_INVALID_VALUE) {
    detail::throw_error(make_error_code(r), "cuArrayGetSparseProperties",
                        "the array is not sparse (CUDA_ARRAY3D_SPARSE)", where);
  }
  check(r, "cuArrayGetSparseProperties", where);
  return out;
}

}  // namespace cuwrap
