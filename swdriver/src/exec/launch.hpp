// Kernel launches: the launch log, the host functions registered for kernels (the control API
// in control.h), the SWCUDA_KERNELS plug-ins, and the occupancy model.
//
// A launch is checked and its arguments packed by the kernel's layout when it is called; the
// record goes to the launch log at once; the registered host function runs later, as a host
// operation of the stream (sched.hpp), in stream order and without the state lock.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "core/api.hpp"
#include "sched/sched.hpp"
#include "swcuda/control.h"

namespace swcu {

/// The occupancy model: 2048 threads and 32 blocks per SM, 228 KiB of shared memory per SM,
/// each block taking its static and dynamic shared memory plus 1 KiB the system reserves.
/// Registers are not modelled.
inline constexpr int kSmCount = static_cast<int>(kDeviceSmCount);  // the whole device
inline constexpr int kThreadsPerSm = 2048;
inline constexpr int kBlocksPerSm = 32;
inline constexpr std::size_t kSharedPerSm = 233472;
inline constexpr std::size_t kReservedSharedPerBlock = 1024;
inline constexpr int kWarpSize = 32;

/// Blocks of `block_size` threads with `dynamic` bytes of dynamic shared memory that fit on one
/// SM: 0 when the kernel cannot run so (more threads than it allows, more dynamic shared
/// memory than its limit).
[[nodiscard]] int active_blocks_per_sm(std::size_t static_shared, int max_threads, int max_dynamic,
                                       int block_size, std::size_t dynamic) noexcept;

/// The checks cuda.h documents for CUaccessPolicyWindow (exec/stream_attributes.cpp): at most
/// CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE bytes, a hit ratio in [0, 1], a known hit
/// property, a miss property NORMAL or STREAMING. Streams and launches share them.
[[nodiscard]] bool valid_access_policy_window(const CUaccessPolicyWindow& w) noexcept;

/// One kernel launch as the log records it and its host function sees it.
struct LaunchSpec {
  std::string kernel;  ///< entry name
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};
  /// The cluster size was given (launch attribute or the kernel's .reqnctapercluster)
  bool explicit_cluster = false;
  unsigned shared_bytes = 0;
  bool cooperative = false;
  /// SMs of the launching context (a green context's partition): %nsmid and residency
  unsigned sm_count = kDeviceSmCount;
  int priority = 0;
  CUstream stream = nullptr;         ///< as the program named it
  std::vector<std::size_t> offsets;  ///< empty when the layout is unknown
  std::vector<std::size_t> sizes;
  std::vector<unsigned char> params;  ///< packed
};

/// Appends the launch to the launch log and returns the stream operation that runs the kernel's
/// registered host function (when it executes, without the lock). The caller pushes it into the
/// stream's queue (sched.hpp): cuLaunchKernel*, and graph kernel nodes when a graph runs.
[[nodiscard]] Op launch_op(LaunchSpec spec);

/// True when a host function is registered for `kernel` (it then runs instead of the PTX).
[[nodiscard]] bool has_host_function(const std::string& kernel);

/// Appends a launch that the interpreter runs to the launch log.
void log_launch(const LaunchSpec& spec);

// The control API members (control.h, version 3).
int register_kernel(const char* name, swcu_kernel_fn fn, void* user) noexcept;
std::size_t launch_log_size() noexcept;
int launch_log_entry(std::size_t index, swcu_launch* out) noexcept;
void clear_launch_log() noexcept;

/// Runs one launch at once on the calling thread, without the state lock (a graph's kernel
/// node, exec_launch.cpp): records it in the launch log and calls the kernel's registered host
/// function, as a launch operation does. `launch`'s pointers need only be valid during the call.
void run_kernel_now(const swcu_launch& launch) noexcept;

/// Loads the SWCUDA_KERNELS plug-ins, once per process (cuInit, without the state lock): the
/// first result, whatever later calls ask. A failure prints one line to stderr, once.
[[nodiscard]] CUresult load_kernel_plugins() noexcept;

}  // namespace swcu
