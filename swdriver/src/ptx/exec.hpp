// Executes one kernel launch of a decoded program (program.hpp) on the calling thread and up to
// Launch::workers - 1 host threads of its own.
//
// CTAs are co-resident: up to Launch::max_resident of them are started at once (a new one is
// admitted when one finishes), and the workers take turns on them, so a CTA whose threads spin
// on memory that another CTA writes yields to it. A CTA runs on one worker at a time. Its threads
// are grouped in warps of 32; a warp executes the lanes that share the lowest program counter
// together (so lanes that diverged reconverge where their paths meet, as nvcc lays code out),
// and switches to another warp when all its lanes wait (at a CTA barrier, at a warp collective
// whose members have not arrived), when it polls memory that does not change, or after a time
// slice. Global memory accesses are host atomics where the PTX memory model needs them. Every
// memory access is checked against the launch's memory map; the first fault ends the launch
// with a message naming the kernel, the PTX line, the block, the thread and the address.
//
// Generic addresses: global memory is the driver's real host memory; shared, local and
// parameter memory appear in windows above every user-space address (kSharedWindow, ...).
// Shared addresses are 32-bit: below 1 << 24 (kClusterRankShift) the executing CTA's own
// memory (.shared::cta); (rank + 1) << 24 | offset the memory of the cluster's CTA `rank`
// (.shared::cluster, what mapa returns). The generic form adds kSharedWindow to either.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ptx/program.hpp"
#include "ptx/texture.hpp"

namespace swcu::ptx {

inline constexpr std::uint64_t kSharedWindow = 1ull << 48;  ///< generic shared addresses
inline constexpr std::uint64_t kLocalWindow = 2ull << 48;   ///< generic local addresses
inline constexpr std::uint64_t kParamWindow = 3ull << 48;   ///< generic parameter addresses
inline constexpr std::uint64_t kFunctionBase = 4ull << 48;  ///< function "addresses"
inline constexpr std::uint64_t kWindowSize = 1ull << 48;
/// A .shared::cluster address holds the target CTA's rank + 1 from this bit (0: its own CTA).
inline constexpr unsigned kClusterRankShift = 24;
/// In the parameter space: addresses of the kernel's parameters carry this bit.
inline constexpr std::uint64_t kKernelParamTag = 1ull << 40;
/// The address of function `index` (mov of a function name, relocations).
[[nodiscard]] constexpr std::uint64_t function_address(std::uint32_t index) noexcept {
  return kFunctionBase + 16ull * index;
}

/// A range of global memory a kernel may access: [base, end).
struct MemoryRange {
  std::uint64_t base = 0;
  std::uint64_t end = 0;
  bool read_only = false;  ///< a store or atomic faults (memory the device may only read)
};

/// Why a launch ended early.
enum class Fault : std::uint8_t {
  none,
  illegal_address,      ///< outside every allocation or window (CUDA_ERROR_ILLEGAL_ADDRESS)
  misaligned,           ///< CUDA_ERROR_MISALIGNED_ADDRESS
  trap,                 ///< trap, brkpt (CUDA_ERROR_LAUNCH_FAILED)
  assertion,            ///< __assertfail (CUDA_ERROR_ASSERT)
  deadlock,             ///< a barrier that can never complete (CUDA_ERROR_LAUNCH_FAILED)
  timeout,              ///< SWCUDA_KERNEL_TIMEOUT (CUDA_ERROR_LAUNCH_TIMEOUT)
  stack_overflow,       ///< local memory past its limit (CUDA_ERROR_HARDWARE_STACK_ERROR)
  illegal_instruction,  ///< CUDA_ERROR_ILLEGAL_INSTRUCTION
};

/// One launch.
struct Launch {
  const Program* program = nullptr;
  std::uint32_t entry = 0;  ///< index into program->functions
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  /// The cluster's CTAs (grid divisible by it, at most 16): they are admitted to the resident
  /// set together and share their shared memory (distributed shared memory).
  unsigned cluster[3] = {1, 1, 1};
  bool explicit_cluster = false;  ///< %is_explicit_cluster: a cluster size was given
  std::uint32_t dynamic_shared = 0;
  std::vector<unsigned char> params;   ///< packed by the entry's layout
  std::vector<std::uint64_t> globals;  ///< the address of each Program::globals entry
  std::vector<MemoryRange> memory;     ///< sorted by base, not overlapping
  /// The device heap's blocks (device malloc), sorted, apart from `memory`: free() takes a block
  /// out while the launch runs.
  std::vector<MemoryRange> heap;
  std::uint64_t grid_id = 0;
  unsigned sm_count = 1;
  double timeout_seconds = 0;  ///< 0: none
  /// Host threads that run CTAs (the calling thread is one of them); at least 1.
  unsigned workers = 1;
  /// CTAs started at once (the resident set); 0: the whole grid.
  std::uint64_t max_resident = 0;
  /// Cooperative groups' grid workspace ({u32 wsSize; u32 barrier;} in global memory that the
  /// memory map covers), read through %envreg1 (high 32 bits) and %envreg2 (low 32 bits); 0
  /// outside a cooperative launch.
  std::uint64_t grid_workspace = 0;
  /// The context's live texture and surface objects, sorted by handle (tex, suld, ...).
  std::vector<Texture> textures;
  /// Device-side printf output (one formatted call). The callbacks are called from the
  /// launch's workers, one call at a time.
  std::function<void(const std::string&)> print;
  /// Device malloc/free: an address (0 when the heap is exhausted); free reports success. With
  /// several workers a freed block's memory must stay readable until execute() returns
  /// (another worker may still touch it).
  std::function<std::uint64_t(std::uint64_t)> malloc;
  std::function<bool(std::uint64_t)> free;
  /// cudaGraphSetConditional(handle, value): sets a conditional handle of the graph launch
  /// whose kernel node runs; false, with the reason in the string, when the kernel runs outside
  /// a graph launch or the handle is not its graph's (the launch then faults). Called from the
  /// launch's workers, one call at a time.
  std::function<bool(std::uint64_t, unsigned, std::string&)> set_conditional;
  /// %current_graph_exec (cudaGetCurrentGraphExec): the device graph the kernel runs as a node
  /// of; 0 outside one.
  std::uint64_t current_graph_exec = 0;
  /// The device runtime's cudaGraphLaunch(exec, stream): the cudaError_t it returns. Unset: the
  /// kernel runs outside a graph launch and the call returns cudaErrorInvalidValue. Called from
  /// the launch's workers, one call at a time.
  std::function<int(std::uint64_t, std::uint64_t)> graph_launch;
};

/// How a launch ended: Fault::none, or the fault and one line describing it.
struct Outcome {
  Fault fault = Fault::none;
  std::string message;
};

/// Runs the launch to completion or to its first fault (when several workers fault, the first
/// one reported wins).
[[nodiscard]] Outcome execute(Launch& launch);

}  // namespace swcu::ptx
