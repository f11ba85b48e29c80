// Graphs (graph.hpp): creating, cloning and destroying graphs; adding, querying and removing
// nodes and edges; node parameters; conditional handles; graph memory.
#include "graph/graph.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "module/module.hpp"
#include "graph/user_object.hpp"

namespace swcu {
namespace {

constexpr unsigned kMaxBlock[3] = {1024, 1024, 64};
constexpr unsigned kMaxGrid[3] = {2147483647u, 65535, 65535};
constexpr std::size_t kMaxParamBytes = 32764;
constexpr std::size_t kGraveyardSize = 1 << 16;

// Node handles, embedded graph handles and graph memory, with their graveyards.
struct Handles {
  std::unordered_map<const void*, Node*> nodes;
  std::unordered_map<const void*, Graph*> embedded;
  std::map<std::uintptr_t, GraphMemory*> memory;
  std::deque<std::unique_ptr<Node>> dead_nodes;
  std::deque<std::unique_ptr<Graph>> dead_graphs;
  std::uint64_t next_id = 1;
  CUgraphConditionalHandle next_condition = 1;
};

Handles& handles() noexcept {
  static Handles* const h = new Handles;  // never destroyed, like the state
  return *h;
}

void register_embedded(Graph& g);

void register_node(Node& n) {
  handles().nodes.emplace(&n, &n);
  if (n.child) register_embedded(*n.child);
  for (const auto& body : n.bodies) register_embedded(*body);
}

void register_embedded(Graph& g) {
  g.handles = true;
  handles().embedded.emplace(&g, &g);
  for (const auto& n : g.nodes) register_node(*n);
}

void retire_graph(std::unique_ptr<Graph> g) noexcept;

// A node that stops being a handle: it leaves the maps, what it owns goes, the object waits.
void retire_node(std::unique_ptr<Node> n) noexcept {
  Handles& h = handles();
  h.nodes.erase(n.get());
  if (n->child) retire_graph(std::move(n->child));
  for (auto& body : n->bodies) retire_graph(std::move(body));
  n->bodies.clear();
  if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE && n->memory) {
    n->memory->freed_in_owner = false;  // it may be freed again, by another node
    n->memory->freed_elsewhere = false;
  }
  n->memory.reset();
  n->kernel = KernelArgs{};
  n->deps.clear();
  n->dependents.clear();
  try {
    h.dead_nodes.push_back(std::move(n));
  } catch (...) {
    return;
  }
  if (h.dead_nodes.size() > kGraveyardSize) h.dead_nodes.pop_front();
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

// The context a node of `g` runs in makes a program's graph without one that context's.
void adopt(Graph& g, Context* ctx) noexcept {
  Graph& top = top_graph(g);
  if (top.ctx == nullptr && ctx != nullptr && top.parent == nullptr) top.ctx = ctx;
}

// The current context, or nullptr (no error).
Context* current_or_null(State& s) noexcept {
  Context* ctx = nullptr;
  return current_context(s, ctx) == CUDA_SUCCESS ? ctx : nullptr;
}

// A context argument: NULL is the current context (nullptr when there is none).
CUresult context_arg(State& s, CUcontext handle, Context*& out) {
  if (handle == nullptr) {
    out = current_or_null(s);
    return CUDA_SUCCESS;
  }
  out = s.context(handle);
  return out == nullptr ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

// ---- node parameters ----

CUresult pack_kernel(const CUDA_KERNEL_NODE_PARAMS_v2& p, const KernelDesc& k, KernelArgs& out) {
  if (p.kernelParams != nullptr && p.extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (k.layout_known) {
    for (const ParamLayout& l : k.params) {
      out.offsets.push_back(l.offset);
      out.sizes.push_back(l.size);
    }
  }
  if (p.extra != nullptr) {
    const void* buffer = nullptr;
    const std::size_t* size = nullptr;
    for (std::size_t i = 0; p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = p.extra[i + 1];
      } else if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const std::size_t*>(p.extra[i + 1]);
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (size == nullptr || (*size > 0 && buffer == nullptr) || *size > kMaxParamBytes) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (k.layout_known && *size < k.params_size) return CUDA_ERROR_INVALID_VALUE;
    const auto* bytes = static_cast<const unsigned char*>(buffer);
    out.params.assign(bytes, bytes + *size);
    out.from_extra = true;
    return CUDA_SUCCESS;
  }
  if (!k.layout_known) return p.kernelParams != nullptr ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
  if (k.params.empty()) return CUDA_SUCCESS;
  if (p.kernelParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out.params.assign(k.params_size, 0);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (p.kernelParams[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(out.params.data() + k.params[i].offset, p.kernelParams[i], k.params[i].size);
  }
  return CUDA_SUCCESS;
}

// One side of a CUDA_MEMCPY3D: where it starts, checked like an enqueued copy's.
CUresult copy_side(State& s, int type, const void* host, CUdeviceptr device, std::size_t x,
                   std::size_t y, std::size_t z, std::size_t pitch, std::size_t width,
                   std::size_t height, std::uintptr_t& address, std::size_t& out_pitch) {
  std::uintptr_t base = 0;
  switch (type) {
    case CU_MEMORYTYPE_HOST: base = reinterpret_cast<std::uintptr_t>(host); break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = device; break;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;  // no CUDA arrays here
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (z != 0) return CUDA_ERROR_NOT_SUPPORTED;  // one slice only (Depth 1)
  if (height > 1 && (pitch < width || x > pitch - width)) return CUDA_ERROR_INVALID_VALUE;
  if (y != 0 && pitch > (std::numeric_limits<std::size_t>::max() - x) / y) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  address = base + y * pitch + x;
  out_pitch = height > 1 ? pitch : width;
  if (width == 0) return CUDA_SUCCESS;
  if (height > 1 && pitch > (std::numeric_limits<std::size_t>::max() - width) / (height - 1)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t span = (height - 1) * out_pitch + width;
  const bool driver_memory = find_allocation(s, address) != nullptr;
  if (type == CU_MEMORYTYPE_DEVICE || driver_memory) {
    if (find_range(s, address, span, Access::enqueue) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  } else if (address == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

bool memory_graph(const Graph& g) noexcept {
  return contains(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC) || contains(g, CU_GRAPH_NODE_TYPE_MEM_FREE);
}

// Node types a conditional body (and what it embeds) may hold.
bool allowed_in_body(int type) noexcept {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_GRAPH:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return true;
    default: return false;
  }
}

bool only_body_types(const Graph& g) noexcept {
  return std::all_of(g.nodes.begin(), g.nodes.end(), [](const std::unique_ptr<Node>& n) {
    if (!allowed_in_body(n->type)) return false;
    return !n->child || only_body_types(*n->child);
  });
}

// A node of `type` may join `g`.
CUresult check_placement(const Graph& g, int type) noexcept {
  if (in_body(g) && !allowed_in_body(type)) return CUDA_ERROR_INVALID_VALUE;
  if ((type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || type == CU_GRAPH_NODE_TYPE_MEM_FREE) &&
      g.parent != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;  // not in child graphs or bodies
  }
  return CUDA_SUCCESS;
}

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
    auto node = std::make_unique<Node>();
    node->type = type;
    node->graph = g;
    if (const CUresult r = make(s, *g, *node)) return r;
    *out = add_node(s, *g, dependency_list(deps, count), std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

CUresult set_kernel(State& s, Node& n, const CUDA_KERNEL_NODE_PARAMS_v2& p) {
  KernelArgs k;
  if (const CUresult r = make_kernel(s, p, k)) return r;
  n.kernel = std::move(k);
  adopt(*n.graph, n.kernel.owner);
  return CUDA_SUCCESS;
}

CUresult set_copy(State& s, Node& n, const CUDA_MEMCPY3D& p, CUcontext ctx) {
  Context* c = nullptr;
  if (const CUresult r = context_arg(s, ctx, c)) return r;
  CopyShape shape;
  if (const CUresult r = make_copy(s, p, shape)) return r;
  n.copy = p;
  n.copy_shape = shape;
  n.ctx = ctx != nullptr ? ctx : (c != nullptr ? c->handle() : nullptr);
  adopt(*n.graph, c);
  return CUDA_SUCCESS;
}

CUresult set_fill(State& s, Node& n, const CUDA_MEMSET_NODE_PARAMS& p, CUcontext ctx) {
  Context* c = nullptr;
  if (const CUresult r = context_arg(s, ctx, c)) return r;
  FillShape shape;
  if (const CUresult r = make_fill(s, p, shape)) return r;
  n.fill = p;
  n.fill_shape = shape;
  n.ctx = ctx != nullptr ? ctx : (c != nullptr ? c->handle() : nullptr);
  adopt(*n.graph, c);
  return CUDA_SUCCESS;
}

CUresult set_host(Node& n, const CUDA_HOST_NODE_PARAMS& p) {
  if (p.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  n.host = p;
  return CUDA_SUCCESS;
}

CUresult set_event(State& s, Node& n, CUevent event, CUresult invalid) {
  const Event* const e = s.find<Event>(SWCU_EVENT, event);
  if (e == nullptr) return invalid;
  n.event = event;
  adopt(*n.graph, e->ctx);
  return CUDA_SUCCESS;
}

CUresult make_alloc(State& s, Node& n, CUDA_MEM_ALLOC_NODE_PARAMS& p) {
  const CUmemPoolProps& props = p.poolProps;
  if (raw(props.allocType) != CU_MEM_ALLOCATION_TYPE_PINNED ||
      raw(props.location.type) != CU_MEM_LOCATION_TYPE_DEVICE ||
      s.device(props.location.id) == nullptr || p.bytesize == 0 ||
      (p.accessDescCount > 0 && p.accessDescs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (std::size_t i = 0; i < p.accessDescCount; ++i) {
    const CUmemAccessDesc& d = p.accessDescs[i];
    const int flags = raw(d.flags);
    if (raw(d.location.type) != CU_MEM_LOCATION_TYPE_DEVICE || s.device(d.location.id) == nullptr ||
        (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
         flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  auto memory = new_graph_memory(s, p.bytesize, props.location.id);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  memory->access.assign(p.accessDescs, p.accessDescs + p.accessDescCount);
  memory->params = p;
  memory->params.accessDescs = memory->access.data();
  memory->params.dptr = memory->address();
  p.dptr = memory->address();
  n.memory = std::move(memory);
  return CUDA_SUCCESS;
}

CUresult make_free(Graph& g, Node& n, CUdeviceptr dptr) {
  GraphMemory* const m = find_graph_memory(dptr);
  if (m == nullptr || m->freed_in_owner || m->freed_elsewhere) return CUDA_ERROR_INVALID_VALUE;
  // Is the allocation node in this graph? Then this is the owner's free.
  bool own = false;
  for (const auto& node : g.nodes) {
    if (node->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && node->memory.get() == m) own = true;
  }
  (own ? m->freed_in_owner : m->freed_elsewhere) = true;
  n.memory = m->shared_from_this();
  n.free_address = dptr;
  return CUDA_SUCCESS;
}

const Condition* find_condition(const Graph& g, CUgraphConditionalHandle handle) noexcept {
  for (const Graph* level = &g; level != nullptr;
       level = level->parent != nullptr ? level->parent->graph : nullptr) {
    for (const Condition& c : level->conditions) {
      if (c.handle == handle) return &c;
    }
  }
  return nullptr;
}

CUresult make_conditional(State& s, Graph& g, Node& n, CUDA_CONDITIONAL_NODE_PARAMS& p) {
  const Condition* const c = find_condition(g, p.handle);
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (const CUresult r = context_arg(s, p.ctx, ctx)) return r;
  if (ctx != c->ctx) return CUDA_ERROR_INVALID_VALUE;  // the handle's context
  const int type = raw(p.type);
  const bool size_ok = (type == CU_GRAPH_COND_TYPE_IF && (p.size == 1 || p.size == 2)) ||
                       (type == CU_GRAPH_COND_TYPE_WHILE && p.size == 1) ||
                       (type == CU_GRAPH_COND_TYPE_SWITCH && p.size >= 1);
  if (!size_ok) return CUDA_ERROR_INVALID_VALUE;
  n.condition = p.handle;
  n.condition_type = type;
  n.condition_ctx = ctx;
  for (unsigned i = 0; i < p.size; ++i) {
    auto body = std::make_unique<Graph>();
    body->id = next_graph_id();
    body->parent = &n;
    body->is_body = true;
    n.body_handles.push_back(body->handle());
    n.bodies.push_back(std::move(body));
  }
  p.phGraph_out = n.body_handles.data();
  adopt(g, ctx);
  return CUDA_SUCCESS;
}

// A child graph moved into a node (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE): it stops being a
// program's graph.
CUresult move_child(State& s, Graph& parent, CUgraph child, std::unique_ptr<Graph>& out) {
  Graph* const g = s.find<Graph>(SWCU_GRAPH, child);
  if (g == nullptr || g == &top_graph(parent) || g->capturing ||
      contains(*g, CU_GRAPH_NODE_TYPE_CONDITIONAL) || exec_count(g->id) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (in_body(parent) && !only_body_types(*g)) return CUDA_ERROR_INVALID_VALUE;
  std::unique_ptr<Object> taken = s.registry(SWCU_GRAPH).take(child);
  out.reset(static_cast<Graph*>(taken.release()));
  out->ctx = nullptr;
  return CUDA_SUCCESS;
}

// The union of cuGraphAddNode and cuGraphNodeSetParams, for the node types they share.
CUresult from_union(State& s, Graph& g, Node& n, CUgraphNodeParams& p, bool adding) {
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS_v2 k{};
      std::memcpy(&k, &p.kernel, sizeof k);  // v3 has v2's layout
      return set_kernel(s, n, k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      if (p.memcpy.flags != 0 || p.memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      return set_copy(s, n, p.memcpy.copyParams, p.memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS m{};
      m.dst = p.memset.dst;
      m.pitch = p.memset.pitch;
      m.value = p.memset.value;
      m.elementSize = p.memset.elementSize;
      m.width = p.memset.width;
      m.height = p.memset.height;
      return set_fill(s, n, m, p.memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: return set_host(n, {p.host.fn, p.host.userData});
    case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return set_event(s, n, p.eventWait.event, CUDA_ERROR_INVALID_VALUE);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return set_event(s, n, p.eventRecord.event, CUDA_ERROR_INVALID_VALUE);
    default: break;
  }
  if (!adding) return CUDA_ERROR_NOT_SUPPORTED;
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      const int ownership = raw(p.graph.ownership);
      if (ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
        if (const CUresult r = move_child(s, g, p.graph.graph, n.child)) return r;
      } else if (ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) {
        const Graph* const child = find_graph(s, p.graph.graph);
        if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
        if (in_body(g) && !only_body_types(*child)) return CUDA_ERROR_INVALID_VALUE;
        if (const CUresult r = make_child(s, *child, n.child)) return r;
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
      n.child->parent = &n;
      n.child_handle = n.child->handle();
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      CUDA_MEM_ALLOC_NODE_PARAMS a{};
      std::memcpy(&a, &p.alloc, sizeof a);  // v2 has v1's layout
      if (const CUresult r = make_alloc(s, n, a)) return r;
      p.alloc.dptr = a.dptr;
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return make_free(g, n, p.free.dptr);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return make_conditional(s, g, n, p.conditional);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

bool default_edges(const CUgraphEdgeData* data, std::size_t count) noexcept {
  if (data == nullptr) return true;
  for (std::size_t i = 0; i < count; ++i) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&data[i]);
    if (std::any_of(bytes, bytes + sizeof(CUgraphEdgeData),
                    [](unsigned char b) { return b != 0; })) {
      return false;
    }
  }
  return true;
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
    auto node = std::make_unique<Node>();
    node->type = type;
    node->graph = g;
    if (const CUresult r = from_union(s, *g, *node, *p, true)) return r;
    *out = add_node(s, *g, dependency_list(deps, count), std::move(node))->handle();
    return CUDA_SUCCESS;
  });
}

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
    const CUDA_KERNEL_NODE_PARAMS_v2 p = kernel_params(n.kernel);
    if (v1) {
      std::memcpy(out, &p, sizeof(CUDA_KERNEL_NODE_PARAMS_v1));
    } else {
      *out = p;
    }
    return CUDA_SUCCESS;
  });
}

CUDA_KERNEL_NODE_PARAMS_v2 from_v1(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  CUDA_KERNEL_NODE_PARAMS_v2 out{};
  std::memcpy(&out, &p, sizeof p);
  return out;
}

}  // namespace

// ---- graph.hpp ----

GraphMemory::~GraphMemory() {
  if (!allocation) return;
  State& s = state();
  handles().memory.erase(allocation->base);
  const auto it = s.address_map.find(allocation->base);
  if (it != s.address_map.end() && it->second == allocation.get()) s.address_map.erase(it);
  allocation->release();
}

Node::~Node() = default;
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

CUresult make_kernel(State& s, const CUDA_KERNEL_NODE_PARAMS_v2& p, KernelArgs& out) {
  const void* const handle =
      p.func != nullptr ? static_cast<const void*>(p.func) : static_cast<const void*>(p.kern);
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const KernelDesc* const k = describe(s, handle);
  if (k == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FuncSettings set;
  if (Function* const f = find_function(s, handle)) {
    set = effective_settings(*f);
    out.owner = f->module->ctx;
  } else if (p.ctx != nullptr) {
    out.owner = s.context(p.ctx);
    if (out.owner == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  const unsigned grid[3] = {p.gridDimX, p.gridDimY, p.gridDimZ};
  const unsigned block[3] = {p.blockDimX, p.blockDimY, p.blockDimZ};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0 || grid[i] > kMaxGrid[i] || block[i] > kMaxBlock[i]) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  const unsigned long long threads = 1ULL * block[0] * block[1] * block[2];
  if (threads > static_cast<unsigned long long>(kMaxThreadsPerBlock) ||
      threads > static_cast<unsigned long long>(max_threads(*k)) ||
      p.sharedMemBytes > static_cast<unsigned>(max_dynamic_shared(*k, set))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r = pack_kernel(p, *k, out)) return r;
  out.func = p.func;
  out.kern = p.kern;
  out.ctx = p.ctx;
  std::copy(grid, grid + 3, out.grid.begin());
  std::copy(block, block + 3, out.block.begin());
  out.shared = p.sharedMemBytes;
  out.name = k->name;
  return CUDA_SUCCESS;
}

CUDA_KERNEL_NODE_PARAMS_v2 kernel_params(KernelArgs& k) {
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  p.func = k.func;
  p.kern = k.kern;
  p.ctx = k.ctx;
  p.gridDimX = k.grid[0];
  p.gridDimY = k.grid[1];
  p.gridDimZ = k.grid[2];
  p.blockDimX = k.block[0];
  p.blockDimY = k.block[1];
  p.blockDimZ = k.block[2];
  p.sharedMemBytes = k.shared;
  if (k.from_extra) {
    k.extra_size = k.params.size();
    k.extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, k.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
               &k.extra_size, CU_LAUNCH_PARAM_END};
    p.extra = k.extra.data();
  } else {
    k.param_pointers.resize(k.offsets.size());
    for (std::size_t i = 0; i < k.offsets.size(); ++i) {
      k.param_pointers[i] = k.params.data() + k.offsets[i];
    }
    p.kernelParams = k.param_pointers.empty() ? nullptr : k.param_pointers.data();
  }
  return p;
}

CUresult make_copy(State& s, const CUDA_MEMCPY3D& p, CopyShape& out) {
  if (p.Depth != 1 || p.Height == 0) {
    return p.Depth > 1 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r =
          copy_side(s, raw(p.dstMemoryType), p.dstHost, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ,
                    p.dstPitch, p.WidthInBytes, p.Height, out.dst, out.dst_pitch)) {
    return r;
  }
  if (const CUresult r =
          copy_side(s, raw(p.srcMemoryType), p.srcHost, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ,
                    p.srcPitch, p.WidthInBytes, p.Height, out.src, out.src_pitch)) {
    return r;
  }
  out.width = p.WidthInBytes;
  out.height = p.Height;
  return CUDA_SUCCESS;
}

CUresult make_fill(State& s, const CUDA_MEMSET_NODE_PARAMS& p, FillShape& out) {
  const unsigned size = p.elementSize;
  if ((size != 1 && size != 2 && size != 4) || p.dst % size != 0 || p.width == 0 || p.height == 0 ||
      p.width > std::numeric_limits<std::size_t>::max() / size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t row = p.width * size;
  if (p.height > 1 &&
      (p.pitch < row || p.pitch % size != 0 ||
       p.pitch > (std::numeric_limits<std::size_t>::max() - row) / (p.height - 1))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t span = (p.height - 1) * p.pitch + row;
  if (find_range(s, p.dst, span, Access::enqueue) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out.dst = p.dst;
  out.pitch = p.height > 1 ? p.pitch : row;
  out.value = size == 4 ? p.value : (size == 2 ? (p.value & 0xffffu) : (p.value & 0xffu));
  out.element_size = size;
  out.width = p.width;
  out.height = p.height;
  return CUDA_SUCCESS;
}

CUresult make_child(State& s, const Graph& child, std::unique_ptr<Graph>& out) {
  if (memory_graph(child) || contains(child, CU_GRAPH_NODE_TYPE_CONDITIONAL) || child.capturing) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out = copy_graph(s, child, true);
  return CUDA_SUCCESS;
}

namespace {

enum class CopyKind { clone, instantiate, duplicate };

std::unique_ptr<Graph> copy_level(State& s, const Graph& g, CopyKind kind);

std::unique_ptr<Node> copy_node(State& s, const Node& n, CopyKind kind) {
  auto c = std::make_unique<Node>();
  c->id = next_graph_id();
  c->origins = kind == CopyKind::duplicate ? n.origins : std::vector<std::uint64_t>{n.id};
  c->type = n.type;
  c->kernel = n.kernel;
  c->kernel.param_pointers.clear();
  c->kernel.extra = {};
  c->copy = n.copy;
  c->copy_shape = n.copy_shape;
  c->fill = n.fill;
  c->fill_shape = n.fill_shape;
  c->ctx = n.ctx;
  c->host = n.host;
  c->event = n.event;
  c->memory = n.memory;
  c->free_address = n.free_address;
  c->condition = n.condition;
  c->condition_type = n.condition_type;
  c->condition_ctx = n.condition_ctx;
  c->enabled = kind == CopyKind::duplicate ? n.enabled : true;
  if (n.child) {
    c->child = copy_level(s, *n.child, kind);
    c->child->parent = c.get();
    c->child_handle = c->child->handle();
  }
  for (const auto& body : n.bodies) {
    auto b = copy_level(s, *body, kind);
    b->parent = c.get();
    b->is_body = true;
    c->body_handles.push_back(b->handle());
    c->bodies.push_back(std::move(b));
  }
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

std::unique_ptr<Graph> copy_graph(State& s, const Graph& g, bool handles) {
  if (handles) return copy_level(s, g, CopyKind::clone);
  // An executable graph's copy of another executable copy keeps origins and enabled states.
  return copy_level(s, g, g.handles ? CopyKind::instantiate : CopyKind::duplicate);
}

bool contains(const Graph& g, int type) noexcept {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [type](const std::unique_ptr<Node>& n) {
    if (n->type == type) return true;
    if (n->child && contains(*n->child, type)) return true;
    return std::any_of(n->bodies.begin(), n->bodies.end(),
                       [type](const std::unique_ptr<Graph>& b) { return contains(*b, type); });
  });
}

UserRefs all_user_refs(const Graph& g) {
  UserRefs out = g.user_refs;
  for (const auto& n : g.nodes) {
    std::vector<const Graph*> embedded;
    if (n->child) embedded.push_back(n->child.get());
    for (const auto& b : n->bodies) embedded.push_back(b.get());
    for (const Graph* e : embedded) {
      for (const auto& [object, count] : all_user_refs(*e)) out[object] += count;
    }
  }
  return out;
}

Node* find_by_origin(Graph& g, std::uint64_t origin) noexcept {
  for (const auto& n : g.nodes) {
    if (std::find(n->origins.begin(), n->origins.end(), origin) != n->origins.end()) {
      return n.get();
    }
    if (n->child) {
      if (Node* found = find_by_origin(*n->child, origin)) return found;
    }
    for (const auto& b : n->bodies) {
      if (Node* found = find_by_origin(*b, origin)) return found;
    }
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

GraphMemory* find_graph_memory(std::uintptr_t address) noexcept {
  const auto& memory = handles().memory;
  const auto it = memory.find(address);
  return it == memory.end() ? nullptr : it->second;
}

std::shared_ptr<GraphMemory> new_graph_memory(State& s, std::size_t bytes, int device) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > std::numeric_limits<std::size_t>::max() - page) return nullptr;
  const std::size_t mapped = (bytes + page - 1) / page * page;
  auto a = std::make_unique<Allocation>(SWCU_GRAPH, Allocation::Memory::device);
  void* const p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  a->mapping = p;
  a->mapping_size = mapped;
  a->base = reinterpret_cast<std::uintptr_t>(p);
  a->size = bytes;
  a->device = device;
  a->buffer_id = s.next_buffer_id++;
  a->stage = Allocation::Stage::pending;  // usable from the moment its node runs
  auto m = std::make_shared<GraphMemory>();
  Allocation* const raw_allocation = a.get();
  m->allocation = std::move(a);
  handles().memory.emplace(raw_allocation->base, m.get());
  s.address_map.emplace(raw_allocation->base, raw_allocation);
  return m;
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

// The graph a stream capture records into cannot be destroyed until the capture ends.
CUresult cuGraphDestroy(CUgraph hGraph) {
  return call(Sym::cuGraphDestroy, [=](State& s) -> CUresult {
    Graph* const g = s.find<Graph>(SWCU_GRAPH, hGraph);
    if (g == nullptr || g->capturing) return CUDA_ERROR_INVALID_VALUE;
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
    if (swcu::memory_graph(top) || top.capturing) return CUDA_ERROR_INVALID_VALUE;
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
                     if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                     return swcu::set_kernel(s, n, swcu::from_v1(*nodeParams));
                   });
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                 const CUgraphNode* dependencies, size_t numDependencies,
                                 const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::add(Sym::cuGraphAddKernelNode_v2, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_KERNEL, [=](State& s, Graph&, Node& n) -> CUresult {
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
                     if (const CUresult r = swcu::make_child(s, *child, n.child)) return r;
                     n.child->parent = &n;
                     n.child_handle = n.child->handle();
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
                     return swcu::make_alloc(s, n, *nodeParams);
                   });
}

CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                               const CUgraphNode* dependencies, size_t numDependencies,
                               CUdeviceptr dptr) {
  return swcu::add(Sym::cuGraphAddMemFreeNode, phGraphNode, hGraph, dependencies, numDependencies,
                   CU_GRAPH_NODE_TYPE_MEM_FREE, [=](State&, Graph& g, Node& n) -> CUresult {
                     return swcu::make_free(g, n, dptr);
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

CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph,
                                        CUcontext ctx, unsigned int defaultLaunchValue,
                                        unsigned int flags) {
  return call(Sym::cuGraphConditionalHandleCreate, [=](State& s) -> CUresult {
    Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr || pHandle_out == nullptr ||
        (flags != 0 && flags != CU_GRAPH_COND_ASSIGN_DEFAULT)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* c = nullptr;
    if (swcu::context_arg(s, ctx, c) != CUDA_SUCCESS || c == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Condition cond;
    cond.handle = swcu::handles().next_condition++;
    cond.default_value = defaultLaunchValue;
    cond.flags = flags;
    cond.ctx = c;
    g->conditions.push_back(cond);
    swcu::adopt(*g, c);
    *pHandle_out = cond.handle;
    return CUDA_SUCCESS;
  });
}

// ---- node parameters ----

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
                           *nodeParams = n.copy;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemcpyNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_MEMCPY,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_copy(s, n, *nodeParams, n.ctx);
                         });
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemsetNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *nodeParams = n.fill;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphMemsetNodeSetParams, hNode, CU_GRAPH_NODE_TYPE_MEMSET,
                         [=](State& s, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           return swcu::set_fill(s, n, *nodeParams, n.ctx);
                         });
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::with_node(Sym::cuGraphHostNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_HOST,
                         [=](State&, Node& n) -> CUresult {
                           if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *nodeParams = n.host;
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
                           *phGraph = n.child_handle;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return swcu::with_node(Sym::cuGraphEventRecordNodeGetEvent, hNode,
                         CU_GRAPH_NODE_TYPE_EVENT_RECORD, [=](State&, Node& n) -> CUresult {
                           if (event_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *event_out = n.event;
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
                           *event_out = n.event;
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
                           *params_out = n.memory->params;
                           return CUDA_SUCCESS;
                         });
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return swcu::with_node(Sym::cuGraphMemFreeNodeGetParams, hNode, CU_GRAPH_NODE_TYPE_MEM_FREE,
                         [=](State&, Node& n) -> CUresult {
                           if (dptr_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
                           *dptr_out = n.free_address;
                           return CUDA_SUCCESS;
                         });
}

}  // extern "C"
