// Kernel lookup: the parameter layout and limits are read once, here.
#include "cuwrap/kernel.hpp"

#include <string>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {
namespace {

// The driver calls that differ between module functions and library kernels.
CUresult param_info(CUfunction f, bool library, std::size_t index, std::size_t* offset,
                    std::size_t* size) {
  const auto& d = detail::driver();
  return library ? d.cuKernelGetParamInfo(reinterpret_cast<CUkernel>(f), index, offset, size)
                 : d.cuFuncGetParamInfo(f, index, offset, size);
}

CUresult get_attribute(CUfunction f, bool library, CUfunction_attribute attribute, int* value) {
  const auto& d = detail::driver();
  if (!library) {
    return d.cuFuncGetAttribute(value, attribute, f);
  }
  CUcontext current{};
  if (const CUresult r = d.cuCtxGetCurrent(&current); r != CUDA_SUCCESS) {
    return r;
  }
  CUdevice device{};
  if (current != nullptr) {
    if (const CUresult r = d.cuCtxGetDevice(&device); r != CUDA_SUCCESS) {
      return r;
    }
  }
  return d.cuKernelGetAttribute(value, attribute, reinterpret_cast<CUkernel>(f), device);
}

int read_attribute(CUfunction f, bool library, const std::string& name,
                   CUfunction_attribute attribute, std::source_location where) {
  int value = 0;
  if (const CUresult r = get_attribute(f, library, attribute, &value); r != CUDA_SUCCESS) {
    detail::throw_error(
        make_error_code(r), library ? "cuKernelGetAttribute" : "cuFuncGetAttribute",
        "kernel " + name + ", attribute " + std::to_string(static_cast<int>(attribute)), where);
  }
  return value;
}

// Parameter info is a CUDA 12.4 addition; older drivers launch unchecked.
bool driver_reports_layout() { return detail::driver_info(detail::driver()).version >= 12040; }

}  // namespace

kernel kernel::from_function(CUfunction function, std::string name,
                             std::shared_ptr<const void> owner, CUcontext ctx,
                             std::source_location where) {
  kernel k;
  k.handle_ = function;
  k.context_ = ctx;
  k.name_ = std::move(name);
  k.owner_ = std::move(owner);
  k.read_layout(where);
  return k;
}

kernel kernel::from_library_kernel(CUkernel function, std::string name,
                                   std::shared_ptr<const void> owner, std::source_location where) {
  kernel k;
  k.from_library_ = true;
  k.handle_ = reinterpret_cast<CUfunction>(function);  // the driver accepts a CUkernel here
  k.name_ = std::move(name);
  k.owner_ = std::move(owner);
  k.read_layout(where);
  return k;
}

void kernel::read_layout(std::source_location where) {
  if (driver_reports_layout()) {
    for (std::size_t i = 0;; ++i) {
      kernel_param p;
      const CUresult r = param_info(handle_, from_library_, i, &p.offset, &p.size);
      if (r == CUDA_ERROR_INVALID_VALUE) {
        break;  // past the last parameter
      }
      if (r != CUDA_SUCCESS) {
        detail::throw_error(make_error_code(r),
                            from_library_ ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo",
                            "kernel " + name_ + ", parameter " + std::to_string(i), where);
      }
      params_.push_back(p);
    }
    layout_known_ = true;
  }
  max_threads_ = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, where);
  max_dynamic_ =
      static_cast<std::size_t>(attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, where));
}

kernel_attributes kernel::attributes(std::source_location where) const {
  detail::expect_not_moved_from(handle_ != nullptr, "kernel", "attributes", where);
  const auto get = [this, where](CUfunction_attribute a) { return attribute(a, where); };
  const auto bytes = [&get](CUfunction_attribute a) { return static_cast<std::size_t>(get(a)); };
  return {get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
          get(CU_FUNC_ATTRIBUTE_NUM_REGS),
          bytes(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
          bytes(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
          bytes(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
          bytes(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
          get(CU_FUNC_ATTRIBUTE_PTX_VERSION),
          get(CU_FUNC_ATTRIBUTE_BINARY_VERSION)};
}

int kernel::attribute(CUfunction_attribute which, std::source_location where) const {
  detail::expect_not_moved_from(handle_ != nullptr, "kernel", "attribute", where);
  return read_attribute(handle_, from_library_, name_, which, where);
}

void kernel::set_max_dynamic_shared_memory(std::size_t bytes, std::source_location where) {
  detail::expect_not_moved_from(handle_ != nullptr, "kernel", "set_max_dynamic_shared_memory",
                                where);
  const auto& d = detail::driver();
  const int value = static_cast<int>(bytes);
  CUresult r = static_cast<std::size_t>(value) == bytes ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && !from_library_) {
    r = d.cuFuncSetAttribute(handle_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value);
  } else if (r == CUDA_SUCCESS) {
    CUdevice device{};
    r = d.cuCtxGetDevice(&device);
    if (r == CUDA_SUCCESS) {
      r = d.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value,
                                 reinterpret_cast<CUkernel>(handle_), device);
    }
  }
  if (r != CUDA_SUCCESS) {
    detail::throw_error(
        make_error_code(r), from_library_ ? "cuKernelSetAttribute" : "cuFuncSetAttribute",
        "kernel " + name_ + ", max dynamic shared memory " + std::to_string(bytes) + " bytes",
        where);
  }
  max_dynamic_ = bytes;
}

void kernel::set_cache_config(cuwrap::cache_config config, std::source_location where) const {
  detail::expect_not_moved_from(handle_ != nullptr, "kernel", "set_cache_config", where);
  check(detail::driver().cuFuncSetCacheConfig(handle_, static_cast<CUfunc_cache>(config)),
        "cuFuncSetCacheConfig", where);
}

namespace detail {

void check_signature(const kernel& k, std::span<const std::size_t> sizes,
                     std::source_location where) {
  if (!k.layout_known()) {
    return;
  }
  const auto params = k.params();
  if (params.size() != sizes.size()) {
    throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuwrap::typed_kernel",
                "kernel " + k.name() + " has " + std::to_string(params.size()) +
                    " parameters; the signature has " + std::to_string(sizes.size()),
                where);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (params[i].size != sizes[i]) {
      throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuwrap::typed_kernel",
                  "kernel " + k.name() + ", parameter " + std::to_string(i) + ": the kernel has " +
                      std::to_string(params[i].size) + " bytes, the signature's type has " +
                      std::to_string(sizes[i]),
                  where);
    }
  }
}

}  // namespace detail
}  // namespace cuwrap
