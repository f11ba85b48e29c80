// Executable graphs (graph.hpp, exec_internal.hpp): instantiating and destroying them, their
// flags, and how many exist of each graph. Launching is in exec_launch.cpp, updating in
// exec_update.cpp.
#include <unordered_map>

#include "graph/copy_nodes.hpp"
#include "graph/exec_internal.hpp"
#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

constexpr unsigned long long kInstantiateFlags =
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

std::unordered_map<std::uint64_t, std::size_t>& exec_counts() noexcept {
  static auto* const counts = new std::unordered_map<std::uint64_t, std::size_t>;
  return *counts;
}

// A node a device graph may not have (CUDA programming guide, "Device Graph Requirements": only
// kernel, memcpy, memset and child graph nodes), searched in child graphs too; `work` is set
// when it has a kernel, memcpy or memset node.
Node* device_unsupported(const Graph& g, bool& work) {
  for (const auto& n : g.nodes) {
    switch (n->type) {
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        // "Copies involving CUDA arrays are not permitted."
        if (copies_array(n->as<CopyNode>())) return n.get();
        work = true;
        break;
      case CU_GRAPH_NODE_TYPE_KERNEL:
      case CU_GRAPH_NODE_TYPE_MEMSET: work = true; break;
      case CU_GRAPH_NODE_TYPE_GRAPH:
        if (Node* const bad = device_unsupported(*n->as<ChildNode>().graph, work)) return bad;
        break;
      default: return n.get();
    }
  }
  return nullptr;
}

