// cuGetProcAddress (4 arguments, CUDA 11.3) and cuGetProcAddress_v2 (with the status, 12.0).
//
// A request names a base name and a CUDA version. The answer is the variant of that base name
// with the highest introduced version not above the request: with the per-thread flag its
// _ptds/_ptsz twin when one exists for that same ABI, else the legacy-stream variant. The
// returned pointer is the exported function itself (dladdr on it names the export).
#include "core/api.hpp"
#include "core/config.hpp"

namespace swcu {
namespace {

constexpr cuuint64_t kKnownFlags =
    CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

struct Lookup {
  CUresult result = CUDA_SUCCESS;
  void* function = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
};

Lookup lookup(const char* symbol, int version, cuuint64_t flags) {
  // The two stream flags are alternatives; DEFAULT (0) means legacy here, since the caller's
  // header already turned it into PER_THREAD when it was compiled for per-thread streams.
  if ((flags & ~kKnownFlags) != 0 || flags == kKnownFlags) return {CUDA_ERROR_INVALID_VALUE};
  if (version > config().driver_version) return {CUDA_ERROR_INVALID_VALUE};

  const auto family = variants_of(symbol);
  if (family.empty()) return {};

  const Variant* legacy = nullptr;
  const Variant* per_thread = nullptr;
  for (const Variant& v : family) {  // ascending versions
    if (v.version > version) break;
    (v.per_thread == PerThread::NONE ? legacy : per_thread) = &v;
  }
  // A per-thread twin of an older ABI must not stand in for a newer legacy variant.
  const bool use_per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0 &&
                              per_thread != nullptr &&
                              (legacy == nullptr || per_thread->version >= legacy->version);
  const Variant* chosen = use_per_thread ? per_thread : legacy;
  if (chosen == nullptr) return {CUDA_SUCCESS, nullptr, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT};
  return {CUDA_SUCCESS, export_address(chosen->sym), CU_GET_PROC_ADDRESS_SUCCESS};
}

CUresult get_proc_address(Sym sym, const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  return call_uninitialized(sym, [=](State&) -> CUresult {
    if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Lookup found = lookup(symbol, version, flags);
    if (found.result != CUDA_SUCCESS) return found.result;
    *pfn = found.function;
    if (status != nullptr) *status = found.status;
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return swcu::get_proc_address(swcu::Sym::cuGetProcAddress, symbol, pfn, cudaVersion, flags,
                                nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
  return swcu::get_proc_address(swcu::Sym::cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags,
                                symbolStatus);
}

}  // extern "C"
