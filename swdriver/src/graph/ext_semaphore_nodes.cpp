// External semaphore signal and wait nodes: cuGraphAddExternalSemaphoresSignalNode/WaitNode,
// their Get/SetParams, cuGraphExecExternalSemaphores*NodeSetParams, and how a launch runs them
// (exec_launch.cpp calls run_ext_semaphores and semaphores_ready).
//
// A signal node stores its semaphores' payloads when it runs (memory/external.hpp). A wait node
// is a stream operation of its own in a launch: the scheduler holds back it and what follows it
// until every semaphore's condition holds (it polls, as for stream memory waits), and a binary
// wait consumes its signal when its node runs.
#include "graph/ext_semaphore_nodes.hpp"

#include <algorithm>

#include "graph/capture.hpp"
#include "graph/exec_internal.hpp"
#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

// Checks `p` (a CUDA_EXT_SEM_SIGNAL/WAIT_NODE_PARAMS) and sets node `n` from it: at least one
// semaphore, every handle a live semaphore (CUDA_ERROR_INVALID_VALUE otherwise, as graph setters
// report bad parameters), flags as cuSignal/WaitExternalSemaphoresAsync take them.
template <class NodeParams>
CUresult set_params(State& s, Node& n, const NodeParams* p, bool signal) {
  if (p == nullptr || p->numExtSems == 0 || p->extSemArray == nullptr ||
      p->paramsArray == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  ExtSemNode made;
  const CUresult r =
      semaphore_steps(s, p->extSemArray, p->paramsArray, signal, p->numExtSems, made.steps);
  if (r != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  made.handles.assign(p->extSemArray, p->extSemArray + p->numExtSems);
  if constexpr (std::is_same_v<NodeParams, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS>) {
    made.signals.assign(p->paramsArray, p->paramsArray + p->numExtSems);
  } else {
    made.waits.assign(p->paramsArray, p->paramsArray + p->numExtSems);
  }
  n.as<ExtSemNode>() = std::move(made);
  return CUDA_SUCCESS;
}

template <class Body>
CUresult with_node_of(Sym sym, CUgraphNode node, int type, Body body) {
  return call(sym, [=](State& s) -> CUresult {
    Node* const n = find_node(s, node);
    if (n == nullptr || n->type != type) return CUDA_ERROR_INVALID_VALUE;
    return body(s, *n);
  });
}

template <class NodeParams>
CUresult add(Sym sym, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, std::size_t count,
             const NodeParams* p, int type) {
  return call(sym, [=](State& s) -> CUresult {
    Graph* const g = find_graph(s, graph);
    if (g == nullptr || out == nullptr || (count > 0 && deps == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = check_dependencies(*g, deps, count)) return r;
    if (const CUresult r = check_placement(*g, type)) return r;
    auto node = std::make_unique<Node>(type);
    node->graph = g;
    if (const CUresult r = set_params(s, *node, p, type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL)) {
      return r;
    }
    std::vector<Node*> after;
    for (std::size_t i = 0; i < count; ++i) after.push_back(reinterpret_cast<Node*>(deps[i]));
    *out = add_node(s, *g, std::move(after), std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

template <class NodeParams>
CUresult get(Sym sym, CUgraphNode node, NodeParams* out, int type) {
  return with_node_of(sym, node, type, [=](State&, Node& n) -> CUresult {
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    ExtSemNode& e = n.as<ExtSemNode>();
    out->extSemArray = e.handles.data();
    if constexpr (std::is_same_v<NodeParams, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS>) {
      out->paramsArray = e.signals.data();
    } else {
      out->paramsArray = e.waits.data();
    }
    out->numExtSems = static_cast<unsigned>(e.handles.size());
    return CUDA_SUCCESS;
  });
}

template <class NodeParams>
CUresult exec_set(Sym sym, CUgraphExec exec, CUgraphNode node, const NodeParams* p, int type) {
  return call(sym, [=](State& s) -> CUresult {
    Exec* const e = find_exec(s, exec);
    const Node* const source = find_node(s, node);
    if (e == nullptr || source == nullptr || source->type != type) return CUDA_ERROR_INVALID_VALUE;
    Node* const n = writable_exec_node(s, *e, source->id);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return set_params(s, *n, p, type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
  });
}

bool holds(const SemaphoreStep& step) {
  const std::uint64_t v = step.payload->word().load(std::memory_order_acquire);
  return step.timeline ? v >= step.value : v != 0;
}

}  // namespace

CUresult set_ext_semaphore_node(State& s, Node& n, const CUgraphNodeParams& p) {
  if (n.type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL) {
    const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS v1{p.extSemSignal.extSemArray, p.extSemSignal.paramsArray,
                                             p.extSemSignal.numExtSems};
    return set_params(s, n, &v1, true);
  }
  const CUDA_EXT_SEM_WAIT_NODE_PARAMS v1{p.extSemWait.extSemArray, p.extSemWait.paramsArray,
                                         p.extSemWait.numExtSems};
  return set_params(s, n, &v1, false);
}

bool semaphores_ready(const Node& n) {
  const auto& steps = n.as<ExtSemNode>().steps;
  return std::all_of(steps.begin(), steps.end(), holds);
}

void run_ext_semaphores(const Node& n) {
  const bool signal = n.type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
  for (const SemaphoreStep& step : n.as<ExtSemNode>().steps) {
    if (signal) {
      step.payload->word().store(step.timeline ? step.value : 1, std::memory_order_release);
    } else if (!step.timeline) {
      step.payload->word().store(0, std::memory_order_relaxed);  // the wait takes the signal
    }
  }
}

// A captured signal or wait is one node of every semaphore of the call, as cuGraphAdd...Node
// with the same arrays would make (a call with no semaphore records nothing).
Captured capture_semaphores(State& s, Queue& q, const CUexternalSemaphore* sems, const void* params,
                            unsigned count, const std::vector<SemaphoreStep>& steps, bool signal) {
  return capture_nodes(s, q, false, [&](std::vector<std::unique_ptr<Node>>& out) -> CUresult {
    if (count == 0) return CUDA_SUCCESS;
    auto n = std::make_unique<Node>(signal ? CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL
                                           : CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
    ExtSemNode& e = n->as<ExtSemNode>();
    e.handles.assign(sems, sems + count);
    if (signal) {
      const auto* p = static_cast<const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*>(params);
      e.signals.assign(p, p + count);
    } else {
      const auto* p = static_cast<const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*>(params);
      e.waits.assign(p, p + count);
    }
    e.steps = steps;
    out.push_back(std::move(n));
    return CUDA_SUCCESS;
  });
}

}  // namespace swcu

using swcu::Sym;

extern "C" {

CUresult cuGraphAddExternalSemaphoresSignalNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                const CUgraphNode* dependencies,
                                                size_t numDependencies,
                                                const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddExternalSemaphoresSignalNode, phGraphNode, hGraph, dependencies,
                   numDependencies, nodeParams, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
}

CUresult cuGraphAddExternalSemaphoresWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                              const CUgraphNode* dependencies,
                                              size_t numDependencies,
                                              const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddExternalSemaphoresWaitNode, phGraphNode, hGraph, dependencies,
                   numDependencies, nodeParams, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
}

CUresult cuGraphExternalSemaphoresSignalNodeGetParams(CUgraphNode hNode,
                                                      CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* params_out) {
  return swcu::get(Sym::cuGraphExternalSemaphoresSignalNodeGetParams, hNode, params_out,
                   CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
}

CUresult cuGraphExternalSemaphoresWaitNodeGetParams(CUgraphNode hNode,
                                                    CUDA_EXT_SEM_WAIT_NODE_PARAMS* params_out) {
  return swcu::get(Sym::cuGraphExternalSemaphoresWaitNodeGetParams, hNode, params_out,
                   CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
}

CUresult cuGraphExternalSemaphoresSignalNodeSetParams(
    CUgraphNode hNode, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) {
  return swcu::with_node_of(
      Sym::cuGraphExternalSemaphoresSignalNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL,
      [=](swcu::State& s, swcu::Node& n) { return swcu::set_params(s, n, nodeParams, true); });
}

CUresult cuGraphExternalSemaphoresWaitNodeSetParams(
    CUgraphNode hNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) {
  return swcu::with_node_of(
      Sym::cuGraphExternalSemaphoresWaitNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
      [=](swcu::State& s, swcu::Node& n) { return swcu::set_params(s, n, nodeParams, false); });
}

CUresult cuGraphExecExternalSemaphoresSignalNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* nodeParams) {
  return swcu::exec_set(Sym::cuGraphExecExternalSemaphoresSignalNodeSetParams, hGraphExec, hNode,
                        nodeParams, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
}

CUresult cuGraphExecExternalSemaphoresWaitNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* nodeParams) {
  return swcu::exec_set(Sym::cuGraphExecExternalSemaphoresWaitNodeSetParams, hGraphExec, hNode,
                        nodeParams, CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
}

}  // extern "C"
