// Adding nodes and the per-kind parameter exports (graph.hpp): cuGraphAdd*Node, cuGraphAddNode,
// cuGraphNodeSetParams, and the getters and setters of each node kind
// (cuGraphKernelNodeGetParams, cuGraphMemcpyNodeSetParams, ...).
#include <cstring>

#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

std::vector<Node*> dependency_list(const CUgraphNode* deps, std::size_t count) {
  std::vector<Node*> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(reinterpret_cast<Node*>(deps[i]));
  return out;
}

// The common shape of the cuGraphAdd*Node functions: check the graph, the output and the
// dependencies, make the node with `make`, add it.
template <class Make>
CUresult add(Sym sym, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, std::size_t count,
             int type, Make make) {
  return call(sym, [=, &make](State& s) -> CUresult {
    Graph* const g = find_graph(s, graph);
    if (g == nullptr || out == nullptr || (count > 0 && deps == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_dependencies(*g, deps, count)) return r;
    if (const CUresult r = check_placement(*g, type)) return r;
    auto node = std::make_unique<Node>(type);
    node->graph = g;
    if (const CUresult r = make(s, *g, *node)) return r;
    *out = add_node(s, *g, dependency_list(deps, count), std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

CUresult add_node_union(Sym sym, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                        const CUgraphEdgeData* data, std::size_t count, CUgraphNodeParams* p) {
  if (p == nullptr) return call(sym, [](State&) { return CUDA_ERROR_INVALID_VALUE; });
  const int type = raw(p->type);
  return call(sym, [=](State& s) -> CUresult {
    if (p->reserved0[0] != 0 || p->reserved0[1] != 0 || p->reserved0[2] != 0 || p->reserved2 != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!default_edges(data, count)) return CUDA_ERROR_NOT_SUPPORTED;  // programmatic edges
    Graph* const g = find_graph(s, graph);
    if (g == nullptr || out == nullptr || (count > 0 && deps == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_dependencies(*g, deps, count)) return r;
    if (type < CU_GRAPH_NODE_TYPE_KERNEL || type > CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_placement(*g, type)) return r;
    auto node = std::make_unique<Node>(type);
    node->graph = g;
    if (const CUresult r = from_union(s, *g, *node, *p, true)) return r;
    *out = add_node(s, *g, dependency_list(deps, count), std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

// A node of `type` for a getter or setter: CUDA_ERROR_INVALID_VALUE otherwise.
template <class Body>
CUresult with_node(Sym sym, CUgraphNode node, int type, Body body) {
  return call(sym, [=](State& s) -> CUresult {
    Node* const n = find_node(s, node);
    if (n == nullptr || n->type != type) return CUDA_ERROR_INVALID_VALUE;
    return body(s, *n);
  });
}

CUresult kernel_get(Sym sym, CUgraphNode node, CUDA_KERNEL_NODE_PARAMS_v2* out, bool v1) {
  return with_node(sym, node, CU_GRAPH_NODE_TYPE_KERNEL, [=](State&, Node& n) -> CUresult {
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_KERNEL_NODE_PARAMS_v2 p = kernel_params(n.as<swcu::KernelNode>());
    if (v1) {
      std::memcpy(out, &p, sizeof(CUDA_KERNEL_NODE_PARAMS_v1));
    } else {
      *out = p;
    }
    return CUDA_SUCCESS;
  });
}

// cuGraphAddKernelNode needs a current context: NVIDIA's driver crashes without one (a
// segfault, observed on an H200, driver 580.159.04, even with a valid function and params.ctx
// set); this driver answers CUDA_ERROR_INVALID_CONTEXT instead.
CUresult kernel_node_context(State& s) noexcept {
  Context* ctx = nullptr;
  return current_context(s, ctx);
}

CUDA_KERNEL_NODE_PARAMS_v2 from_v1(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  CUDA_KERNEL_NODE_PARAMS_v2 out{};
  std::memcpy(&out, &p, sizeof p);
  return out;
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Graph;
using swcu::Node;
using swcu::State;
using swcu::Sym;

// ---- adding nodes ----

CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                             const CUgraphNode* dependencies, size_t numDependencies) {
  return swcu::add(Sym::cuGraphAddEmptyNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_EMPTY,
                   [](State&, Graph&, Node&) -> CUresult { return CUDA_SUCCESS; });
}

CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                              const CUgraphNode* dependencies, size_t numDependencies,
                              const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  return swcu::add(Sym::cuGraphAddKernelNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_KERNEL, [=](State& s, Graph&, Node& n) -> CUresult {
                     if (const CUresult r = swcu::kernel_node_context(s)) return r;
                     if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_kernel(s, n, swcu::from_v1(*nodeParams));
                   });
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                 const CUgraphNode* dependencies, size_t numDependencies,
                                 const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddKernelNode_v2, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_KERNEL, [=](State& s, Graph&, Node& n) -> CUresult {
                     if (const CUresult r = swcu::kernel_node_context(s)) return r;
                     if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_kernel(s, n, *nodeParams);
                   });
}

CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                              const CUgraphNode* dependencies, size_t numDependencies,
                              const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  return swcu::add(Sym::cuGraphAddMemcpyNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_MEMCPY, [=](State& s, Graph&, Node& n) -> CUresult {
                     if (copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_copy(s, n, *copyParams, ctx);
                   });
}

CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                              const CUgraphNode* dependencies, size_t numDependencies,
                              const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  return swcu::add(Sym::cuGraphAddMemsetNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_MEMSET, [=](State& s, Graph&, Node& n) -> CUresult {
                     if (memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_fill(s, n, *memsetParams, ctx);
                   });
}

CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                            const CUgraphNode* dependencies, size_t numDependencies,
                            const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddHostNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_HOST, [=](State&, Graph&, Node& n) -> CUresult {
                     if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_host(n, *nodeParams);
                   });
}

CUresult cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                  const CUgraphNode* dependencies, size_t numDependencies,
                                  CUgraph childGraph) {
  return swcu::add(Sym::cuGraphAddChildGraphNode, phGraphNode, hGraph, dependencies,
                   numDependencies, CU_GRAPH_NODE_TYPE_GRAPH,
                   [=](State& s, Graph& g, Node& n) -> CUresult {
                     const Graph* const child = swcu::find_graph(s, childGraph);
                     if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     if (swcu::in_body(g) && !swcu::only_body_types(*child)) {
                       return CUDA_ERROR_INVALID_VALUE;
                     }
                     std::unique_ptr<Graph> copy;
                     if (const CUresult r = swcu::make_child(s, *child, copy)) return r;
                     swcu::attach_child(n, std::move(copy));
                     return CUDA_SUCCESS;
                   });
}

CUresult cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                   const CUgraphNode* dependencies, size_t numDependencies,
                                   CUevent event) {
  return swcu::add(Sym::cuGraphAddEventRecordNode, phGraphNode, hGraph, dependencies,
                   numDependencies, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
                   [=](State& s, Graph&, Node& n) -> CUresult {
                     return swcu::set_event(s, n, event, CUDA_ERROR_INVALID_VALUE);
                   });
}

CUresult cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                 const CUgraphNode* dependencies, size_t numDependencies,
                                 CUevent event) {
  return swcu::add(Sym::cuGraphAddEventWaitNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_WAIT_EVENT, [=](State& s, Graph&, Node& n) -> CUresult {
                     return swcu::set_event(s, n, event, CUDA_ERROR_INVALID_VALUE);
                   });
}

CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                const CUgraphNode* dependencies, size_t numDependencies,
                                CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddMemAllocNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_MEM_ALLOC, [=](State& s, Graph&, Node& n) -> CUresult {
                     if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::make_alloc(s, *nodeParams, n.as<swcu::AllocNode>());
                   });
}

CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                               const CUgraphNode* dependencies, size_t numDependencies,
                               CUdeviceptr dptr) {
  return swcu::add(Sym::cuGraphAddMemFreeNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_MEM_FREE, [=](State&, Graph& g, Node& n) -> CUresult {
                     return swcu::make_free(g, dptr, n.as<swcu::FreeNode>());
                   });
}

CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, CUgraphNodeParams* nodeParams) {
  return swcu::add_node_union(Sym::cuGraphAddNode, phGraphNode, hGraph, dependencies, nullptr,
                              numDependencies, nodeParams);
}

CUresult cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                           const CUgraphNode* dependencies, const CUgraphEdgeData* dependencyData,
                           size_t numDependencies, CUgraphNodeParams* nodeParams) {
  return swcu::add_node_union(Sym::cuGraphAddNode_v2, phGraphNode, hGraph, dependencies,
                              dependencyData, numDependencies, nodeParams);
}

CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  return call(Sym::cuGraphNodeSetParams, [=](State& s) -> CUresult {
    Node* const n = swcu::find_node(s, hNode);
    if (n == nullptr || nodeParams == nullptr || swcu::raw(nodeParams->type) != n->type) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return swcu::from_union(s, *n->graph, *n, *nodeParams, false);
  });
}

// ---- per-kind parameters ----

CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  return swcu::kernel_get(Sym::cuGraphKernelNodeGetParams, hNode,
                          reinterpret_cast<CUDA_KERNEL_NODE_PARAMS_v2*>(nodeParams), true);
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::kernel_get(Sym::cuGraphKernelNodeGetParams_v2, hNode, nodeParams, false);
}

CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                    const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  return swcu::with_node(Sym::cuGraphKernelNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_KERNEL,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_kernel(s, n, swcu::from_v1(*nodeParams));
                         });
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                       const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphKernelNodeSetParams_v2, hNode, CU_GRAPH_NODE_TYPE_KERNEL,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_kernel(s, n, *nodeParams);
                         });
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemcpyNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *nodeParams = n.as<swcu::CopyNode>().params;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemcpyNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_copy(s, n, *nodeParams, n.as<swcu::CopyNode>().ctx);
                         });
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemsetNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *nodeParams = n.as<swcu::FillNode>().params;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemsetNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_fill(s, n, *nodeParams, n.as<swcu::FillNode>().ctx);
                         });
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphHostNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_HOST,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *nodeParams = n.as<swcu::HostNode>().params;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphHostNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_HOST,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_host(n, *nodeParams);
                         });
}

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  return swcu::with_node(Sym::cuGraphChildGraphNodeGetGraph, hNode, CU_GRAPH_NODE_TYPE_GRAPH,
                         [=](State&, Node& n) -> CUresult {
                           if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *phGraph = n.as<swcu::ChildNode>().handle;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return swcu::with_node(Sym::cuGraphEventRecordNodeGetEvent, hNode,
                         CU_GRAPH_NODE_TYPE_EVENT_RECORD, [=](State&, Node& n) -> CUresult {
                           if (event_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *event_out = n.as<swcu::EventNode>().event;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return swcu::with_node(Sym::cuGraphEventRecordNodeSetEvent, hNode,
                         CU_GRAPH_NODE_TYPE_EVENT_RECORD, [=](State& s, Node& n) -> CUresult {
                           return swcu::set_event(s, n, event, CUDA_ERROR_INVALID_HANDLE);
                         });
}

CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return swcu::with_node(Sym::cuGraphEventWaitNodeGetEvent, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                         [=](State&, Node& n) -> CUresult {
                           if (event_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *event_out = n.as<swcu::EventNode>().event;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return swcu::with_node(Sym::cuGraphEventWaitNodeSetEvent, hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                         [=](State& s, Node& n) -> CUresult {
                           return swcu::set_event(s, n, event, CUDA_ERROR_INVALID_HANDLE);
                         });
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  return swcu::with_node(Sym::cuGraphMemAllocNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC,
                         [=](State&, Node& n) -> CUresult {
                           if (params_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *params_out = n.memory()->params;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return swcu::with_node(Sym::cuGraphMemFreeNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEM_FREE,
                         [=](State&, Node& n) -> CUresult {
                           if (dptr_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *dptr_out = n.as<swcu::FreeNode>().address;
                           return CUDA_SUCCESS;
                         });
}

}  // extern "C"
