// Batch memory operation nodes: cuGraphAddBatchMemOpNode, cuGraphBatchMemOpNodeGet/SetParams,
// cuGraphExecBatchMemOpNodeSetParams (memop_nodes.hpp). A launch runs a node's operations in
// order, each as a stream operation of its own (exec_launch.cpp): a wait holds back the rest
// of the launch until its condition holds, while other streams go on.
#include "graph/memop_nodes.hpp"

#include "exec/memops.hpp"
#include "graph/exec_internal.hpp"
#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

// The parameters that encode `m` (for a captured node's getter).
CUstreamBatchMemOpParams encode(const MemOp& m) noexcept {
  CUstreamBatchMemOpParams p{};
  p.operation = static_cast<CUstreamBatchMemOpType>(m.kind);
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      p.waitValue.address = m.address;
      if (m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32) {
        p.waitValue.value = static_cast<cuuint32_t>(m.value);
      } else {
        p.waitValue.value64 = m.value;
      }
      p.waitValue.flags = m.flags;
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      p.writeValue.address = m.address;
      if (m.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32) {
        p.writeValue.value = static_cast<cuuint32_t>(m.value);
      } else {
        p.writeValue.value64 = m.value;
      }
      p.writeValue.flags = m.flags;
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: p.flushRemoteWrites.flags = m.flags; break;
    default: p.memoryBarrier.flags = m.flags; break;
  }
  return p;
}

template <class Body>
CUresult with_memop_node(Sym sym, CUgraphNode node, Body body) {
  return call(sym, [=](State& s) -> CUresult {
    Node* const n = find_node(s, node);
    if (n == nullptr || n->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) return CUDA_ERROR_INVALID_VALUE;
    return body(s, *n);
  });
}

}  // namespace

CUresult set_memop_node(State& s, Node& n, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p) {
  if (p.count == 0 || p.paramArray == nullptr || p.flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (const CUresult r = context_arg(s, p.ctx, ctx)) return r;
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;  // NULL without a current context
  MemOpNode made;
  made.ctx = ctx->handle();
  made.flags = p.flags;
  made.given.assign(p.paramArray, p.paramArray + p.count);
  for (const CUstreamBatchMemOpParams& given : made.given) {
    const MemOp m = decode_memop(given);
    if (check_memop(s, MemOpAbi::v2, m) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    made.ops.push_back(m);
  }
  n.as<MemOpNode>() = std::move(made);
  if (n.graph != nullptr) adopt(*n.graph, ctx);
  return CUDA_SUCCESS;
}

bool memop_update_allowed(const MemOpNode& was, const MemOpNode& is) noexcept {
  if (was.ctx != is.ctx || was.ops.size() != is.ops.size()) return false;
  for (std::size_t i = 0; i < was.ops.size(); ++i) {
    const MemOp& a = was.ops[i];
    const MemOp& b = is.ops[i];
    if (a.kind != b.kind) return false;
    if (is_wait(a)) {
      if ((a.flags & CU_STREAM_WAIT_VALUE_FLUSH) != (b.flags & CU_STREAM_WAIT_VALUE_FLUSH)) {
        return false;
      }
    } else if (a.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
               a.kind == CU_STREAM_MEM_OP_WRITE_VALUE_64) {
      if (a.flags != b.flags) return false;
    } else if (a.flags != b.flags) {
      return false;  // a flush or barrier cannot change
    }
  }
  return true;
}

CUresult update_exec_memops(State& s, Node& n, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p) {
  Node checked(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  if (const CUresult r = set_memop_node(s, checked, p)) return r;
  MemOpNode& was = n.as<MemOpNode>();
  MemOpNode& is = checked.as<MemOpNode>();
  if (!memop_update_allowed(was, is)) return CUDA_ERROR_INVALID_VALUE;
  was = std::move(is);
  return CUDA_SUCCESS;
}

void set_captured_memops(Node& n, CUcontext ctx, const std::vector<MemOp>& ops) {
  MemOpNode& m = n.as<MemOpNode>();
  m.ctx = ctx;
  m.ops = ops;
  m.given.clear();
  for (const MemOp& op : ops) m.given.push_back(encode(op));
}

}  // namespace swcu

using swcu::Sym;

extern "C" {

CUresult cuGraphAddBatchMemOpNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                  const CUgraphNode* dependencies, size_t numDependencies,
                                  const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return swcu::call(Sym::cuGraphAddBatchMemOpNode, [=](swcu::State& s) -> CUresult {
    swcu::Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr || phGraphNode == nullptr || nodeParams == nullptr ||
        (numDependencies > 0 && dependencies == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = swcu::check_dependencies(*g, dependencies, numDependencies)) return r;
    if (const CUresult r = swcu::check_placement(*g, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)) return r;
    auto node = std::make_unique<swcu::Node>(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    node->graph = g;
    if (const CUresult r = swcu::set_memop_node(s, *node, *nodeParams)) return r;
    std::vector<swcu::Node*> after;
    for (std::size_t i = 0; i < numDependencies; ++i) {
      after.push_back(reinterpret_cast<swcu::Node*>(dependencies[i]));
    }
    *phGraphNode = swcu::add_node(s, *g, after, std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                        CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) {
  return swcu::with_memop_node(Sym::cuGraphBatchMemOpNodeGetParams, hNode,
                               [=](swcu::State&, swcu::Node& n) -> CUresult {
                                 if (nodeParams_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                 swcu::MemOpNode& m = n.as<swcu::MemOpNode>();
                                 nodeParams_out->ctx = m.ctx;
                                 nodeParams_out->count = static_cast<unsigned>(m.given.size());
                                 nodeParams_out->paramArray = m.given.data();
                                 nodeParams_out->flags = m.flags;
                                 return CUDA_SUCCESS;
                               });
}

CUresult cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
                                        const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return swcu::with_memop_node(Sym::cuGraphBatchMemOpNodeSetParams, hNode,
                               [=](swcu::State& s, swcu::Node& n) -> CUresult {
                                 if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                 return swcu::set_memop_node(s, n, *nodeParams);
                               });
}

CUresult cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return swcu::call(Sym::cuGraphExecBatchMemOpNodeSetParams, [=](swcu::State& s) -> CUresult {
    swcu::Exec* const e = swcu::find_exec(s, hGraphExec);
    const swcu::Node* const source = swcu::find_node(s, hNode);
    if (e == nullptr || source == nullptr || nodeParams == nullptr ||
        source->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Node* const n = swcu::writable_exec_node(s, *e, source->id);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return swcu::update_exec_memops(s, *n, *nodeParams);
  });
}

}  // extern "C"
