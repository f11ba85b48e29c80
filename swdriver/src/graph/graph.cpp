// Graphs (graph.hpp): node handles and embedded graph handles with their graveyards; creating,
// cloning, copying and destroying graphs; topological order. Its exports: cuGraphCreate,
// cuGraphDestroy, cuGraphClone, cuGraphNodeFindInClone.
#include "graph/graph.hpp"

#include <algorithm>
#include <deque>
#include <queue>
#include <type_traits>
#include <unordered_map>

#include "graph/graph_internal.hpp"
#include "graph/user_object.hpp"

namespace swcu {
namespace {

constexpr std::size_t kGraveyardSize = 1 << 16;

// Node handles and embedded graph handles, with their graveyards.
struct Handles {
  std::unordered_map<const void*, Node*> nodes;
  std::unordered_map<const void*, Graph*> embedded;
  std::deque<std::unique_ptr<Node>> dead_nodes;
  std::deque<std::unique_ptr<Graph>> dead_graphs;
  std::uint64_t next_id = 1;
};

Handles& handles() noexcept {
  static Handles* const h = new Handles;  // never destroyed, like the state
  return *h;
}

void register_embedded(Graph& g) {
  g.handles = true;
  handles().embedded.emplace(&g, &g);
  for (const auto& n : g.nodes) register_node(*n);
}

// An embedded graph that stops being a handle (its node went).
void retire_graph(std::unique_ptr<Graph> g) noexcept {
  Handles& h = handles();
  h.embedded.erase(g.get());
  for (auto& n : g->nodes) retire_node(std::move(n));
  g->nodes.clear();
  release_refs(state(), g->user_refs);
  try {
    h.dead_graphs.push_back(std::move(g));
  } catch (...) {
    return;
  }
  if (h.dead_graphs.size() > kGraveyardSize) h.dead_graphs.pop_front();
}

enum class CopyKind { clone, instantiate, duplicate };

std::unique_ptr<Graph> copy_level(State& s, const Graph& g, CopyKind kind);

// The parameters of `from` given to its copy `to` (of the same kind); embedded graphs are
// copied too.
template <class Kind>
void copy_params(State& s, const Kind& from, Node& to, CopyKind kind) {
  if constexpr (std::is_same_v<Kind, ChildNode>) {
    if (from.graph) attach_child(to, copy_level(s, *from.graph, kind));
  } else if constexpr (std::is_same_v<Kind, ConditionalNode>) {
    ConditionalNode& c = to.as<ConditionalNode>();
    c.handle = from.handle;
    c.type = from.type;
    c.ctx = from.ctx;
    for (const auto& body : from.bodies) {
      auto b = copy_level(s, *body, kind);
      b->parent = &to;
      b->is_body = true;
      c.body_handles.push_back(b->handle());
      c.bodies.push_back(std::move(b));
    }
  } else if constexpr (std::is_same_v<Kind, KernelNode>) {
    KernelNode& k = to.as<KernelNode>();
    k = from;
    k.param_pointers.clear();  // the copy's own arrays are rebuilt by a query
    k.extra = {};
  } else {
    to.params = from;
  }
}

std::unique_ptr<Node> copy_node(State& s, const Node& n, CopyKind kind) {
  auto c = std::make_unique<Node>(n.type);
  c->id = next_graph_id();
  c->origins = kind == CopyKind::duplicate ? n.origins : std::vector<std::uint64_t>{n.id};
  c->enabled = kind == CopyKind::duplicate ? n.enabled : true;
  c->fault = n.fault;
  std::visit([&](const auto& from) { copy_params(s, from, *c, kind); }, n.params);
  return c;
}

std::unique_ptr<Graph> copy_level(State& s, const Graph& g, CopyKind kind) {
  auto out = std::make_unique<Graph>();
  out->id = next_graph_id();
  out->conditions = g.conditions;
  out->is_body = g.is_body;
  if (kind == CopyKind::clone) {
    out->user_refs = g.user_refs;
    retain_refs(out->user_refs);
  }
  std::unordered_map<const Node*, Node*> map;
  out->nodes.reserve(g.nodes.size());
  for (const auto& n : g.nodes) {
    auto c = copy_node(s, *n, kind);
    c->graph = out.get();
    map.emplace(n.get(), c.get());
    out->nodes.push_back(std::move(c));
  }
  for (const auto& n : g.nodes) {
    Node* const c = map.at(n.get());
    for (const Node* d : n->deps) c->deps.push_back(map.at(d));
    for (const Node* d : n->dependents) c->dependents.push_back(map.at(d));
  }
  if (kind != CopyKind::clone) {
    Node* cycle = nullptr;
    if (!topological_order(*out, out->order, cycle)) out->order.clear();
  }
  return out;
}

}  // namespace

// ---- node.hpp ----

NodeParams node_kind_of(int type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return KernelNode{};
    case CU_GRAPH_NODE_TYPE_MEMCPY: return CopyNode{};
    case CU_GRAPH_NODE_TYPE_MEMSET: return FillNode{};
    case CU_GRAPH_NODE_TYPE_HOST: return HostNode{};
    case CU_GRAPH_NODE_TYPE_GRAPH: return ChildNode{};
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return EventNode{};
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return AllocNode{};
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return FreeNode{};
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return ConditionalNode{};
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return ExtSemNode{};
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return MemOpNode{};
    default: return EmptyNode{};
  }
}

