// Libraries and their kernels: cuLibrary*, cuKernel* (module.hpp).
#include <algorithm>

#include "module/module.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

CUresult load_library(Sym sym, CUlibrary* out, const void* code, std::size_t size,
                      CUjit_option* jit_options, void** jit_values, unsigned int jit_count,
                      const CUlibraryOption* library_options, void* const* library_values,
                      unsigned int library_count) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    if (out == nullptr || code == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (library_count > 0 && (library_options == nullptr || library_values == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (unsigned int i = 0; i < library_count; ++i) {
      const int option = raw(library_options[i]);
      if (option < 0 || option >= CU_LIBRARY_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    }
    JitRequest request;
    if (const CUresult r = read_jit_options(jit_count, jit_options, jit_values, request)) return r;
    std::shared_ptr<const Image> image;
    LoadLog log;
    const CUresult r = parse_image(code, size, request, image, log, &lock);
    if (jit_count > 0) write_jit_logs(request, jit_values, log);
    if (r != CUDA_SUCCESS) return r;
    auto lib = std::make_unique<Library>();
    for (std::size_t i = 0; i < image->kernels.size(); ++i) {
      auto k = std::make_unique<Kernel>();
      k->library = lib.get();
      k->index = i;
      k->desc = &image->kernels[i];
      k->per_device.resize(s.devices.size());
      lib->kernels.push_back(std::move(k));
    }
    lib->image = std::move(image);
    Library* const added = s.registry(SWCU_LIBRARY).add(std::move(lib));
    try {
      HandleMaps& maps = handle_maps();
      for (const auto& k : added->kernels) maps.kernels.emplace(k.get(), k.get());
    } catch (...) {
      s.destroy(SWCU_LIBRARY, added);
      throw;
    }
    *out = reinterpret_cast<CUlibrary>(added);
    return CUDA_SUCCESS;
  });
}

// The kernel's settings for device `dev`; nullptr for an invalid device.
FuncSettings* device_settings(State& s, Kernel& k, CUdevice dev) noexcept {
  if (s.device(dev) == nullptr || static_cast<std::size_t>(dev) >= k.per_device.size()) {
    return nullptr;
  }
  return &k.per_device[static_cast<std::size_t>(dev)];
}

}  // namespace

void Library::release() noexcept {
  HandleMaps& maps = handle_maps();
  for (const auto& k : kernels) maps.kernels.erase(k.get());
  for (const auto& m : all_modules) m->release();
  modules.clear();
}

}  // namespace swcu

using swcu::call;
using swcu::Kernel;
using swcu::Library;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                           void** jitOptionsValues, unsigned int numJitOptions,
                           CUlibraryOption* libraryOptions, void** libraryOptionValues,
                           unsigned int numLibraryOptions) {
  return swcu::load_library(Sym::cuLibraryLoadData, library, code, SIZE_MAX, jitOptions,
                            jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                            numLibraryOptions);
}

CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                               void** jitOptionsValues, unsigned int numJitOptions,
                               CUlibraryOption* libraryOptions, void** libraryOptionValues,
                               unsigned int numLibraryOptions) {
  std::vector<unsigned char> bytes;
  const bool read = fileName != nullptr && swcu::read_file(fileName, bytes);
  if (!read) {
    return call(Sym::cuLibraryLoadFromFile, [=](State&) -> CUresult {
      if (library == nullptr || fileName == nullptr) return CUDA_ERROR_INVALID_VALUE;
      return CUDA_ERROR_FILE_NOT_FOUND;
    });
  }
  bytes.push_back(0);  // PTX from a file need not end in a NUL (not counted: the file's size)
  return swcu::load_library(Sym::cuLibraryLoadFromFile, library, bytes.data(), bytes.size() - 1,
                            jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                            libraryOptionValues, numLibraryOptions);
}

