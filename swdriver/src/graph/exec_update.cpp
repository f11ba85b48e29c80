// Updating executable graphs (graph.hpp, exec_internal.hpp): cuGraphExecUpdate, the per-node
// cuGraphExec*NodeSetParams, cuGraphExecNodeSetParams, and enabling and disabling nodes. A
// change made after a launch applies to a private copy of the executable graph's plan, so
// launches already enqueued run what was launched.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "graph/copy_nodes.hpp"
#include "graph/exec_internal.hpp"
#include "graph/ext_semaphore_nodes.hpp"
#include "graph/graph_internal.hpp"
#include "graph/memop_nodes.hpp"

namespace swcu {
namespace {

// The executable copy, made private to the executable graph before a change (launches already
// enqueued keep what they launched).
Graph& writable(State& s, Exec& e) {
  if (e.plan.use_count() > 1) e.plan = copy_graph(s, *e.plan, false);
  return *e.plan;
}

struct UpdateError {
  CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  CUgraphNode node = nullptr;
  CUgraphNode from = nullptr;
};

int device_of(State& s, std::uintptr_t address) {
  const Allocation* const a = find_allocation(s, address);
  if (a == nullptr || a->memory == Allocation::Memory::host ||
      a->memory == Allocation::Memory::registered) {
    return -1;  // host memory
  }
  return a->device;
}

bool memcpy_changed(State& s, const CopyNode& old, const CopyNode& now) {
  return copy_operands_changed(s, old, now);  // copy_nodes.hpp
}

bool memset_changed(State& s, const FillShape& a, const FillShape& b) {
  if (device_of(s, a.dst) != device_of(s, b.dst) || a.height != b.height) return true;
  if (a.height > 1) {  // 2D: only the address and the value may change
    return a.width != b.width || a.pitch != b.pitch || a.element_size != b.element_size;
  }
  return false;
}

// Whether `now` (a program's graph) can update `old` (an executable copy) node by node, paired
// in creation order; the first reason why not.
void compare(State& s, const Graph& old, const Graph& now, UpdateError& error) {
  if (old.nodes.size() != now.nodes.size()) {
    error.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return;
  }
  std::unordered_map<const Node*, std::size_t> old_index, now_index;
  for (std::size_t i = 0; i < old.nodes.size(); ++i) {
    old_index.emplace(old.nodes[i].get(), i);
    now_index.emplace(now.nodes[i].get(), i);
  }
  for (std::size_t i = 0; i < now.nodes.size() && error.result == CU_GRAPH_EXEC_UPDATE_SUCCESS;
       ++i) {
    const Node& o = *old.nodes[i];
    Node& n = *now.nodes[i];
    const auto fail = [&](CUgraphExecUpdateResult r, Node* from = nullptr) {
      error.result = r;
      error.node = n.handle();
      error.from = from != nullptr ? from->handle() : nullptr;
    };
    if (o.type != n.type) {
      fail(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
      break;
    }
    if (o.deps.size() != n.deps.size()) {
      fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
      break;
    }
    for (Node* d : n.deps) {
      const std::size_t want = now_index.at(d);
      const bool found = std::any_of(o.deps.begin(), o.deps.end(),
                                     [&](const Node* od) { return old_index.at(od) == want; });
      if (!found) {
        fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, d);
        break;
      }
    }
    if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) break;
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL: {
        const Context* const was = o.as<KernelNode>().owner;
        const Context* const is = n.as<KernelNode>().owner;
        if (was != nullptr && is != nullptr && was != is) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (memcpy_changed(s, o.as<CopyNode>(), n.as<CopyNode>())) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
        }
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
        if (memset_changed(s, o.as<FillNode>().shape, n.as<FillNode>().shape)) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
        }
        break;
      case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      case CU_GRAPH_NODE_TYPE_MEM_FREE:
        if (o.memory() != n.memory()) fail(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED);
        break;
      case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        if (!memop_update_allowed(o.as<MemOpNode>(), n.as<MemOpNode>())) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
        }
        break;
      case CU_GRAPH_NODE_TYPE_GRAPH:
        compare(s, *o.as<ChildNode>().graph, *n.as<ChildNode>().graph, error);
        break;
      case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        const ConditionalNode& was = o.as<ConditionalNode>();
        const ConditionalNode& is = n.as<ConditionalNode>();
        if (was.type != is.type || was.bodies.size() != is.bodies.size()) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
          break;
        }
        for (std::size_t b = 0; b < is.bodies.size(); ++b) {
          if (error.result == CU_GRAPH_EXEC_UPDATE_SUCCESS) {
            compare(s, *was.bodies[b], *is.bodies[b], error);
          }
        }
        break;
      }
      default: break;
    }
    if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS && error.node == nullptr &&
        n.type != CU_GRAPH_NODE_TYPE_GRAPH && n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      error.node = n.handle();
    }
  }
}

