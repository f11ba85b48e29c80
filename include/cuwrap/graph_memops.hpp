// Memory operation nodes of graphs: the waits, writes and fences of a memop_batch
// (<cuwrap/stream_memops.hpp>) run when a graph runs (cuGraphAddBatchMemOpNode,
// cuGraphExecBatchMemOpNodeSetParams). Capturing a stream's wait_value / write_value / batch
// records the same nodes.
#pragma once

#include <source_location>

#include "cuwrap/graph.hpp"
#include "cuwrap/stream_memops.hpp"

namespace cuwrap {

/// Adds a node to `g` that runs the operations of `batch`, in order, in the graph's context
/// (one cuGraphAddBatchMemOpNode; the node keeps a copy). A wait holds back the nodes that come
/// after it until its condition holds. An empty batch throws cuwrap::usage_error before the
/// driver is called; the driver's errors name the node kind and the call site.
graph_node add_memops(graph_ref g, memop_batch& batch, dependencies after = {},
                      std::source_location where = std::source_location::current());

/// Replaces the addresses and values of memop node `node` in `exec` without re-instantiating
/// (cuGraphExecBatchMemOpNodeSetParams): `batch` must have the same operations, in the same
/// order, as the node (a wait's condition may change, its flush flag may not).
void set_memops(graph_exec_ref exec, graph_node node, memop_batch& batch,
                std::source_location where = std::source_location::current());

}  // namespace cuwrap
