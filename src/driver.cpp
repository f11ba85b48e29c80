// Loading the driver library and filling the entry-point table.
#include "cuwrap/detail/driver.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "cudaTypedefs.h"
#include "cuwrap/error.hpp"

namespace cuwrap::detail {
namespace {

// Every table member with the CUDA version its cuda.h name binds to. The static_asserts
// below make a wrong version a compile error: the member's type must equal the
// cudaTypedefs.h PFN type of that version (so cuCtxCreate at 12000 or 11040, which would
// return cuCtxCreate_v3, cannot compile). The software driver's tests check the other
// half at run time: the pointer returned for (name, version) is the function that cuda.h's
// macro names.
// clang-format off
#define CUWRAP_DRIVER_FUNCTIONS(X) \
  X(cuInit, 2000) \
  X(cuDriverGetVersion, 2020) \
  X(cuGetErrorName, 6000) \
  X(cuGetErrorString, 6000) \
  X(cuGetExportTable, 3000) \
  X(cuDeviceGetCount, 2000) \
  X(cuDeviceGet, 2000) \
  X(cuDeviceGetName, 2000) \
  X(cuDeviceGetUuid, 11040) \
  X(cuDeviceTotalMem, 3020) \
  X(cuDeviceGetAttribute, 2000) \
  X(cuDeviceGetPCIBusId, 4010) \
  X(cuDeviceGetByPCIBusId, 4010) \
  X(cuDeviceCanAccessPeer, 4000) \
  X(cuDeviceGetP2PAttribute, 8000) \
  X(cuDevicePrimaryCtxRetain, 7000) \
  X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuDevicePrimaryCtxGetState, 7000) \
  X(cuDevicePrimaryCtxSetFlags, 11000) \
  X(cuDevicePrimaryCtxReset, 11000) \
  X(cuCtxCreate, 12050) \
  X(cuCtxDestroy, 4000) \
  X(cuCtxPushCurrent, 4000) \
  X(cuCtxPopCurrent, 4000) \
  X(cuCtxSetCurrent, 4000) \
  X(cuCtxGetCurrent, 4000) \
  X(cuCtxGetDevice, 2000) \
  X(cuCtxSynchronize, 2000) \
  X(cuCtxGetFlags, 7000) \
  X(cuCtxSetFlags, 12010) \
  X(cuCtxGetApiVersion, 3020) \
  X(cuCtxGetId, 12000) \
  X(cuCtxGetLimit, 3010) \
  X(cuCtxSetLimit, 3010) \
  X(cuCtxGetStreamPriorityRange, 5050) \
  X(cuCtxGetCacheConfig, 3020) \
  X(cuCtxSetCacheConfig, 3020) \
  X(cuStreamCreate, 2000) \
  X(cuStreamCreateWithPriority, 5050) \
  X(cuStreamDestroy, 4000) \
  X(cuStreamSynchronize, 2000) \
  X(cuStreamQuery, 2000) \
  X(cuStreamWaitEvent, 3020) \
  X(cuStreamGetPriority, 5050) \
  X(cuStreamGetFlags, 5050) \
  X(cuStreamGetCtx, 9020) \
  X(cuStreamGetId, 12000) \
  X(cuLaunchHostFunc, 10000) \
  X(cuEventCreate, 2000) \
  X(cuEventDestroy, 4000) \
  X(cuEventRecord, 2000) \
  X(cuEventRecordWithFlags, 11010) \
  X(cuEventQuery, 2000) \
  X(cuEventSynchronize, 2000) \
  X(cuEventElapsedTime, 12080) \
  X(cuMemAlloc, 3020) \
  X(cuMemFree, 3020) \
  X(cuMemAllocPitch, 3020) \
  X(cuMemGetInfo, 3020) \
  X(cuMemAllocAsync, 11020) \
  X(cuMemAllocFromPoolAsync, 11020) \
  X(cuMemFreeAsync, 11020) \
  X(cuMemHostAlloc, 2020) \
  X(cuMemFreeHost, 2000) \
  X(cuMemHostGetDevicePointer, 3020) \
  X(cuMemHostRegister, 6050) \
  X(cuMemHostUnregister, 4000) \
  X(cuMemAllocManaged, 6000) \
  X(cuMemPrefetchAsync, 12020) \
  X(cuMemAdvise, 12020) \
  X(cuMemRangeGetAttribute, 8000) \
  X(cuMemcpy, 4000) \
  X(cuMemcpyAsync, 4000) \
  X(cuMemcpy2D, 3020) \
  X(cuMemcpy2DAsync, 3020) \
  X(cuMemsetD8, 3020) \
  X(cuMemsetD16, 3020) \
  X(cuMemsetD32, 3020) \
  X(cuMemsetD8Async, 3020) \
  X(cuMemsetD16Async, 3020) \
  X(cuMemsetD32Async, 3020) \
  X(cuMemPoolCreate, 11020) \
  X(cuMemPoolDestroy, 11020) \
  X(cuDeviceGetDefaultMemPool, 11020) \
  X(cuMemPoolTrimTo, 11020) \
  X(cuMemPoolGetAttribute, 11020) \
  X(cuMemPoolSetAttribute, 11020) \
  X(cuMemPoolSetAccess, 11020) \
  X(cuMemPoolGetAccess, 11020) \
  X(cuMemPoolExportToShareableHandle, 11020) \
  X(cuMemPoolImportFromShareableHandle, 11020) \
  X(cuMemPoolExportPointer, 11020) \
  X(cuMemPoolImportPointer, 11020) \
  X(cuPointerGetAttributes, 7000) \
  X(cuModuleLoadDataEx, 2010) \
  X(cuModuleUnload, 2000) \
  X(cuModuleGetFunction, 2000) \
  X(cuModuleGetGlobal, 3020) \
  X(cuModuleGetFunctionCount, 12040) \
  X(cuModuleEnumerateFunctions, 12040) \
  X(cuFuncGetParamInfo, 12040) \
  X(cuFuncGetName, 12030) \
  X(cuFuncGetAttribute, 2020) \
  X(cuFuncSetAttribute, 9000) \
  X(cuFuncSetCacheConfig, 3000) \
  X(cuLaunchKernel, 4000) \
  X(cuLaunchKernelEx, 11060) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
  X(cuOccupancyMaxPotentialBlockSize, 6050) \
  X(cuOccupancyMaxActiveClusters, 11070) \
  X(cuLibraryLoadData, 12000) \
  X(cuLibraryUnload, 12000) \
  X(cuLibraryGetKernel, 12000) \
  X(cuLibraryGetKernelCount, 12040) \
  X(cuLibraryEnumerateKernels, 12040) \
  X(cuKernelGetParamInfo, 12040) \
  X(cuKernelGetName, 12030) \
  X(cuKernelGetAttribute, 12000) \
  X(cuKernelGetFunction, 12000) \
  X(cuKernelSetAttribute, 12000) \
  X(cuGraphCreate, 10000) \
  X(cuGraphDestroy, 10000) \
  X(cuGraphClone, 10000) \
  X(cuGraphInstantiateWithFlags, 11040) \
  X(cuGraphExecDestroy, 10000) \
  X(cuGraphLaunch, 10000) \
  X(cuGraphUpload, 11010) \
  X(cuGraphExecUpdate, 12000) \
  X(cuGraphAddKernelNode, 12000) \
  X(cuGraphAddMemcpyNode, 10000) \
  X(cuGraphAddMemsetNode, 10000) \
  X(cuGraphAddHostNode, 10000) \
  X(cuGraphAddEventRecordNode, 11010) \
  X(cuGraphAddEventWaitNode, 11010) \
  X(cuGraphAddChildGraphNode, 10000) \
  X(cuGraphAddEmptyNode, 10000) \
  X(cuGraphAddMemAllocNode, 11040) \
  X(cuGraphAddMemFreeNode, 11040) \
  X(cuGraphGetNodes, 10000) \
  X(cuGraphGetEdges, 12030) \
  X(cuGraphAddDependencies, 12030) \
  X(cuGraphNodeGetType, 10000) \
  X(cuGraphExecKernelNodeSetParams, 12000) \
  X(cuGraphExecMemcpyNodeSetParams, 10020) \
  X(cuGraphExecMemsetNodeSetParams, 10020) \
  X(cuGraphNodeSetEnabled, 11060) \
  X(cuGraphNodeGetEnabled, 11060) \
  X(cuGraphConditionalHandleCreate, 12030) \
  X(cuGraphAddNode, 12030) \
  X(cuStreamBeginCapture, 10010) \
  X(cuStreamEndCapture, 10000) \
  X(cuStreamIsCapturing, 10000) \
  X(cuStreamGetCaptureInfo, 12030) \
  X(cuUserObjectCreate, 11030) \
  X(cuUserObjectRelease, 11030) \
  X(cuGraphRetainUserObject, 11030) \
  X(cuGraphDebugDotPrint, 11030) \
  X(cuCtxEnablePeerAccess, 4000) \
  X(cuCtxDisablePeerAccess, 4000) \
  X(cuMemcpyPeer, 4000) \
  X(cuMemcpyPeerAsync, 4000) \
  X(cuIpcGetMemHandle, 4010) \
  X(cuIpcOpenMemHandle, 11000) \
  X(cuIpcCloseMemHandle, 4010) \
  X(cuIpcGetEventHandle, 4010) \
  X(cuIpcOpenEventHandle, 4010)
// clang-format on

#define CUWRAP_CHECK_TYPE(name, version)                                                        \
  static_assert(std::is_same_v<decltype(driver_table::name)::pointer, PFN_##name##_v##version>, \
                "driver_table::" #name " is not the PFN type of version " #version);
CUWRAP_DRIVER_FUNCTIONS(CUWRAP_CHECK_TYPE)
#undef CUWRAP_CHECK_TYPE

#define CUWRAP_COUNT(name, version) +1
constexpr std::size_t entry_count = 0 CUWRAP_DRIVER_FUNCTIONS(CUWRAP_COUNT);
#undef CUWRAP_COUNT
static_assert(sizeof(driver_table) == entry_count * sizeof(void*),
              "every driver_table member needs a row in CUWRAP_DRIVER_FUNCTIONS");

#define CUWRAP_STRINGIFY(text) #text
#define CUWRAP_EXPANDED_NAME(name) CUWRAP_STRINGIFY(name)
#define CUWRAP_INFO(name, version) driver_entry{#name, CUWRAP_EXPANDED_NAME(name), version},
constexpr driver_entry entry_infos[] = {CUWRAP_DRIVER_FUNCTIONS(CUWRAP_INFO)};
#undef CUWRAP_INFO

#define CUWRAP_INDEX(name, version) index_##name,
enum entry_index : std::size_t { CUWRAP_DRIVER_FUNCTIONS(CUWRAP_INDEX) };
#undef CUWRAP_INDEX

struct loaded_driver {
  driver_table table{};
  loaded_driver_info info;
};
static_assert(std::is_standard_layout_v<loaded_driver>);

int loaded_version_for_messages = 0;  // the driver version missing entries report against

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) + " (" +
         std::to_string(version) + ")";
}

