// The driver entry-point table. Every cuwrap call into the CUDA driver goes through it:
// the table is filled once, lazily, from the driver library that CUWRAP_DRIVER selects,
// each entry requested with cuGetProcAddress_v2 at the ABI version that cuda.h binds its
// name to. Nothing in cuwrap links libcuda.
#pragma once

#include <cuda.h>

#if CUDA_VERSION < 13000
#error "cuwrap needs CUDA 13.0 headers or newer (12.x bind cuCtxCreate and others to older ABIs)"
#endif

#include <atomic>
#include <span>
#include <string>

namespace cuwrap::detail {

/// One driver entry point: a function pointer that is called like the function it points to.
/// It is atomic (acquire/release, a plain load on x86-64) because the process's table is
/// filled in while other threads may already be calling through it.
template <class Fn>
class entry_point;

template <class R, class... Args>
class entry_point<R (*)(Args...)> {
 public:
  using pointer = R (*)(Args...);  ///< the cuda.h function pointer type

  /// An entry that points nowhere (load_driver() fills it in).
  constexpr entry_point() noexcept = default;
  /// An entry that points to `fn`.
  constexpr explicit entry_point(pointer fn) noexcept : fn_{fn} {}
  entry_point(const entry_point&) = delete;
  entry_point& operator=(const entry_point&) = delete;

  /// Calls the function.
  [[gnu::always_inline]] R operator()(Args... args) const {
    return fn_.load(std::memory_order_acquire)(args...);
  }
  /// The function pointed to.
  [[nodiscard]] pointer get() const noexcept { return fn_.load(std::memory_order_acquire); }
  /// Points the entry to `fn`.
  void set(pointer fn) noexcept { fn_.store(fn, std::memory_order_release); }