// The parameters an update takes from `from` (a node of the same kind): a kernel's launch,
// a copy, a memset, a host function, an event.
void take_params(Node& to, const Node& from) {
  if (KernelNode* const k = to.if_kind<KernelNode>()) {
    *k = from.as<KernelNode>();
    k->param_pointers.clear();
  } else if (CopyNode* const c = to.if_kind<CopyNode>()) {
    *c = from.as<CopyNode>();
  } else if (FillNode* const f = to.if_kind<FillNode>()) {
    *f = from.as<FillNode>();
  } else if (HostNode* const h = to.if_kind<HostNode>()) {
    *h = from.as<HostNode>();
  } else if (EventNode* const e = to.if_kind<EventNode>()) {
    *e = from.as<EventNode>();
  } else if (ExtSemNode* const x = to.if_kind<ExtSemNode>()) {
    *x = from.as<ExtSemNode>();
  } else if (MemOpNode* const m = to.if_kind<MemOpNode>()) {
    *m = from.as<MemOpNode>();
  }
}

// Applies `now`'s parameters to `old` (compare() said it may).
void apply(const Graph& now, Graph& old, ExecState& exec) {
  for (std::size_t i = 0; i < now.nodes.size(); ++i) {
    Node& o = *old.nodes[i];
    const Node& n = *now.nodes[i];
    take_params(o, n);
    o.fault = n.fault;  // an ':async' fault of the call it was captured from goes with it
    if (std::find(o.origins.begin(), o.origins.end(), n.id) == o.origins.end()) {
      o.origins.push_back(n.id);
    }
    if (const ChildNode* const child = n.if_kind<ChildNode>(); child != nullptr && child->graph) {
      apply(*child->graph, *o.as<ChildNode>().graph, exec);
    }
    if (const ConditionalNode* const is = n.if_kind<ConditionalNode>()) {
      ConditionalNode& was = o.as<ConditionalNode>();
      // The new graph's handle stands for the executable graph's: its flags and default apply.
      std::map<CUgraphConditionalHandle, Condition> fresh;
      collect_conditions(top_graph(const_cast<Graph&>(now)), fresh);
      if (const auto it = fresh.find(is->handle); it != fresh.end()) {
        Condition& c = exec.conditions[was.handle];
        c.default_value = it->second.default_value;
        c.flags = it->second.flags;
      }
      for (std::size_t b = 0; b < is->bodies.size(); ++b) {
        apply(*is->bodies[b], *was.bodies[b], exec);
      }
    }
  }
}

CUresult update(State& s, CUgraphExec handle, CUgraph graph, UpdateError& error) {
  error = {};
  Exec* const e = find_exec(s, handle);
  Graph* const g = find_graph(s, graph);
  if (e == nullptr || g == nullptr || capturing_within(*g)) {
    error.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return CUDA_ERROR_INVALID_VALUE;
  }
  compare(s, *e->plan, *g, error);
  if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  auto refs = std::make_shared<HeldRefs>(all_user_refs(*g));
  retain_refs(refs->refs);
  apply(*g, writable(s, *e), *e->exec);
  e->refs = std::move(refs);  // launches in flight keep the old references
  return CUDA_SUCCESS;
}

