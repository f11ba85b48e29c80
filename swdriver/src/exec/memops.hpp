// Stream memory operations as values: what cuStreamWaitValue*, cuStreamWriteValue* and
// cuStreamBatchMemOp enqueue (exec/stream_memops.cpp) and what a batch memory operation node of
// a graph runs (graph/memop_nodes.cpp). exec/memops.cpp checks and executes them.
#pragma once

#include <cstdint>

#include "core/api.hpp"
#include "core/state.hpp"
#include "sched/shapes.hpp"

namespace swcu {

/// Which ABI an export has: v1 (CUDA 8/9: no barrier operation) or v2 (CUDA 11.7).
enum class MemOpAbi { v1, v2 };

/// `p` decoded by its operation tag (an unknown tag is kept for check_memop() to refuse).
[[nodiscard]] MemOp decode_memop(const CUstreamBatchMemOpParams& p) noexcept;

/// True for CU_STREAM_MEM_OP_WAIT_VALUE_32/64.
[[nodiscard]] bool is_wait(const MemOp& m) noexcept;

/// The checks cuda.h documents (CUDA_ERROR_INVALID_VALUE): a known operation, its flags, an
/// aligned address inside memory the device can reach that is not managed memory.
[[nodiscard]] CUresult check_memop(State& s, MemOpAbi abi, const MemOp& m);

/// A wait: whether its condition holds on the memory now (or the memory is gone, so that
/// run_memop() reports it). True for every other operation.
[[nodiscard]] bool memop_ready(State& s, int device, const MemOp& m);

/// Executes `m` on `device` (a wait whose condition held): the store of a write, the fence of a
/// flush or barrier. CUDA_ERROR_ILLEGAL_ADDRESS when the memory was freed or made unreachable.
[[nodiscard]] CUresult run_memop(State& s, int device, const MemOp& m);

}  // namespace swcu