 private:
  static_assert(std::atomic<pointer>::is_always_lock_free);
  std::atomic<pointer> fn_{nullptr};
};

/// One entry point per driver function cuwrap uses. Members are named like the functions in
/// cuda.h (so `drv.cuMemAlloc(...)` calls the same ABI as `cuMemAlloc(...)`). src/driver.cpp
/// checks at compile time that every member's pointer type is the cudaTypedefs.h PFN type of
/// the version it is requested at.
struct driver_table {
  entry_point<decltype(&::cuInit)> cuInit;
  entry_point<decltype(&::cuDriverGetVersion)> cuDriverGetVersion;
  entry_point<decltype(&::cuGetErrorName)> cuGetErrorName;
  entry_point<decltype(&::cuGetErrorString)> cuGetErrorString;
  entry_point<decltype(&::cuGetExportTable)> cuGetExportTable;
  entry_point<decltype(&::cuDeviceGetCount)> cuDeviceGetCount;
  entry_point<decltype(&::cuDeviceGet)> cuDeviceGet;
  entry_point<decltype(&::cuDeviceGetName)> cuDeviceGetName;
  entry_point<decltype(&::cuDeviceGetUuid)> cuDeviceGetUuid;
  entry_point<decltype(&::cuDeviceTotalMem)> cuDeviceTotalMem;
  entry_point<decltype(&::cuDeviceGetAttribute)> cuDeviceGetAttribute;
  entry_point<decltype(&::cuDeviceGetPCIBusId)> cuDeviceGetPCIBusId;
  entry_point<decltype(&::cuDeviceGetByPCIBusId)> cuDeviceGetByPCIBusId;
  entry_point<decltype(&::cuDeviceCanAccessPeer)> cuDeviceCanAccessPeer;
  entry_point<decltype(&::cuDeviceGetP2PAttribute)> cuDeviceGetP2PAttribute;
  entry_point<decltype(&::cuDevicePrimaryCtxRetain)> cuDevicePrimaryCtxRetain;
  entry_point<decltype(&::cuDevicePrimaryCtxRelease)> cuDevicePrimaryCtxRelease;
  entry_point<decltype(&::cuDevicePrimaryCtxGetState)> cuDevicePrimaryCtxGetState;
  entry_point<decltype(&::cuDevicePrimaryCtxSetFlags)> cuDevicePrimaryCtxSetFlags;
  entry_point<decltype(&::cuDevicePrimaryCtxReset)> cuDevicePrimaryCtxReset;
  entry_point<decltype(&::cuCtxCreate)> cuCtxCreate;
  entry_point<decltype(&::cuCtxDestroy)> cuCtxDestroy;
  entry_point<decltype(&::cuCtxPushCurrent)> cuCtxPushCurrent;
  entry_point<decltype(&::cuCtxPopCurrent)> cuCtxPopCurrent;
  entry_point<decltype(&::cuCtxSetCurrent)> cuCtxSetCurrent;
  entry_point<decltype(&::cuCtxGetCurrent)> cuCtxGetCurrent;
  entry_point<decltype(&::cuCtxGetDevice)> cuCtxGetDevice;
  entry_point<decltype(&::cuCtxSynchronize)> cuCtxSynchronize;
  entry_point<decltype(&::cuCtxGetFlags)> cuCtxGetFlags;
  entry_point<decltype(&::cuCtxSetFlags)> cuCtxSetFlags;
  entry_point<decltype(&::cuCtxGetApiVersion)> cuCtxGetApiVersion;
  entry_point<decltype(&::cuCtxGetId)> cuCtxGetId;
  entry_point<decltype(&::cuCtxGetLimit)> cuCtxGetLimit;
  entry_point<decltype(&::cuCtxSetLimit)> cuCtxSetLimit;
  entry_point<decltype(&::cuCtxGetStreamPriorityRange)> cuCtxGetStreamPriorityRange;
  entry_point<decltype(&::cuCtxGetCacheConfig)> cuCtxGetCacheConfig;
  entry_point<decltype(&::cuCtxSetCacheConfig)> cuCtxSetCacheConfig;
  entry_point<decltype(&::cuStreamCreate)> cuStreamCreate;
  entry_point<decltype(&::cuStreamCreateWithPriority)> cuStreamCreateWithPriority;
  entry_point<decltype(&::cuStreamDestroy)> cuStreamDestroy;
  entry_point<decltype(&::cuStreamSynchronize)> cuStreamSynchronize;
  entry_point<decltype(&::cuStreamQuery)> cuStreamQuery;
  entry_point<decltype(&::cuStreamWaitEvent)> cuStreamWaitEvent;
  entry_point<decltype(&::cuStreamGetPriority)> cuStreamGetPriority;
  entry_point<decltype(&::cuStreamGetFlags)> cuStreamGetFlags;
  entry_point<decltype(&::cuStreamGetCtx)> cuStreamGetCtx;
  entry_point<decltype(&::cuStreamGetId)> cuStreamGetId;
  entry_point<decltype(&::cuLaunchHostFunc)> cuLaunchHostFunc;
  entry_point<decltype(&::cuEventCreate)> cuEventCreate;
  entry_point<decltype(&::cuEventDestroy)> cuEventDestroy;
  entry_point<decltype(&::cuEventRecord)> cuEventRecord;
  entry_point<decltype(&::cuEventRecordWithFlags)> cuEventRecordWithFlags;
  entry_point<decltype(&::cuEventQuery)> cuEventQuery;
  entry_point<decltype(&::cuEventSynchronize)> cuEventSynchronize;
  entry_point<decltype(&::cuEventElapsedTime)> cuEventElapsedTime;
  entry_point<decltype(&::cuMemAlloc)> cuMemAlloc;
  entry_point<decltype(&::cuMemFree)> cuMemFree;
  entry_point<decltype(&::cuMemAllocPitch)> cuMemAllocPitch;
  entry_point<decltype(&::cuMemGetInfo)> cuMemGetInfo;
  entry_point<decltype(&::cuMemAllocAsync)> cuMemAllocAsync;
  entry_point<decltype(&::cuMemAllocFromPoolAsync)> cuMemAllocFromPoolAsync;
  entry_point<decltype(&::cuMemFreeAsync)> cuMemFreeAsync;
  entry_point<decltype(&::cuMemHostAlloc)> cuMemHostAlloc;
  entry_point<decltype(&::cuMemFreeHost)> cuMemFreeHost;
  entry_point<decltype(&::cuMemHostGetDevicePointer)> cuMemHostGetDevicePointer;
  entry_point<decltype(&::cuMemHostRegister)> cuMemHostRegister;
  entry_point<decltype(&::cuMemHostUnregister)> cuMemHostUnregister;
  entry_point<decltype(&::cuMemAllocManaged)> cuMemAllocManaged;
  entry_point<decltype(&::cuMemPrefetchAsync)> cuMemPrefetchAsync;
  entry_point<decltype(&::cuMemAdvise)> cuMemAdvise;
  entry_point<decltype(&::cuMemRangeGetAttribute)> cuMemRangeGetAttribute;
  entry_point<decltype(&::cuMemcpy)> cuMemcpy;
  entry_point<decltype(&::cuMemcpyAsync)> cuMemcpyAsync;
  entry_point<decltype(&::cuMemcpy2D)> cuMemcpy2D;
  entry_point<decltype(&::cuMemcpy2DAsync)> cuMemcpy2DAsync;
  entry_point<decltype(&::cuMemsetD8)> cuMemsetD8;
  entry_point<decltype(&::cuMemsetD16)> cuMemsetD16;
  entry_point<decltype(&::cuMemsetD32)> cuMemsetD32;
  entry_point<decltype(&::cuMemsetD8Async)> cuMemsetD8Async;
  entry_point<decltype(&::cuMemsetD16Async)> cuMemsetD16Async;
  entry_point<decltype(&::cuMemsetD32Async)> cuMemsetD32Async;
  entry_point<decltype(&::cuMemPoolCreate)> cuMemPoolCreate;
  entry_point<decltype(&::cuMemPoolDestroy)> cuMemPoolDestroy;
  entry_point<decltype(&::cuDeviceGetDefaultMemPool)> cuDeviceGetDefaultMemPool;
  entry_point<decltype(&::cuMemPoolTrimTo)> cuMemPoolTrimTo;
  entry_point<decltype(&::cuMemPoolGetAttribute)> cuMemPoolGetAttribute;
  entry_point<decltype(&::cuMemPoolSetAttribute)> cuMemPoolSetAttribute;
  entry_point<decltype(&::cuMemPoolSetAccess)> cuMemPoolSetAccess;
  entry_point<decltype(&::cuMemPoolGetAccess)> cuMemPoolGetAccess;
  entry_point<decltype(&::cuMemPoolExportToShareableHandle)> cuMemPoolExportToShareableHandle;
  entry_point<decltype(&::cuMemPoolImportFromShareableHandle)> cuMemPoolImportFromShareableHandle;
  entry_point<decltype(&::cuMemPoolExportPointer)> cuMemPoolExportPointer;
  entry_point<decltype(&::cuMemPoolImportPointer)> cuMemPoolImportPointer;
  entry_point<decltype(&::cuPointerGetAttributes)> cuPointerGetAttributes;
  entry_point<decltype(&::cuModuleLoadDataEx)> cuModuleLoadDataEx;
  entry_point<decltype(&::cuModuleUnload)> cuModuleUnload;
  entry_point<decltype(&::cuModuleGetFunction)> cuModuleGetFunction;
  entry_point<decltype(&::cuModuleGetGlobal)> cuModuleGetGlobal;
  entry_point<decltype(&::cuModuleGetFunctionCount)> cuModuleGetFunctionCount;
  entry_point<decltype(&::cuModuleEnumerateFunctions)> cuModuleEnumerateFunctions;
  entry_point<decltype(&::cuFuncGetParamInfo)> cuFuncGetParamInfo;
  entry_point<decltype(&::cuFuncGetName)> cuFuncGetName;
  entry_point<decltype(&::cuFuncGetAttribute)> cuFuncGetAttribute;
  entry_point<decltype(&::cuFuncSetAttribute)> cuFuncSetAttribute;
  entry_point<decltype(&::cuFuncSetCacheConfig)> cuFuncSetCacheConfig;
  entry_point<decltype(&::cuLaunchKernel)> cuLaunchKernel;
  entry_point<decltype(&::cuLaunchKernelEx)> cuLaunchKernelEx;
  entry_point<decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor)>
      cuOccupancyMaxActiveBlocksPerMultiprocessor;
  entry_point<decltype(&::cuOccupancyMaxPotentialBlockSize)> cuOccupancyMaxPotentialBlockSize;
  entry_point<decltype(&::cuOccupancyMaxActiveClusters)> cuOccupancyMaxActiveClusters;
  entry_point<decltype(&::cuLibraryLoadData)> cuLibraryLoadData;
  entry_point<decltype(&::cuLibraryUnload)> cuLibraryUnload;
  entry_point<decltype(&::cuLibraryGetKernel)> cuLibraryGetKernel;
  entry_point<decltype(&::cuLibraryGetKernelCount)> cuLibraryGetKernelCount;
  entry_point<decltype(&::cuLibraryEnumerateKernels)> cuLibraryEnumerateKernels;
  entry_point<decltype(&::cuKernelGetParamInfo)> cuKernelGetParamInfo;
  entry_point<decltype(&::cuKernelGetName)> cuKernelGetName;
  entry_point<decltype(&::cuKernelGetAttribute)> cuKernelGetAttribute;
  entry_point<decltype(&::cuKernelGetFunction)> cuKernelGetFunction;
  entry_point<decltype(&::cuKernelSetAttribute)> cuKernelSetAttribute;
  entry_point<decltype(&::cuGraphCreate)> cuGraphCreate;
  entry_point<decltype(&::cuGraphDestroy)> cuGraphDestroy;
  entry_point<decltype(&::cuGraphClone)> cuGraphClone;
  entry_point<decltype(&::cuGraphInstantiateWithFlags)> cuGraphInstantiateWithFlags;
  entry_point<decltype(&::cuGraphExecDestroy)> cuGraphExecDestroy;
  entry_point<decltype(&::cuGraphLaunch)> cuGraphLaunch;
  entry_point<decltype(&::cuGraphUpload)> cuGraphUpload;
  entry_point<decltype(&::cuGraphExecUpdate)> cuGraphExecUpdate;
  entry_point<decltype(&::cuGraphAddKernelNode)> cuGraphAddKernelNode;
  entry_point<decltype(&::cuGraphAddMemcpyNode)> cuGraphAddMemcpyNode;
  entry_point<decltype(&::cuGraphAddMemsetNode)> cuGraphAddMemsetNode;
  entry_point<decltype(&::cuGraphAddHostNode)> cuGraphAddHostNode;
  entry_point<decltype(&::cuGraphAddEventRecordNode)> cuGraphAddEventRecordNode;
  entry_point<decltype(&::cuGraphAddEventWaitNode)> cuGraphAddEventWaitNode;
  entry_point<decltype(&::cuGraphAddChildGraphNode)> cuGraphAddChildGraphNode;
  entry_point<decltype(&::cuGraphAddEmptyNode)> cuGraphAddEmptyNode;
  entry_point<decltype(&::cuGraphAddMemAllocNode)> cuGraphAddMemAllocNode;
  entry_point<decltype(&::cuGraphAddMemFreeNode)> cuGraphAddMemFreeNode;
  entry_point<decltype(&::cuGraphGetNodes)> cuGraphGetNodes;
  entry_point<decltype(&::cuGraphGetEdges)> cuGraphGetEdges;
  entry_point<decltype(&::cuGraphAddDependencies)> cuGraphAddDependencies;
  entry_point<decltype(&::cuGraphNodeGetType)> cuGraphNodeGetType;
  entry_point<decltype(&::cuGraphExecKernelNodeSetParams)> cuGraphExecKernelNodeSetParams;
  entry_point<decltype(&::cuGraphExecMemcpyNodeSetParams)> cuGraphExecMemcpyNodeSetParams;
  entry_point<decltype(&::cuGraphExecMemsetNodeSetParams)> cuGraphExecMemsetNodeSetParams;
  entry_point<decltype(&::cuGraphNodeSetEnabled)> cuGraphNodeSetEnabled;
  entry_point<decltype(&::cuGraphNodeGetEnabled)> cuGraphNodeGetEnabled;
  entry_point<decltype(&::cuGraphConditionalHandleCreate)> cuGraphConditionalHandleCreate;
  entry_point<decltype(&::cuGraphAddNode)> cuGraphAddNode;
  entry_point<decltype(&::cuStreamBeginCapture)> cuStreamBeginCapture;
  entry_point<decltype(&::cuStreamEndCapture)> cuStreamEndCapture;
  entry_point<decltype(&::cuStreamIsCapturing)> cuStreamIsCapturing;
  entry_point<decltype(&::cuStreamGetCaptureInfo)> cuStreamGetCaptureInfo;
  entry_point<decltype(&::cuUserObjectCreate)> cuUserObjectCreate;
  entry_point<decltype(&::cuUserObjectRelease)> cuUserObjectRelease;
  entry_point<decltype(&::cuGraphRetainUserObject)> cuGraphRetainUserObject;
  entry_point<decltype(&::cuGraphDebugDotPrint)> cuGraphDebugDotPrint;
  entry_point<decltype(&::cuCtxEnablePeerAccess)> cuCtxEnablePeerAccess;
  entry_point<decltype(&::cuCtxDisablePeerAccess)> cuCtxDisablePeerAccess;
  entry_point<decltype(&::cuMemcpyPeer)> cuMemcpyPeer;
  entry_point<decltype(&::cuMemcpyPeerAsync)> cuMemcpyPeerAsync;
  entry_point<decltype(&::cuIpcGetMemHandle)> cuIpcGetMemHandle;
  entry_point<decltype(&::cuIpcOpenMemHandle)> cuIpcOpenMemHandle;
  entry_point<decltype(&::cuIpcCloseMemHandle)> cuIpcCloseMemHandle;
  entry_point<decltype(&::cuIpcGetEventHandle)> cuIpcGetEventHandle;
  entry_point<decltype(&::cuIpcOpenEventHandle)> cuIpcOpenEventHandle;
};

