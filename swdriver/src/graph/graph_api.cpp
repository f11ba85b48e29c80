// Graph structure (graph.hpp): the nodes, root nodes, edges, dependencies and dependents of a
// graph and its nodes; adding and removing dependencies; destroying a node.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

// Copies `items` out as the list queries do: a count when `out` is NULL; else up to *count
// entries, the rest of the caller's array set to NULL, and *count the number written.
CUresult list_out(const std::vector<CUgraphNode>& items, CUgraphNode* out, CUgraphEdgeData* data,
                  std::size_t* count) {
  if (count == nullptr || (data != nullptr && out == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  if (out == nullptr) {
    *count = items.size();
    return CUDA_SUCCESS;
  }
  const std::size_t n = std::min(*count, items.size());
  for (std::size_t i = 0; i < *count; ++i) {
    out[i] = i < n ? items[i] : nullptr;
    if (data != nullptr) data[i] = CUgraphEdgeData{};
  }
  *count = n;
  return CUDA_SUCCESS;
}

std::vector<CUgraphNode> handles_of(const std::vector<Node*>& nodes) {
  std::vector<CUgraphNode> out;
  out.reserve(nodes.size());
  for (Node* n : nodes) out.push_back(n->handle());
  return out;
}

CUresult get_edges(Sym sym, CUgraph graph, CUgraphNode* from, CUgraphNode* to,
                   CUgraphEdgeData* data, std::size_t* count) {
  return call(sym, [=](State& s) -> CUresult {
    const Graph* const g = find_graph(s, graph);
    if (g == nullptr || count == nullptr || (from == nullptr) != (to == nullptr) ||
        (data != nullptr && from == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::vector<std::pair<Node*, Node*>> edges;
    for (const auto& n : g->nodes) {
      for (Node* d : n->deps) edges.emplace_back(d, n.get());
    }
    if (from == nullptr) {
      *count = edges.size();
      return CUDA_SUCCESS;
    }
    const std::size_t n = std::min(*count, edges.size());
    for (std::size_t i = 0; i < *count; ++i) {
      from[i] = i < n ? edges[i].first->handle() : nullptr;
      to[i] = i < n ? edges[i].second->handle() : nullptr;
      if (data != nullptr) data[i] = CUgraphEdgeData{};
    }
    *count = n;
    return CUDA_SUCCESS;
  });
}

CUresult node_list(Sym sym, CUgraphNode node, bool dependents, CUgraphNode* out,
                   CUgraphEdgeData* data, std::size_t* count) {
  return call(sym, [=](State& s) -> CUresult {
    const Node* const n = find_node(s, node);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return list_out(handles_of(dependents ? n->dependents : n->deps), out, data, count);
  });
}

bool reachable(const Node* from, const Node* to) {
  std::vector<const Node*> stack{from};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n == to) return true;
    if (!seen.insert(n).second) continue;
    for (const Node* d : n->dependents) stack.push_back(d);
  }
  return false;
}

CUresult add_dependencies(Sym sym, CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                          const CUgraphEdgeData* data, std::size_t count) {
  return call(sym, [=](State& s) -> CUresult {
    Graph* const g = find_graph(s, graph);
    if (g == nullptr || !default_edges(data, count)) return CUDA_ERROR_INVALID_VALUE;
    if (count == 0) return CUDA_SUCCESS;
    if (from == nullptr || to == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::set<std::pair<Node*, Node*>> adding;
    for (std::size_t i = 0; i < count; ++i) {
      Node* const f = find_node(s, from[i]);
      Node* const t = find_node(s, to[i]);
      if (f == nullptr || t == nullptr || f->graph != g || t->graph != g || f == t) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      if (std::find(t->deps.begin(), t->deps.end(), f) != t->deps.end() ||
          !adding.emplace(f, t).second) {
        return CUDA_ERROR_INVALID_VALUE;  // an existing (or repeated) dependency
      }
    }
    // Stricter than the real driver: an edge that would close a cycle is refused here.
    std::vector<std::pair<Node*, Node*>> added;
    for (std::size_t i = 0; i < count; ++i) {
      Node* const f = reinterpret_cast<Node*>(from[i]);
      Node* const t = reinterpret_cast<Node*>(to[i]);
      if (reachable(t, f)) {
        for (auto it = added.rbegin(); it != added.rend(); ++it) {  // undo
          it->second->deps.pop_back();
          it->first->dependents.pop_back();
        }
        return CUDA_ERROR_INVALID_VALUE;
      }
      t->deps.push_back(f);
      f->dependents.push_back(t);
      added.emplace_back(f, t);
    }
    return CUDA_SUCCESS;
  });
}

CUresult remove_dependencies(Sym sym, CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                             const CUgraphEdgeData* data, std::size_t count) {
  return call(sym, [=](State& s) -> CUresult {
    Graph* const g = find_graph(s, graph);
    if (g == nullptr || !default_edges(data, count)) return CUDA_ERROR_INVALID_VALUE;
    if (count == 0) return CUDA_SUCCESS;
    if (from == nullptr || to == nullptr || memory_graph(top_graph(*g))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (std::size_t i = 0; i < count; ++i) {
      Node* const f = find_node(s, from[i]);
      Node* const t = find_node(s, to[i]);
      if (f == nullptr || t == nullptr || f->graph != g || t->graph != g ||
          std::find(t->deps.begin(), t->deps.end(), f) == t->deps.end()) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      Node* const f = reinterpret_cast<Node*>(from[i]);
      Node* const t = reinterpret_cast<Node*>(to[i]);
      const auto d = std::find(t->deps.begin(), t->deps.end(), f);
      if (d == t->deps.end()) return CUDA_ERROR_INVALID_VALUE;  // listed twice
      t->deps.erase(d);
      f->dependents.erase(std::find(f->dependents.begin(), f->dependents.end(), t));
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Graph;
using swcu::Node;
using swcu::State;
using swcu::Sym;

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  return call(Sym::cuGraphGetNodes, [=](State& s) -> CUresult {
    const Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<CUgraphNode> all;
    for (const auto& n : g->nodes) all.push_back(n->handle());
    return swcu::list_out(all, nodes, nullptr, numNodes);
  });
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes) {
  return call(Sym::cuGraphGetRootNodes, [=](State& s) -> CUresult {
    const Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<CUgraphNode> roots;
    for (const auto& n : g->nodes) {
      if (n->deps.empty()) roots.push_back(n->handle());
    }
    return swcu::list_out(roots, rootNodes, nullptr, numRootNodes);
  });
}

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* numEdges) {
  return swcu::get_edges(Sym::cuGraphGetEdges, hGraph, from, to, nullptr, numEdges);
}

CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                            CUgraphEdgeData* edgeData, size_t* numEdges) {
  return swcu::get_edges(Sym::cuGraphGetEdges_v2, hGraph, from, to, edgeData, numEdges);
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return call(Sym::cuGraphNodeGetType, [=](State& s) -> CUresult {
    const Node* const n = swcu::find_node(s, hNode);
    if (n == nullptr || type == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *type = static_cast<CUgraphNodeType>(n->type);
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies,
                                    size_t* numDependencies) {
  return swcu::node_list(Sym::cuGraphNodeGetDependencies, hNode, false, dependencies, nullptr,
                         numDependencies);
}

CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies,
                                       CUgraphEdgeData* edgeData, size_t* numDependencies) {
  return swcu::node_list(Sym::cuGraphNodeGetDependencies_v2, hNode, false, dependencies, edgeData,
                         numDependencies);
}

CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                      size_t* numDependentNodes) {
  return swcu::node_list(Sym::cuGraphNodeGetDependentNodes, hNode, true, dependentNodes, nullptr,
                         numDependentNodes);
}

CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                         CUgraphEdgeData* edgeData, size_t* numDependentNodes) {
  return swcu::node_list(Sym::cuGraphNodeGetDependentNodes_v2, hNode, true, dependentNodes,
                         edgeData, numDependentNodes);
}

CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                size_t numDependencies) {
  return swcu::add_dependencies(Sym::cuGraphAddDependencies, hGraph, from, to, nullptr,
                                numDependencies);
}

CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   const CUgraphEdgeData* edgeData, size_t numDependencies) {
  return swcu::add_dependencies(Sym::cuGraphAddDependencies_v2, hGraph, from, to, edgeData,
                                numDependencies);
}

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   size_t numDependencies) {
  return swcu::remove_dependencies(Sym::cuGraphRemoveDependencies, hGraph, from, to, nullptr,
                                   numDependencies);
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                      const CUgraphNode* to, const CUgraphEdgeData* edgeData,
                                      size_t numDependencies) {
  return swcu::remove_dependencies(Sym::cuGraphRemoveDependencies_v2, hGraph, from, to, edgeData,
                                   numDependencies);
}

// Not in graphs with memory nodes, nor in a graph a stream capture records into (documented).
CUresult cuGraphDestroyNode(CUgraphNode hNode) {
  return call(Sym::cuGraphDestroyNode, [=](State& s) -> CUresult {
    Node* const n = swcu::find_node(s, hNode);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Graph& g = *n->graph;
    Graph& top = swcu::top_graph(g);
    if (swcu::memory_graph(top) || swcu::capturing_within(top)) return CUDA_ERROR_INVALID_VALUE;
    for (Node* d : n->deps) std::erase(d->dependents, n);
    for (Node* d : n->dependents) std::erase(d->deps, n);
    const auto it = std::find_if(g.nodes.begin(), g.nodes.end(),
                                 [n](const std::unique_ptr<Node>& p) { return p.get() == n; });
    std::unique_ptr<Node> owned = std::move(*it);
    g.nodes.erase(it);
    swcu::retire_node(std::move(owned));
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