// Stands in for an entry the driver does not provide; calling it throws a clear error
// instead of jumping through a null pointer.
template <std::size_t Index, class... Args>
CUresult missing_entry(Args...) {
  const auto& e = entry_infos[Index];
  throw error{make_error_code(CUDA_ERROR_NOT_SUPPORTED),
              e.base_name,
              "needs a driver for CUDA " + cuda_version_text(e.version) +
                  "; the loaded driver is CUDA " + cuda_version_text(loaded_version_for_messages),
              {}};
}

template <std::size_t Index, class... Args>
auto missing_entry_for(CUresult (*)(Args...)) -> CUresult (*)(Args...) {
  return &missing_entry<Index, Args...>;
}

[[noreturn]] void fail(CUresult code, const char* api, const std::string& details) {
  throw error{make_error_code(code), api, details, {}};
}

std::string library_path(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

std::string software_driver_path() {
  for (const char* candidate : {CUWRAP_SWDRIVER_INSTALL_PATH, CUWRAP_SWDRIVER_BUILD_PATH}) {
    std::error_code ignored;
    if (candidate[0] != '\0' && std::filesystem::exists(candidate, ignored)) {
      return candidate;
    }
  }
  fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen",
       "CUWRAP_DRIVER=software, but the software driver is neither installed at '" +
           std::string{CUWRAP_SWDRIVER_INSTALL_PATH} + "' nor built at '" +
           CUWRAP_SWDRIVER_BUILD_PATH + "' (configure with CUWRAP_BUILD_SWDRIVER=ON)");
}

