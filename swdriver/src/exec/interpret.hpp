// Kernel launches that run PTX: the bridge between the driver (modules, memory, streams) and
// the interpreter (ptx/exec.hpp), which knows nothing of the driver.
//
// A launch picks what runs when it is enqueued: a host function registered for the kernel by
// name (control API, SWCUDA_KERNELS) first; else the kernel's PTX; else it fails with
// CUDA_ERROR_NOT_SUPPORTED and a message naming the kernel. The interpreter runs as device work
// of the stream, under the state lock, on SWCUDA_WORKERS host threads (its own workers never take
// the lock), with a snapshot of the live allocations as its memory map, as many CTAs resident
// at once as the occupancy model fits on the device (the whole grid for a cooperative launch,
// which also gets cooperative groups' grid workspace); a fault fails the stream's work with its
// CUresult, which breaks the context (sticky).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/api.hpp"
#include "exec/launch.hpp"

namespace swcu {

struct Function;  // module.hpp

/// Whether `f`'s kernel can be interpreted: CUDA_SUCCESS, or CUDA_ERROR_NOT_SUPPORTED with
/// `why` naming the kernel and the reason (no PTX, an instruction not run yet, an unresolved
/// function).
[[nodiscard]] CUresult check_interpretable(const Function& f, std::string& why);

/// The stream operation that runs `spec` (packed by `f`'s layout) through the interpreter.
[[nodiscard]] Op interpret_op(const Function& f, LaunchSpec spec);

/// What a kernel's cudaGraphSetConditional calls reach (ptx::Launch::set_conditional): sets the
/// handle's value, or returns false with the reason.
using ConditionSetter = std::function<bool(CUgraphConditionalHandle, unsigned, std::string&)>;

/// What a kernel's device graph calls reach (device graph launch, graph/device_launch.hpp):
/// cudaGetCurrentGraphExec's value and cudaGraphLaunch (exec, stream) returning its cudaError_t.
struct DeviceGraphCalls {
  std::uint64_t current = 0;  ///< the device graph the kernel runs as a node of; 0 if none
  std::function<int(std::uint64_t, std::uint64_t)> launch;  ///< unset: outside a graph
};

/// Runs `spec` of the kernel `handle` names (a CUfunction or CUkernel) in `ctx` now, under the
/// state lock (graph kernel nodes): the launch's CUresult. A kernel that cannot run prints why.
/// The kernel's cudaGraphSetConditional calls go to `set_conditional` (called from the
/// interpreter's workers while the caller holds the lock), its cudaGraphLaunch calls and
/// cudaGetCurrentGraphExec to `graph`.
[[nodiscard]] CUresult interpret_now(State& s, Context& ctx, CUfunction handle,
                                     const LaunchSpec& spec,
                                     const ConditionSetter& set_conditional = {},
                                     const DeviceGraphCalls& graph = {});

}  // namespace swcu
