// The driver entry-point table. Every cuwrap call into the CUDA driver goes through it:
// the table is filled once, lazily, from the driver library that CUWRAP_DRIVER selects,
// each entry requested with cuGetProcAddress_v2 at the ABI version that cuda.h binds its
// name to. Nothing in cuwrap links libcuda.
#pragma once

#include <cuda.h>

#include <span>
#include <string>

namespace cuwrap::detail {

/// One function pointer per driver entry point cuwrap uses. Members are named like the
/// functions in cuda.h (so `drv.cuMemAlloc(...)` calls the same ABI as `cuMemAlloc(...)`).
/// src/driver.cpp checks at compile time that every member's type is the cudaTypedefs.h
/// PFN type of the version it is requested at.
struct driver_table {
  decltype(&::cuInit) cuInit;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion;
  decltype(&::cuGetErrorName) cuGetErrorName;
  decltype(&::cuGetErrorString) cuGetErrorString;
  decltype(&::cuGetExportTable) cuGetExportTable;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount;
  decltype(&::cuDeviceGet) cuDeviceGet;
  decltype(&::cuDeviceGetName) cuDeviceGetName;
  decltype(&::cuDeviceGetUuid) cuDeviceGetUuid;
  decltype(&::cuDeviceTotalMem) cuDeviceTotalMem;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute;
  decltype(&::cuDeviceGetPCIBusId) cuDeviceGetPCIBusId;
  decltype(&::cuDeviceGetByPCIBusId) cuDeviceGetByPCIBusId;
  decltype(&::cuDeviceCanAccessPeer) cuDeviceCanAccessPeer;
  decltype(&::cuDeviceGetP2PAttribute) cuDeviceGetP2PAttribute;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain;
  decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease;
  decltype(&::cuDevicePrimaryCtxGetState) cuDevicePrimaryCtxGetState;
  decltype(&::cuDevicePrimaryCtxSetFlags) cuDevicePrimaryCtxSetFlags;
  decltype(&::cuDevicePrimaryCtxReset) cuDevicePrimaryCtxReset;
  decltype(&::cuCtxCreate) cuCtxCreate;
  decltype(&::cuCtxDestroy) cuCtxDestroy;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent;
  decltype(&::cuCtxGetDevice) cuCtxGetDevice;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize;
  decltype(&::cuCtxGetFlags) cuCtxGetFlags;
  decltype(&::cuCtxSetFlags) cuCtxSetFlags;
  decltype(&::cuCtxGetApiVersion) cuCtxGetApiVersion;
  decltype(&::cuCtxGetId) cuCtxGetId;
  decltype(&::cuCtxGetLimit) cuCtxGetLimit;
  decltype(&::cuCtxSetLimit) cuCtxSetLimit;
  decltype(&::cuCtxGetStreamPriorityRange) cuCtxGetStreamPriorityRange;
  decltype(&::cuCtxGetCacheConfig) cuCtxGetCacheConfig;
  decltype(&::cuCtxSetCacheConfig) cuCtxSetCacheConfig;
  decltype(&::cuStreamCreate) cuStreamCreate;
  decltype(&::cuStreamCreateWithPriority) cuStreamCreateWithPriority;
  decltype(&::cuStreamDestroy) cuStreamDestroy;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize;
  decltype(&::cuStreamQuery) cuStreamQuery;
  decltype(&::cuStreamWaitEvent) cuStreamWaitEvent;
  decltype(&::cuStreamGetPriority) cuStreamGetPriority;
  decltype(&::cuStreamGetFlags) cuStreamGetFlags;
  decltype(&::cuStreamGetCtx) cuStreamGetCtx;
  decltype(&::cuStreamGetId) cuStreamGetId;
  decltype(&::cuLaunchHostFunc) cuLaunchHostFunc;
  decltype(&::cuEventCreate) cuEventCreate;
  decltype(&::cuEventDestroy) cuEventDestroy;
  decltype(&::cuEventRecord) cuEventRecord;
  decltype(&::cuEventRecordWithFlags) cuEventRecordWithFlags;
  decltype(&::cuEventQuery) cuEventQuery;
  decltype(&::cuEventSynchronize) cuEventSynchronize;
  decltype(&::cuEventElapsedTime) cuEventElapsedTime;
  decltype(&::cuMemAlloc) cuMemAlloc;
  decltype(&::cuMemFree) cuMemFree;
  decltype(&::cuMemAllocPitch) cuMemAllocPitch;
  decltype(&::cuMemGetInfo) cuMemGetInfo;
  decltype(&::cuMemAllocAsync) cuMemAllocAsync;
  decltype(&::cuMemAllocFromPoolAsync) cuMemAllocFromPoolAsync;
  decltype(&::cuMemFreeAsync) cuMemFreeAsync;
  decltype(&::cuMemHostAlloc) cuMemHostAlloc;
  decltype(&::cuMemFreeHost) cuMemFreeHost;
  decltype(&::cuMemHostGetDevicePointer) cuMemHostGetDevicePointer;
  decltype(&::cuMemHostRegister) cuMemHostRegister;
  decltype(&::cuMemHostUnregister) cuMemHostUnregister;
  decltype(&::cuMemAllocManaged) cuMemAllocManaged;
  decltype(&::cuMemPrefetchAsync) cuMemPrefetchAsync;
  decltype(&::cuMemAdvise) cuMemAdvise;
  decltype(&::cuMemRangeGetAttribute) cuMemRangeGetAttribute;
  decltype(&::cuMemcpy) cuMemcpy;
  decltype(&::cuMemcpyAsync) cuMemcpyAsync;
  decltype(&::cuMemcpy2D) cuMemcpy2D;
  decltype(&::cuMemcpy2DAsync) cuMemcpy2DAsync;
  decltype(&::cuMemsetD8) cuMemsetD8;
  decltype(&::cuMemsetD16) cuMemsetD16;
  decltype(&::cuMemsetD32) cuMemsetD32;
  decltype(&::cuMemsetD8Async) cuMemsetD8Async;
  decltype(&::cuMemsetD16Async) cuMemsetD16Async;
  decltype(&::cuMemsetD32Async) cuMemsetD32Async;
  decltype(&::cuMemPoolCreate) cuMemPoolCreate;
  decltype(&::cuMemPoolDestroy) cuMemPoolDestroy;
  decltype(&::cuDeviceGetDefaultMemPool) cuDeviceGetDefaultMemPool;
  decltype(&::cuMemPoolTrimTo) cuMemPoolTrimTo;
  decltype(&::cuMemPoolGetAttribute) cuMemPoolGetAttribute;
  decltype(&::cuMemPoolSetAttribute) cuMemPoolSetAttribute;
  decltype(&::cuMemPoolSetAccess) cuMemPoolSetAccess;
  decltype(&::cuMemPoolGetAccess) cuMemPoolGetAccess;
  decltype(&::cuMemPoolExportToShareableHandle) cuMemPoolExportToShareableHandle;
  decltype(&::cuMemPoolImportFromShareableHandle) cuMemPoolImportFromShareableHandle;
  decltype(&::cuMemPoolExportPointer) cuMemPoolExportPointer;
  decltype(&::cuMemPoolImportPointer) cuMemPoolImportPointer;
  decltype(&::cuPointerGetAttributes) cuPointerGetAttributes;
  decltype(&::cuModuleLoadDataEx) cuModuleLoadDataEx;
  decltype(&::cuModuleUnload) cuModuleUnload;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction;
  decltype(&::cuModuleGetGlobal) cuModuleGetGlobal;
  decltype(&::cuModuleGetFunctionCount) cuModuleGetFunctionCount;
  decltype(&::cuModuleEnumerateFunctions) cuModuleEnumerateFunctions;
  decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo;
  decltype(&::cuFuncGetName) cuFuncGetName;
  decltype(&::cuFuncGetAttribute) cuFuncGetAttribute;
  decltype(&::cuFuncSetAttribute) cuFuncSetAttribute;
  decltype(&::cuFuncSetCacheConfig) cuFuncSetCacheConfig;
  decltype(&::cuLaunchKernel) cuLaunchKernel;
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor)
      cuOccupancyMaxActiveBlocksPerMultiprocessor;
  decltype(&::cuOccupancyMaxPotentialBlockSize) cuOccupancyMaxPotentialBlockSize;
  decltype(&::cuOccupancyMaxActiveClusters) cuOccupancyMaxActiveClusters;
  decltype(&::cuLibraryLoadData) cuLibraryLoadData;
  decltype(&::cuLibraryUnload) cuLibraryUnload;
  decltype(&::cuLibraryGetKernel) cuLibraryGetKernel;
  decltype(&::cuLibraryGetKernelCount) cuLibraryGetKernelCount;
  decltype(&::cuLibraryEnumerateKernels) cuLibraryEnumerateKernels;
  decltype(&::cuKernelGetParamInfo) cuKernelGetParamInfo;
  decltype(&::cuKernelGetName) cuKernelGetName;
  decltype(&::cuKernelGetAttribute) cuKernelGetAttribute;
  decltype(&::cuKernelGetFunction) cuKernelGetFunction;
  decltype(&::cuKernelSetAttribute) cuKernelSetAttribute;
  decltype(&::cuGraphCreate) cuGraphCreate;
  decltype(&::cuGraphDestroy) cuGraphDestroy;
  decltype(&::cuGraphClone) cuGraphClone;
  decltype(&::cuGraphInstantiateWithFlags) cuGraphInstantiateWithFlags;
  decltype(&::cuGraphExecDestroy) cuGraphExecDestroy;
  decltype(&::cuGraphLaunch) cuGraphLaunch;
  decltype(&::cuGraphUpload) cuGraphUpload;
  decltype(&::cuGraphExecUpdate) cuGraphExecUpdate;
  decltype(&::cuGraphAddKernelNode) cuGraphAddKernelNode;
  decltype(&::cuGraphAddMemcpyNode) cuGraphAddMemcpyNode;
  decltype(&::cuGraphAddMemsetNode) cuGraphAddMemsetNode;
  decltype(&::cuGraphAddHostNode) cuGraphAddHostNode;
  decltype(&::cuGraphAddEventRecordNode) cuGraphAddEventRecordNode;
  decltype(&::cuGraphAddEventWaitNode) cuGraphAddEventWaitNode;
  decltype(&::cuGraphAddChildGraphNode) cuGraphAddChildGraphNode;
  decltype(&::cuGraphAddEmptyNode) cuGraphAddEmptyNode;
  decltype(&::cuGraphAddMemAllocNode) cuGraphAddMemAllocNode;
  decltype(&::cuGraphAddMemFreeNode) cuGraphAddMemFreeNode;
  decltype(&::cuGraphGetNodes) cuGraphGetNodes;
  decltype(&::cuGraphGetEdges) cuGraphGetEdges;
  decltype(&::cuGraphAddDependencies) cuGraphAddDependencies;
  decltype(&::cuGraphNodeGetType) cuGraphNodeGetType;
  decltype(&::cuGraphExecKernelNodeSetParams) cuGraphExecKernelNodeSetParams;
  decltype(&::cuGraphExecMemcpyNodeSetParams) cuGraphExecMemcpyNodeSetParams;
  decltype(&::cuGraphExecMemsetNodeSetParams) cuGraphExecMemsetNodeSetParams;
  decltype(&::cuGraphNodeSetEnabled) cuGraphNodeSetEnabled;
  decltype(&::cuGraphNodeGetEnabled) cuGraphNodeGetEnabled;
  decltype(&::cuGraphConditionalHandleCreate) cuGraphConditionalHandleCreate;
  decltype(&::cuGraphAddNode) cuGraphAddNode;
  decltype(&::cuStreamBeginCapture) cuStreamBeginCapture;
  decltype(&::cuStreamEndCapture) cuStreamEndCapture;
  decltype(&::cuStreamIsCapturing) cuStreamIsCapturing;
  decltype(&::cuStreamGetCaptureInfo) cuStreamGetCaptureInfo;
  decltype(&::cuUserObjectCreate) cuUserObjectCreate;
  decltype(&::cuUserObjectRelease) cuUserObjectRelease;
  decltype(&::cuGraphRetainUserObject) cuGraphRetainUserObject;
  decltype(&::cuGraphDebugDotPrint) cuGraphDebugDotPrint;
  decltype(&::cuCtxEnablePeerAccess) cuCtxEnablePeerAccess;
  decltype(&::cuCtxDisablePeerAccess) cuCtxDisablePeerAccess;
  decltype(&::cuMemcpyPeer) cuMemcpyPeer;
  decltype(&::cuMemcpyPeerAsync) cuMemcpyPeerAsync;
  decltype(&::cuIpcGetMemHandle) cuIpcGetMemHandle;
  decltype(&::cuIpcOpenMemHandle) cuIpcOpenMemHandle;
  decltype(&::cuIpcCloseMemHandle) cuIpcCloseMemHandle;
  decltype(&::cuIpcGetEventHandle) cuIpcGetEventHandle;
  decltype(&::cuIpcOpenEventHandle) cuIpcOpenEventHandle;
};

/// Loads the driver library named by `spec` ("" or unset: libcuda.so.1; "software": the
/// bundled software driver; anything else: a path), calls cuInit(0) and fills a table.
/// Throws cuwrap::error naming what went wrong: no library (the dlerror text), not a driver,
/// the toolkit stub, no device. Each call loads anew; use driver() for the process's table.
[[nodiscard]] const driver_table& load_driver(const char* spec);

/// Loads the driver that CUWRAP_DRIVER names, once per process (thread-safe).
[[nodiscard]] const driver_table& load_process_driver();

/// The process's driver table, loaded on first use. Throws as load_driver() does.
[[nodiscard]] inline const driver_table& driver() {
  static const driver_table& table = load_process_driver();
  return table;
}

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

/// Information about the driver behind `table` (as returned by load_driver()).
[[nodiscard]] const loaded_driver_info& driver_info(const driver_table& table);

}  // namespace cuwrap::detail