std::string library_to_open(const char* spec) {
  if (spec == nullptr || spec[0] == '\0') {
    return "libcuda.so.1";
  }
  if (std::strcmp(spec, "software") == 0) {
    return software_driver_path();
  }
  return spec;
}

void* open_library(const std::string& name) {
  // RTLD_NODELETE: entry points stay valid even if someone dlcloses the same file.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* why = dlerror();
    fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen",
         "no CUDA driver: cannot load '" + name + "': " + (why != nullptr ? why : "unknown") +
             ". Install the NVIDIA driver, or set CUWRAP_DRIVER to a driver library's path, or "
             "to 'software' for cuwrap's software driver");
  }
  return library;
}

template <class Fn>
Fn resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* name, int version,
           const std::string& path) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult r = get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
  if (r == CUDA_ERROR_STUB_LIBRARY) {
    fail(r, "cuGetProcAddress",
         "'" + path +
             "' is the CUDA toolkit's stub library, not a driver: install the NVIDIA "
             "driver, or set CUWRAP_DRIVER=software");
  }
  if (r != CUDA_SUCCESS || fn == nullptr) {
    fail(r != CUDA_SUCCESS ? r : CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "cuGetProcAddress",
         std::string{name} + " at version " + std::to_string(version) + " from '" + path + "'");
  }
  return reinterpret_cast<Fn>(fn);
}

