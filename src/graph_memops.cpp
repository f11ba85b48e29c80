// Memory operation nodes of graphs (<cuwrap/graph_memops.hpp>).
#include "cuwrap/graph_memops.hpp"

#include <string>

namespace cuwrap {
namespace {

CUDA_BATCH_MEM_OP_NODE_PARAMS node_params(CUcontext ctx, memop_batch& batch, const char* operation,
                                          std::source_location where) {
  if (batch.empty()) {
    throw usage_error(std::string{"cuwrap::"} + operation +
                          ": the memop_batch is empty (a node runs at least one operation)",
                      where);
  }
  CUDA_BATCH_MEM_OP_NODE_PARAMS p{};
  p.ctx = ctx;
  p.count = static_cast<unsigned>(batch.size());
  p.paramArray = batch.data();
  return p;
}

}  // namespace

graph_node add_memops(graph_ref g, memop_batch& batch, dependencies after,
                      std::source_location where) {
  detail::expect_not_moved_from(!g.empty(), "graph", "add_memops", where);
  const CUDA_BATCH_MEM_OP_NODE_PARAMS p = node_params(g.context(), batch, "add_memops", where);
  CUgraphNode n{};
  if (const CUresult r =
          detail::driver().cuGraphAddBatchMemOpNode(&n, g.get(), after.data(), after.size(), &p);
      r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuGraphAddBatchMemOpNode",
                        "adding a memory operation node", where);
  }
  return graph_node{n};
}

void set_memops(graph_exec_ref exec, graph_node node, memop_batch& batch,
                std::source_location where) {
  detail::expect_not_moved_from(!exec.empty(), "graph_exec", "set_memops", where);
  CUDA_BATCH_MEM_OP_NODE_PARAMS p = node_params(exec.context(), batch, "set_memops", where);
  check(detail::driver().cuGraphExecBatchMemOpNodeSetParams(exec.get(), node.get(), &p),
        "cuGraphExecBatchMemOpNodeSetParams", where);
}

}  // namespace cuwrap