Node::Node(int node_type) : type(node_type), params(node_kind_of(node_type)) {}
Node::~Node() = default;

GraphMemory* Node::memory() const noexcept {
  if (const auto* a = if_kind<AllocNode>()) return a->memory.get();
  if (const auto* f = if_kind<FreeNode>()) return f->memory.get();
  return nullptr;
}

// ---- graph_internal.hpp ----

void register_node(Node& n) {
  handles().nodes.emplace(&n, &n);
  n.for_each_embedded([](Graph& g) { register_embedded(g); });
}

void retire_node(std::unique_ptr<Node> n) noexcept {
  Handles& h = handles();
  h.nodes.erase(n.get());
  if (auto* c = n->if_kind<ChildNode>(); c != nullptr && c->graph) {
    retire_graph(std::move(c->graph));
  }
  if (auto* c = n->if_kind<ConditionalNode>()) {
    for (auto& body : c->bodies) retire_graph(std::move(body));
  }
  if (auto* f = n->if_kind<FreeNode>(); f != nullptr && f->memory) {
    f->memory->freed_in_owner = false;  // it may be freed again, by another node
    f->memory->freed_elsewhere = false;
  }
  try {
    n->params = node_kind_of(n->type);  // what it owns goes
  } catch (...) {
    n->params = EmptyNode{};
  }
  n->deps.clear();
  n->dependents.clear();
  try {
    h.dead_nodes.push_back(std::move(n));
  } catch (...) {
    return;
  }
  if (h.dead_nodes.size() > kGraveyardSize) h.dead_nodes.pop_front();
}

void adopt(Graph& g, Context* ctx) noexcept {
  Graph& top = top_graph(g);
  if (top.ctx == nullptr && ctx != nullptr && top.parent == nullptr) top.ctx = ctx;
}

Context* current_or_null(State& s) noexcept {
  Context* ctx = nullptr;
  return current_context(s, ctx) == CUDA_SUCCESS ? ctx : nullptr;
}

CUresult context_arg(State& s, CUcontext handle, Context*& out) {
  if (handle == nullptr) {
    out = current_or_null(s);
    return CUDA_SUCCESS;
  }
  out = s.context(handle);
  return out == nullptr ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

bool memory_graph(const Graph& g) noexcept {
  return contains(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC) || contains(g, CU_GRAPH_NODE_TYPE_MEM_FREE);
}

// ---- graph.hpp ----

Graph::~Graph() = default;

void Graph::release() noexcept {
  for (auto& n : nodes) retire_node(std::move(n));
  nodes.clear();
  release_refs(state(), user_refs);
  conditions.clear();
}

std::uint64_t next_graph_id() noexcept { return handles().next_id++; }

Graph* find_graph(State& s, CUgraph handle) noexcept {
  if (Graph* g = s.find<Graph>(SWCU_GRAPH, handle)) return g;
  const auto& embedded = handles().embedded;
  const auto it = embedded.find(handle);
  return it == embedded.end() ? nullptr : it->second;
}

Node* find_node(State&, CUgraphNode handle) noexcept {
  const auto& nodes = handles().nodes;
  const auto it = nodes.find(handle);
  return it == nodes.end() ? nullptr : it->second;
}

Graph& top_graph(Graph& g) noexcept {
  Graph* level = &g;
  while (level->parent != nullptr) level = level->parent->graph;
  return *level;
}

bool in_body(const Graph& g) noexcept {
  for (const Graph* level = &g; level != nullptr;
       level = level->parent != nullptr ? level->parent->graph : nullptr) {
    if (level->is_body) return true;
  }
  return false;
}

bool capturing_within(const Graph& g) noexcept {
  if (g.capturing) return true;
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const std::unique_ptr<Node>& n) {
    bool found = false;
    n->for_each_embedded([&found](const Graph& e) { found = found || capturing_within(e); });
    return found;
  });
}

Graph* create_graph(State& s) {
  auto g = std::make_unique<Graph>();
  g->id = next_graph_id();
  g->handles = true;
  g->ctx = current_or_null(s);
  return s.registry(SWCU_GRAPH).add(std::move(g));
}

CUresult check_dependencies(const Graph& g, const CUgraphNode* deps, std::size_t count) noexcept {
  State& s = state();
  for (std::size_t i = 0; i < count; ++i) {
    const Node* const d = find_node(s, deps[i]);
    if (d == nullptr || d->graph != &g) return CUDA_ERROR_INVALID_VALUE;
    for (std::size_t j = 0; j < i; ++j) {
      if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;  // duplicates
    }
  }
  return CUDA_SUCCESS;
}

Node* add_node(State&, Graph& g, const std::vector<Node*>& deps, std::unique_ptr<Node> node) {
  Node* const n = node.get();
  n->id = next_graph_id();
  n->graph = &g;
  g.nodes.reserve(g.nodes.size() + 1);
  for (Node* d : deps) d->dependents.reserve(d->dependents.size() + 1);
  n->deps = deps;
  if (g.handles) register_node(*n);
  g.nodes.push_back(std::move(node));
  for (Node* d : deps) d->dependents.push_back(n);
  return n;
}