// Waits for the work of every context the library is loaded in (emulations may use its globals).
CUresult cuLibraryUnload(CUlibrary library) {
  return call(Sym::cuLibraryUnload, [=](State& s, swcu::Lock& lock) -> CUresult {
    Library* lib = s.find<Library>(SWCU_LIBRARY, library);
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    std::vector<swcu::Context*> contexts;
    for (const auto& [ctx, m] : lib->modules) contexts.push_back(ctx);
    for (swcu::Context* ctx : contexts) {
      if (s.context(reinterpret_cast<CUcontext>(ctx)) == ctx) swcu::drain_context(s, lock, *ctx);
    }
    if (s.find<Library>(SWCU_LIBRARY, library) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    s.destroy(SWCU_LIBRARY, library);
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return call(Sym::cuLibraryGetKernel, [=](State& s) -> CUresult {
    if (pKernel == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Library* const lib = s.find<Library>(SWCU_LIBRARY, library);
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    for (const auto& k : lib->kernels) {
      if (k->desc->name == name) {
        *pKernel = k->handle();
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_NOT_FOUND;
  });
}

CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  return call(Sym::cuLibraryGetKernelCount, [=](State& s) -> CUresult {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Library* const l = s.find<Library>(SWCU_LIBRARY, lib);
    if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned int>(l->kernels.size());
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  return call(Sym::cuLibraryEnumerateKernels, [=](State& s) -> CUresult {
    if (kernels == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Library* const l = s.find<Library>(SWCU_LIBRARY, lib);
    if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const std::size_t n = std::min<std::size_t>(numKernels, l->kernels.size());
    for (std::size_t i = 0; i < n; ++i) kernels[i] = l->kernels[i]->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  return call(Sym::cuLibraryGetModule, [=](State& s) -> CUresult {
    if (pMod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Library* const lib = s.find<Library>(SWCU_LIBRARY, library);
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    *pMod = swcu::library_module(s, *lib, *ctx).handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return call(Sym::cuLibraryGetGlobal, [=](State& s) -> CUresult {
    if ((dptr == nullptr && bytes == nullptr) || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Library* const lib = s.find<Library>(SWCU_LIBRARY, library);
    if (lib == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (lib->image->global(name) == nullptr) return CUDA_ERROR_NOT_FOUND;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const swcu::Module& m = swcu::library_module(s, *lib, *ctx);
    for (std::size_t i = 0; i < m.image->globals.size(); ++i) {
      if (m.image->globals[i].name != name) continue;
      if (dptr != nullptr) *dptr = static_cast<CUdeviceptr>(m.globals[i]->base);
      if (bytes != nullptr) *bytes = m.globals[i]->size;
      break;
    }
    return CUDA_SUCCESS;
  });
}

// "If there is no device with attribute CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS present in
// the system, the call may return CUDA_ERROR_NOT_FOUND": no device here has it (host code is not
// run from a library), so no symbol names a unified function.
CUresult cuLibraryGetUnifiedFunction(void** fptr, CUlibrary library, const char* symbol) {
  return call(Sym::cuLibraryGetUnifiedFunction, [=](State& s) -> CUresult {
    if (fptr == nullptr || symbol == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.find<Library>(SWCU_LIBRARY, library) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_ERROR_NOT_FOUND;
  });
}

CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  return call(Sym::cuKernelGetFunction, [=](State& s) -> CUresult {
    if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::Function* f = nullptr;
    if (const CUresult r =
            swcu::resolve_function(s, reinterpret_cast<CUfunction>(kernel), nullptr, f)) {
      return r;
    }
    *pFunc = f->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  return call(Sym::cuKernelGetLibrary, [=](State& s) -> CUresult {
    if (pLib == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *pLib = reinterpret_cast<CUlibrary>(k->library);
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  return call(Sym::cuKernelGetName, [=](State& s) -> CUresult {
    if (name == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Kernel* const k = swcu::find_kernel(s, hfunc);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *name = k->desc->name.c_str();
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset,
                              size_t* paramSize) {
  return call(Sym::cuKernelGetParamInfo, [=](State& s) -> CUresult {
    // NVIDIA's driver needs a current context here, though a CUkernel has none of its own.
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (paramOffset == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (!k->desc->layout_known) return CUDA_ERROR_NOT_SUPPORTED;
    if (paramIndex >= k->desc->params.size()) return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = k->desc->params[paramIndex].offset;
    if (paramSize != nullptr) *paramSize = k->desc->params[paramIndex].size;
    return CUDA_SUCCESS;
  });
}

// The kernel's own values for the device: what cuKernelSetAttribute set there, never what
// cuFuncSetAttribute set on one of its functions.
CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuKernelGetAttribute, [=](State& s) -> CUresult {
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const swcu::FuncSettings* const set = swcu::device_settings(s, *k, dev);
    if (set == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    int value = 0;
    if (!swcu::attribute_value(*k->desc, *k->library->image, *set, attribute, value)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *pi = value;
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuKernelSetAttribute, [=](State& s) -> CUresult {
    Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::FuncSettings* const set = swcu::device_settings(s, *k, dev);
    if (set == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    return swcu::set_attribute(*k->desc, *set, attribute, val);
  });
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  const int value = swcu::raw(config);
  return call(Sym::cuKernelSetCacheConfig, [=](State& s) -> CUresult {
    Kernel* const k = swcu::find_kernel(s, kernel);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::FuncSettings* const set = swcu::device_settings(s, *k, dev);
    if (set == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (value < CU_FUNC_CACHE_PREFER_NONE || value > CU_FUNC_CACHE_PREFER_EQUAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    set->cache_config = value;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