// Why an executable graph of `g` cannot be made (CUDA_SUCCESS when it can).
CUresult check_instantiable(State& s, Graph& g, unsigned long long flags,
                            CUgraphInstantiateResult& result, CUgraphNode& error_node) {
  result = CUDA_GRAPH_INSTANTIATE_ERROR;
  if ((flags & ~kInstantiateFlags) != 0 ||
      ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0 &&
       (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (capturing_within(g) || in_body(g)) return CUDA_ERROR_INVALID_VALUE;
  const bool single = contains(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC) ||
                      contains(g, CU_GRAPH_NODE_TYPE_MEM_FREE) ||
                      contains(g, CU_GRAPH_NODE_TYPE_CONDITIONAL);
  if (single && exec_count(g.id) != 0) return CUDA_ERROR_INVALID_VALUE;  // one at a time
  std::vector<Node*> order;
  Node* cycle = nullptr;
  if (!topological_order(g, order, cycle)) {
    result = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    error_node = cycle->handle();
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0) {
    bool work = false;
    if (Node* const bad = device_unsupported(g, work)) {
      result = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
      error_node = bad->handle();
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!work) return CUDA_ERROR_INVALID_VALUE;
  }
  (void)s;
  result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult instantiate(State& s, Lock& lock, CUgraphExec* out, CUgraph graph,
                     unsigned long long flags, bool with_params, CUstream upload_stream,
                     CUgraphInstantiateResult* result, CUgraphNode* error_node) {
  CUgraphInstantiateResult res = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphNode err = nullptr;
  const auto report = [&](CUresult r) {
    if (result != nullptr) *result = res;
    if (error_node != nullptr) *error_node = err;
    return r;
  };
  // An executable graph belongs to the current context: without one NVIDIA's driver answers
  // CUDA_ERROR_INVALID_CONTEXT (observed on an H200, driver 580.159.04).
  Context* ctx = nullptr;
  if (const CUresult r = current_context(s, ctx)) return report(r);
  Graph* const g = find_graph(s, graph);
  if (out == nullptr || g == nullptr) return report(CUDA_ERROR_INVALID_VALUE);
  if (!with_params && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    return report(CUDA_ERROR_INVALID_VALUE);
  }
  if (const CUresult r = check_instantiable(s, *g, flags, res, err)) return report(r);
  std::shared_ptr<Queue> q;
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    if (const CUresult r = resolve_stream(s, upload_stream, NullStream::legacy, q)) {
      res = CUDA_GRAPH_INSTANTIATE_ERROR;
      return report(r);
    }
  }
  auto e = std::make_unique<Exec>();
  e->flags = flags & ~static_cast<unsigned long long>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
  e->source = g->id;
  e->plan = copy_graph(s, *g, false);
  e->refs = std::make_shared<HeldRefs>(all_user_refs(*g));
  retain_refs(e->refs->refs);
  e->exec = std::make_shared<ExecState>();
  collect_conditions(*g, e->exec->conditions);
  for (const auto& [handle, c] : e->exec->conditions) e->exec->values[handle] = c.default_value;
  e->ctx = ctx;
  ++exec_counts()[g->id];
  Exec* const added = s.registry(SWCU_GRAPH_EXEC).add(std::move(e));
  *out = reinterpret_cast<CUgraphExec>(added);
  if (q) {
    Op op;
    op.kind = OpKind::wait;
    added->last = push(s, *q, std::move(op));
    map_graph_memory(*added->plan, added->last);  // uploaded: its memory is mapped
    kick(s, lock);  // may release the lock: nothing is used after this
  }
  return report(CUDA_SUCCESS);
}

}  // namespace

// ---- exec_internal.hpp ----

void free_outstanding(Graph& g) noexcept {
  for (const auto& n : g.nodes) {
    const AllocNode* const a = n->if_kind<AllocNode>();
    if (a != nullptr && a->memory && a->memory->outstanding) {
      a->memory->outstanding = false;
      a->memory->allocation->stage = Allocation::Stage::pending;
    }
  }
  unmap_graph_memory(g);  // back into the device's graph pool
}

void Exec::release() noexcept {
  if (auto it = exec_counts().find(source); it != exec_counts().end() && --it->second == 0) {
    exec_counts().erase(it);
  }
  if (exec) exec->destroyed = true;
  if (plan && (!last || last->done)) free_outstanding(*plan);
  plan.reset();
  refs.reset();
  exec.reset();
  last.reset();
}

Exec* find_exec(State& s, CUgraphExec handle) noexcept {
  return s.find<Exec>(SWCU_GRAPH_EXEC, handle);
}

// ---- graph.hpp ----

std::size_t exec_count(std::uint64_t graph_id) noexcept {
  const auto it = exec_counts().find(graph_id);
  return it == exec_counts().end() ? 0 : it->second;
}

void reclaim_execs(State& s, Context& ctx) noexcept {
  for (const void* h : s.registry(SWCU_GRAPH_EXEC).handles_if([&ctx](const Object& o) {
         return static_cast<const Exec&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_GRAPH_EXEC, h);
  }
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Lock;
using swcu::State;
using swcu::Sym;

CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                            char* logBuffer, size_t bufferSize) {
  return call(Sym::cuGraphInstantiate, [=](State& s, Lock& lock) -> CUresult {
    if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
    return swcu::instantiate(s, lock, phGraphExec, hGraph, 0, false, nullptr, nullptr, phErrorNode);
  });
}

CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                               char* logBuffer, size_t bufferSize) {
  return call(Sym::cuGraphInstantiate_v2, [=](State& s, Lock& lock) -> CUresult {
    if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
    return swcu::instantiate(s, lock, phGraphExec, hGraph, 0, false, nullptr, nullptr, phErrorNode);
  });
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                     unsigned long long flags) {
  return call(Sym::cuGraphInstantiateWithFlags, [=](State& s, Lock& lock) -> CUresult {
    return swcu::instantiate(s, lock, phGraphExec, hGraph, flags, false, nullptr, nullptr, nullptr);
  });
}

CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return call(Sym::cuGraphInstantiateWithParams, [=](State& s, Lock& lock) -> CUresult {
    if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_GRAPH_INSTANTIATE_PARAMS& p = *instantiateParams;
    return swcu::instantiate(s, lock, phGraphExec, hGraph, p.flags, true, p.hUploadStream,
                             &p.result_out, &p.hErrNode_out);
  });
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return call(Sym::cuGraphInstantiateWithParams_ptsz, [=](State& s, Lock& lock) -> CUresult {
    if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_GRAPH_INSTANTIATE_PARAMS& p = *instantiateParams;
    CUstream upload = p.hUploadStream != nullptr ? p.hUploadStream : CU_STREAM_PER_THREAD;
    return swcu::instantiate(s, lock, phGraphExec, hGraph, p.flags, true, upload, &p.result_out,
                             &p.hErrNode_out);
  });
}

CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  return call(Sym::cuGraphExecGetFlags, [=](State& s) -> CUresult {
    const swcu::Exec* const e = swcu::find_exec(s, hGraphExec);
    if (e == nullptr || flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = e->flags;
    return CUDA_SUCCESS;
  });
}

// An executable graph in flight is not stopped: its launches keep what they need.
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return call(Sym::cuGraphExecDestroy, [=](State& s) -> CUresult {
    if (swcu::find_exec(s, hGraphExec) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    s.destroy(SWCU_GRAPH_EXEC, hGraphExec);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
