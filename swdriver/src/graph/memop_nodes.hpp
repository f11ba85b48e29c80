// Batch memory operation nodes (CU_GRAPH_NODE_TYPE_BATCH_MEM_OP; graph/memop_nodes.cpp): what
// the generic node functions (node_params.cpp, exec_update.cpp) and stream capture
// (capture.cpp) need of them.
#pragma once

#include "graph/graph.hpp"

namespace swcu {

/// Checks `p` as cuGraphAddBatchMemOpNode does and sets node `n` (of that kind) from it: a
/// live context or NULL (the current one), at least one operation, flags 0, each operation as
/// cuStreamBatchMemOp_v2 checks it. CUDA_ERROR_INVALID_VALUE otherwise.
[[nodiscard]] CUresult set_memop_node(State& s, Node& n, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p);

/// Whether an executable graph's node `was` may take `is`'s operations
/// (cuGraphExecBatchMemOpNodeSetParams): the same context, count and operation types, the same
/// fences; waits may change address, value and condition (not CU_STREAM_WAIT_VALUE_FLUSH),
/// writes address and value.
[[nodiscard]] bool memop_update_allowed(const MemOpNode& was, const MemOpNode& is) noexcept;

/// cuGraphExecBatchMemOpNodeSetParams on `n`, an executable graph's node: `p` checked, then
/// taken when memop_update_allowed(); CUDA_ERROR_INVALID_VALUE otherwise.
[[nodiscard]] CUresult update_exec_memops(State& s, Node& n,
                                          const CUDA_BATCH_MEM_OP_NODE_PARAMS& p);

/// A node of checked operations `ops` in context `ctx` (a stream capture's).
void set_captured_memops(Node& n, CUcontext ctx, const std::vector<MemOp>& ops);

}  // namespace swcu