/// Loads the driver library named by `spec` ("" or unset: libcuda.so.1; "software": the
/// bundled software driver; anything else: a path), calls cuInit(0) and fills a table.
/// Throws cuwrap::error naming what went wrong: no library (the dlerror text), not a driver,
/// the toolkit stub, no device. Each call loads anew; use driver() for the process's table.
[[nodiscard]] const driver_table& load_driver(const char* spec);

/// Loads the driver that CUWRAP_DRIVER names, once per process (thread-safe; a failed load is
/// tried again on the next call), and points every entry of process_driver_table at it.
/// Returns the loaded table.
[[nodiscard]] const driver_table& load_process_driver();

/// The process's table. Until the driver is loaded, each entry points to a function that
/// calls load_process_driver() (which throws as load_driver() does) and then the loaded
/// entry; once loaded, each entry is the driver's function. So a call costs one load and an
/// indirect call, with no "is it loaded yet" check.
extern driver_table process_driver_table;

/// The process's driver table (process_driver_table).
[[nodiscard]] inline const driver_table& driver() noexcept { return process_driver_table; }

/// What was loaded: the library's path and the version cuDriverGetVersion reported.
struct loaded_driver_info {
  std::string path;  ///< the file dlopen resolved
  int version = 0;   ///< 1000 * major + 10 * minor
};

/// One row of the table, in member order: the name cuGetProcAddress is asked for, the name
/// cuda.h binds it to (the exported symbol, e.g. "cuCtxCreate_v4"), and the version.
struct driver_entry {
  const char* base_name;
  const char* exported_name;
  int version;
};

/// Every table row, in member order (for tests and diagnostics).
[[nodiscard]] std::span<const driver_entry> driver_entries() noexcept;

/// Information about the driver behind `table` (returned by load_driver(), or driver(), whose
/// driver this loads if it is not yet loaded).
[[nodiscard]] const loaded_driver_info& driver_info(const driver_table& table);

}  // namespace cuwrap::detail