std::unique_ptr<Graph> copy_graph(State& s, const Graph& g, bool handles) {
  if (handles) return copy_level(s, g, CopyKind::clone);
  // An executable graph's copy of another executable copy keeps origins and enabled states.
  return copy_level(s, g, g.handles ? CopyKind::instantiate : CopyKind::duplicate);
}

bool contains(const Graph& g, int type) noexcept {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [type](const std::unique_ptr<Node>& n) {
    if (n->type == type) return true;
    bool found = false;
    n->for_each_embedded([&](const Graph& e) { found = found || contains(e, type); });
    return found;
  });
}

UserRefs all_user_refs(const Graph& g) {
  UserRefs out = g.user_refs;
  for (const auto& n : g.nodes) {
    n->for_each_embedded([&out](const Graph& e) {
      for (const auto& [object, count] : all_user_refs(e)) out[object] += count;
    });
  }
  return out;
}

Node* find_by_origin(Graph& g, std::uint64_t origin) noexcept {
  for (const auto& n : g.nodes) {
    if (std::find(n->origins.begin(), n->origins.end(), origin) != n->origins.end()) {
      return n.get();
    }
    Node* found = nullptr;
    n->for_each_embedded([&](Graph& e) {
      if (found == nullptr) found = find_by_origin(e, origin);
    });
    if (found != nullptr) return found;
  }
  return nullptr;
}

bool topological_order(const Graph& g, std::vector<Node*>& out, Node*& cycle) {
  std::unordered_map<const Node*, std::size_t> index, waiting;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    index.emplace(g.nodes[i].get(), i);
    waiting.emplace(g.nodes[i].get(), g.nodes[i]->deps.size());
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i]->deps.empty()) ready.push(i);
  }
  out.clear();
  while (!ready.empty()) {
    Node* const n = g.nodes[ready.top()].get();
    ready.pop();
    out.push_back(n);
    for (const Node* d : n->dependents) {
      if (--waiting[d] == 0) ready.push(index[d]);
    }
  }
  if (out.size() == g.nodes.size()) return true;
  for (const auto& n : g.nodes) {
    if (waiting[n.get()] != 0) {
      cycle = n.get();
      break;
    }
  }
  return false;
}

void destroy_graph(State& s, Graph& g) noexcept { s.destroy(SWCU_GRAPH, &g); }

void reclaim_graphs(State& s, Context& ctx) noexcept {
  reclaim_captures(s, ctx);
  reclaim_execs(s, ctx);
  for (const void* h : s.registry(SWCU_GRAPH).handles_if([&ctx](const Object& o) {
         return static_cast<const Graph&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_GRAPH, h);
  }
}

}  // namespace swcu

// ---- exports ----

extern "C" {

using swcu::call;
using swcu::Graph;
using swcu::Node;
using swcu::State;
using swcu::Sym;

CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return call(Sym::cuGraphCreate, [=](State& s) -> CUresult {
    if (phGraph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    *phGraph = swcu::create_graph(s)->handle();
    return CUDA_SUCCESS;
  });
}

// The graph a stream capture records into (or into one of its bodies) cannot be destroyed until
// the capture ends.
CUresult cuGraphDestroy(CUgraph hGraph) {
  return call(Sym::cuGraphDestroy, [=](State& s) -> CUresult {
    Graph* const g = s.find<Graph>(SWCU_GRAPH, hGraph);
    if (g == nullptr || swcu::capturing_within(*g)) return CUDA_ERROR_INVALID_VALUE;
    swcu::destroy_graph(s, *g);
    return CUDA_SUCCESS;
  });
}

// As documented, graphs with memory or conditional nodes cannot be cloned.
CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return call(Sym::cuGraphClone, [=](State& s) -> CUresult {
    const Graph* const g = swcu::find_graph(s, originalGraph);
    if (g == nullptr || phGraphClone == nullptr || swcu::memory_graph(*g) ||
        swcu::contains(*g, CU_GRAPH_NODE_TYPE_CONDITIONAL)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto clone = swcu::copy_graph(s, *g, true);
    clone->handles = true;
    clone->ctx = swcu::top_graph(const_cast<Graph&>(*g)).ctx;
    clone->is_body = false;
    Graph* const added = s.registry(SWCU_GRAPH).add(std::move(clone));
    for (const auto& n : added->nodes) swcu::register_node(*n);
    *phGraphClone = added->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode,
                                CUgraph hClonedGraph) {
  return call(Sym::cuGraphNodeFindInClone, [=](State& s) -> CUresult {
    const Node* const original = swcu::find_node(s, hOriginalNode);
    const Graph* const clone = swcu::find_graph(s, hClonedGraph);
    if (phNode == nullptr || original == nullptr || clone == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (const auto& n : clone->nodes) {
      if (std::find(n->origins.begin(), n->origins.end(), original->id) != n->origins.end()) {
        *phNode = n->handle();
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

}  // extern "C"