// A node of an executable graph, by the node it was made from: the executable copy made
// writable first. CUDA_ERROR_INVALID_VALUE for a node of another type or graph.
template <class Body>
CUresult with_exec_node(Sym sym, CUgraphExec handle, CUgraphNode node, int type, Body body) {
  return call(sym, [=](State& s) -> CUresult {
    Exec* const e = find_exec(s, handle);
    const Node* const source = find_node(s, node);
    if (e == nullptr || source == nullptr || (type >= 0 && source->type != type)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (find_by_origin(*e->plan, source->id) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Node* const n = find_by_origin(writable(s, *e), source->id);
    return body(s, *e, *n);
  });
}

}  // namespace

Node* writable_exec_node(State& s, Exec& e, std::uint64_t origin) {
  if (find_by_origin(*e.plan, origin) == nullptr) return nullptr;
  return find_by_origin(writable(s, e), origin);
}

namespace {

CUresult exec_kernel(Sym sym, CUgraphExec exec, CUgraphNode node,
                     const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return with_exec_node(
      sym, exec, node, CU_GRAPH_NODE_TYPE_KERNEL, [=](State& s, Exec&, Node& n) -> CUresult {
        if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
        KernelNode k;
        if (const CUresult r = make_kernel(s, *p, k)) return r;
        KernelNode& kernel = n.as<KernelNode>();
        if (kernel.owner != nullptr && k.owner != nullptr && kernel.owner != k.owner) {
          return CUDA_ERROR_INVALID_VALUE;  // the context cannot change
        }
        // The node's attributes (cuGraphKernelNodeSetAttribute) are not parameters: they stay.
        k.cooperative = kernel.cooperative;
        k.cluster = kernel.cluster;
        k.priority = kernel.priority;
        k.attributes = std::move(kernel.attributes);
        kernel = std::move(k);
        return CUDA_SUCCESS;
      });
}

CUresult exec_set_event(Sym sym, CUgraphExec exec, CUgraphNode node, int type, CUevent event) {
  return with_exec_node(sym, exec, node, type, [=](State& s, Exec&, Node& n) -> CUresult {
    if (s.find<Event>(SWCU_EVENT, event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    n.as<EventNode>().event = event;
    return CUDA_SUCCESS;
  });
}

CUresult exec_copy(State& s, Node& n, const CUDA_MEMCPY3D& p) {
  CopyNode candidate;
  if (const CUresult r = make_copy_node(s, p, candidate)) return r;
  candidate.params = p;
  CopyNode& copy = n.as<CopyNode>();
  if (!one_dimensional(candidate) || !one_dimensional(copy) || memcpy_changed(s, copy, candidate)) {
    return CUDA_ERROR_INVALID_VALUE;  // 1D copies to the same kinds of memory only
  }
  copy.params = p;
  copy.shape = candidate.shape;
  copy.general = std::move(candidate.general);
  return CUDA_SUCCESS;
}

CUresult exec_fill(State& s, Node& n, const CUDA_MEMSET_NODE_PARAMS& p) {
  FillShape shape;
  if (const CUresult r = make_fill(s, p, shape)) return r;
  FillNode& fill = n.as<FillNode>();
  if (memset_changed(s, fill.shape, shape)) return CUDA_ERROR_INVALID_VALUE;
  fill.params = p;
  fill.shape = shape;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Node;
using swcu::State;
using swcu::Sym;

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                           CUgraphExecUpdateResult* updateResult_out) {
  return call(Sym::cuGraphExecUpdate, [=](State& s) -> CUresult {
    if (hErrorNode_out == nullptr || updateResult_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::UpdateError error;
    const CUresult r = swcu::update(s, hGraphExec, hGraph, error);
    *hErrorNode_out = error.node;
    *updateResult_out = error.result;
    return r;
  });
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                              CUgraphExecUpdateResultInfo* resultInfo) {
  return call(Sym::cuGraphExecUpdate_v2, [=](State& s) -> CUresult {
    if (resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::UpdateError error;
    const CUresult r = swcu::update(s, hGraphExec, hGraph, error);
    resultInfo->result = error.result;
    resultInfo->errorNode = error.node;
    resultInfo->errorFromNode = error.from;
    return r;
  });
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  if (nodeParams != nullptr) std::memcpy(&p, nodeParams, sizeof *nodeParams);
  return swcu::exec_kernel(Sym::cuGraphExecKernelNodeSetParams, hGraphExec, hNode,
                           nodeParams != nullptr ? &p : nullptr);
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::exec_kernel(Sym::cuGraphExecKernelNodeSetParams_v2, hGraphExec, hNode, nodeParams);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  return swcu::with_exec_node(Sym::cuGraphExecMemcpyNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_MEMCPY,
                              [=](State& s, swcu::Exec&, Node& n) -> CUresult {
                                if (copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                if (ctx != nullptr && s.context(ctx) == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                return swcu::exec_copy(s, n, *copyParams);
                              });
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                        CUcontext ctx) {
  return swcu::with_exec_node(Sym::cuGraphExecMemsetNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_MEMSET,
                              [=](State& s, swcu::Exec&, Node& n) -> CUresult {
                                if (memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                if (ctx != nullptr && s.context(ctx) == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                return swcu::exec_fill(s, n, *memsetParams);
                              });
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::with_exec_node(Sym::cuGraphExecHostNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_HOST,
                              [=](State&, swcu::Exec&, Node& n) -> CUresult {
                                if (nodeParams == nullptr || nodeParams->fn == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                n.as<swcu::HostNode>().params = *nodeParams;
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            CUevent event) {
  return swcu::exec_set_event(Sym::cuGraphExecEventRecordNodeSetEvent, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                          CUevent event) {
  return swcu::exec_set_event(Sym::cuGraphExecEventWaitNodeSetEvent, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            CUgraph childGraph) {
  return swcu::with_exec_node(Sym::cuGraphExecChildGraphNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_GRAPH,
                              [=](State& s, swcu::Exec& e, Node& n) -> CUresult {
                                const swcu::Graph* const child = swcu::find_graph(s, childGraph);
                                if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                swcu::Graph& current = *n.as<swcu::ChildNode>().graph;
                                swcu::UpdateError error;
                                swcu::compare(s, current, *child, error);
                                if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                swcu::apply(*child, current, *e.exec);
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                  CUgraphNodeParams* nodeParams) {
  return swcu::with_exec_node(
      Sym::cuGraphExecNodeSetParams, hGraphExec, hNode, -1,
      [=](State& s, swcu::Exec&, Node& n) -> CUresult {
        if (nodeParams == nullptr || swcu::raw(nodeParams->type) != n.type) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        CUgraphNodeParams& p = *nodeParams;
        switch (n.type) {
          case CU_GRAPH_NODE_TYPE_KERNEL: {
            CUDA_KERNEL_NODE_PARAMS_v2 k{};
            std::memcpy(&k, &p.kernel, sizeof k);
            swcu::KernelNode args;
            if (const CUresult r = swcu::make_kernel(s, k, args)) return r;
            swcu::KernelNode& kernel = n.as<swcu::KernelNode>();
            if (kernel.owner != nullptr && args.owner != nullptr && kernel.owner != args.owner) {
              return CUDA_ERROR_INVALID_VALUE;
            }
            kernel = std::move(args);
            return CUDA_SUCCESS;
          }
          case CU_GRAPH_NODE_TYPE_MEMCPY: return swcu::exec_copy(s, n, p.memcpy.copyParams);
          case CU_GRAPH_NODE_TYPE_MEMSET: {
            const CUDA_MEMSET_NODE_PARAMS m{p.memset.dst,         p.memset.pitch, p.memset.value,
                                            p.memset.elementSize, p.memset.width, p.memset.height};
            return swcu::exec_fill(s, n, m);
          }
          case CU_GRAPH_NODE_TYPE_HOST:
            if (p.host.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
            n.as<swcu::HostNode>().params = {p.host.fn, p.host.userData};
            return CUDA_SUCCESS;
          case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
          case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
            const CUevent event =
                n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? p.eventRecord.event : p.eventWait.event;
            if (s.find<swcu::Event>(SWCU_EVENT, event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
            n.as<swcu::EventNode>().event = event;
            return CUDA_SUCCESS;
          }
          case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
          case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
            const CUDA_BATCH_MEM_OP_NODE_PARAMS m{p.memOp.ctx, p.memOp.count, p.memOp.paramArray,
                                                  p.memOp.flags};
            return swcu::update_exec_memops(s, n, m);
          }
          case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
          case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return swcu::set_ext_semaphore_node(s, n, p);
          // cuda.h (cuGraphExecUpdate): "Conditional nodes: Changing node parameters is not
          // supported"; the nodes of its bodies change by the rules of their kinds.
          case CU_GRAPH_NODE_TYPE_CONDITIONAL: return CUDA_ERROR_NOT_SUPPORTED;
          default: return CUDA_ERROR_NOT_SUPPORTED;
        }
      });
}

CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
  return swcu::with_exec_node(Sym::cuGraphNodeSetEnabled, hGraphExec, hNode, -1,
                              [=](State&, swcu::Exec&, Node& n) -> CUresult {
                                n.enabled = isEnabled != 0;
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled) {
  return call(Sym::cuGraphNodeGetEnabled, [=](State& s) -> CUresult {
    swcu::Exec* const e = swcu::find_exec(s, hGraphExec);
    const Node* const source = swcu::find_node(s, hNode);
    if (e == nullptr || source == nullptr || isEnabled == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Node* const n = swcu::find_by_origin(*e->plan, source->id);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *isEnabled = n->enabled ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
