// Checkpoint and restore of a CUDA process (cuCheckpointProcess*, CUDA 12.8, Linux): lock a
// process, bring its GPU state to host memory, restore it, unlock it. Used with CPU-side
// process checkpointing (CRIU) or to free a GPU for a while.
#pragma once

#include <source_location>
#include <span>
#include <string_view>

// lock() takes std::chrono::milliseconds: libstdc++'s <bits/chrono.h> has durations without the
// calendar and formatting parts of <chrono> (see event.hpp).
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

#include "cuwrap/device.hpp"

namespace cuwrap::checkpoint {

/// A process's state (CUprocessState).
enum class process_state {
  running = CU_PROCESS_STATE_RUNNING,            ///< the default
  locked = CU_PROCESS_STATE_LOCKED,              ///< CUDA calls of the process block
  checkpointed = CU_PROCESS_STATE_CHECKPOINTED,  ///< GPU state saved, GPU resources released
  failed = CU_PROCESS_STATE_FAILED,              ///< an uncorrectable checkpoint/restore error
};

/// The state's name ("running").
[[nodiscard]] std::string_view to_string(process_state state) noexcept;

/// Moves a restored process from one GPU to another (CUcheckpointGpuPair).
struct gpu_remap {
  CUuuid from;  ///< the GPU that was checkpointed
  CUuuid to;    ///< the GPU to restore onto (same chip type, enough memory)
};

/// The state of process `pid` (cuCheckpointProcessGetState).
[[nodiscard]] process_state state(int pid,
                                  std::source_location where = std::source_location::current());
/// Locks a running process: its further CUDA calls block (cuCheckpointProcessLock). A zero
/// `timeout` waits as long as it takes. Throws cuwrap::error naming the state if the process
/// is not running.
void lock(int pid, std::chrono::milliseconds timeout = {},
          std::source_location where = std::source_location::current());
/// Brings a locked process's GPU memory to host memory and releases its GPU resources
/// (cuCheckpointProcessCheckpoint). The process is then checkpointed.
void save(int pid, std::source_location where = std::source_location::current());
/// Restores a checkpointed process, optionally onto other GPUs (every checkpointed GPU must
/// then be listed); the process is locked afterwards (cuCheckpointProcessRestore).
void restore(int pid, std::span<const gpu_remap> remap = {},
             std::source_location where = std::source_location::current());
/// Unlocks a locked process: its CUDA calls go on (cuCheckpointProcessUnlock).
void unlock(int pid, std::source_location where = std::source_location::current());
/// The thread id of the process's restore thread (cuCheckpointProcessGetRestoreThreadId).
[[nodiscard]] int restore_thread_id(int pid,
                                    std::source_location where = std::source_location::current());

}  // namespace cuwrap::checkpoint