void fill_table(driver_table& table, PFN_cuGetProcAddress_v12000 get_proc, int driver_version) {
#define CUWRAP_FILL(name, version)                                                                \
  if ((version) > driver_version) {                                                               \
    table.name.set(missing_entry_for<index_##name>(table.name.get()));                            \
  } else {                                                                                        \
    void* fn = nullptr;                                                                           \
    CUdriverProcAddressQueryResult status{};                                                      \
    const CUresult r = get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status); \
    table.name.set((r == CUDA_SUCCESS && fn != nullptr)                                           \
                       ? reinterpret_cast<decltype(table.name)::pointer>(fn)                      \
                       : missing_entry_for<index_##name>(table.name.get()));                      \
  }
  CUWRAP_DRIVER_FUNCTIONS(CUWRAP_FILL)
#undef CUWRAP_FILL
}

// Points every entry of the process's table at the loaded driver's function.
const driver_table& publish(const driver_table& loaded) {
#define CUWRAP_PUBLISH(name, version) process_driver_table.name.set(loaded.name.get());
  CUWRAP_DRIVER_FUNCTIONS(CUWRAP_PUBLISH)
#undef CUWRAP_PUBLISH
  return loaded;
}

// What an entry of the process's table points to until the driver is loaded: loads it (once)
// and calls the loaded function.
template <auto Entry,
          class Pointer =
              typename std::remove_cvref_t<decltype(std::declval<driver_table>().*Entry)>::pointer>
struct load_then_call;

template <auto Entry, class R, class... Args>
struct load_then_call<Entry, R (*)(Args...)> {
  static R call(Args... args) { return (load_process_driver().*Entry)(args...); }
};

}  // namespace

const driver_table& load_driver(const char* spec) {
  const std::string name = library_to_open(spec);
  void* library = open_library(name);
  const std::string path = library_path(library, name);

  auto* get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    fail(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "dlsym",
         "'" + path +
             "' is not a CUDA driver: it has no cuGetProcAddress_v2 (CUDA 12.0 or "
             "newer drivers export it)");
  }

  // Version first: it tells which entry points this driver can provide.
  auto* get_version =
      resolve<PFN_cuDriverGetVersion_v2020>(get_proc, "cuDriverGetVersion", 2020, path);
  int version = 0;
  if (const CUresult r = get_version(&version); r != CUDA_SUCCESS) {
    fail(r, "cuDriverGetVersion", "'" + path + "'");
  }
  auto* init = resolve<PFN_cuInit_v2000>(get_proc, "cuInit", 2000, path);
  if (const CUresult r = init(0); r != CUDA_SUCCESS) {
    fail(r, "cuInit",
         r == CUDA_ERROR_NO_DEVICE ? "the driver at '" + path + "' found no CUDA device"
                                   : "driver '" + path + "'");
  }

  auto* loaded = new loaded_driver{};  // lives until exit: entry points may run in atexit
  loaded->info = {path, version};
  loaded_version_for_messages = version;
  fill_table(loaded->table, get_proc, version);
  return loaded->table;
}

std::span<const driver_entry> driver_entries() noexcept { return entry_infos; }

const driver_table& load_process_driver() {
  static const driver_table& loaded = publish(load_driver(std::getenv("CUWRAP_DRIVER")));
  return loaded;
}

#define CUWRAP_LOADER(name, version) \
  .name = decltype(driver_table::name){load_then_call<&driver_table::name>::call},
constinit driver_table process_driver_table{CUWRAP_DRIVER_FUNCTIONS(CUWRAP_LOADER)};
#undef CUWRAP_LOADER

const loaded_driver_info& driver_info(const driver_table& table) {
  const driver_table& loaded = &table == &process_driver_table ? load_process_driver() : table;
  // loaded is the first member of a loaded_driver (standard layout).
  return reinterpret_cast<const loaded_driver*>(&loaded)->info;
}

}  // namespace cuwrap::detail
