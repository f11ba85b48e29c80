// Feature detection: whether the loaded driver provides what a group of cuwrap calls needs,
// before a framework chooses a code path.
#pragma once

#include <source_location>
#include <string_view>

namespace cuwrap {

/// Driver features a program may want to test for. Each needs a driver version and a set of
/// entry points (listed in docs/devices-and-contexts.md#feature-detection).
enum class feature {
  memory_pools,              ///< stream-ordered allocation pools (cuMemPoolCreate, CUDA 11.2)
  virtual_memory,            ///< cuMemCreate / cuMemMap (CUDA 10.2)
  libraries,                 ///< context-independent loading (cuLibraryLoadData, CUDA 12.0)
  tensor_maps,               ///< TMA descriptors (cuTensorMapEncodeTiled, CUDA 12.0)
  multicast,                 ///< multicast objects (cuMulticastCreate, CUDA 12.1)
  conditional_graph_nodes,   ///< conditional nodes (cuGraphConditionalHandleCreate, CUDA 12.3)
  green_contexts,            ///< SM partitions (cuGreenCtxCreate, CUDA 12.4)
  stream_memory_operations,  ///< cuStreamWaitValue32 / WriteValue32 / BatchMemOp
  context_events,            ///< cuCtxRecordEvent / cuCtxWaitEvent (CUDA 12.5)
  checkpoint,                ///< cuCheckpointProcess* (CUDA 12.8)
  driver_logs,               ///< cuLogsRegisterCallback and the rest (CUDA 12.9)
  profiler,                  ///< cuProfilerStart / cuProfilerStop
};

/// True when the loaded driver supports `f`: its version is at least the feature's and every
/// entry point cuwrap uses for it was loaded (an old driver, or one whose cuGetProcAddress
/// lacks a function, gets stand-ins that throw). A driver-level answer: a device may still
/// lack the hardware (multicast needs CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED). Loads the
/// driver on first use; throws cuwrap::error at `where` if there is none. No driver call after
/// the first.
[[nodiscard]] bool supports(feature f,
                            std::source_location where = std::source_location::current());

/// The oldest driver version (1000 * major + 10 * minor) with `f`.
[[nodiscard]] int minimum_driver_version(feature f) noexcept;

/// The feature's name as spelled in the enum ("green_contexts").
[[nodiscard]] std::string_view to_string(feature f) noexcept;

}  // namespace cuwrap
