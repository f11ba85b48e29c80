// CUDA graphs: graphs (SWCU_GRAPH) of nodes, executable graphs (SWCU_GRAPH_EXEC), graph memory
// and conditional handles. graph.cpp builds and queries graphs, graph_exec.cpp instantiates,
// updates and launches them, capture.cpp records streams into them, user_object.cpp keeps the
// user objects they hold, dot.cpp prints them.
//
// A graph owns its nodes (creation order is the order every query reports). A child graph
// node and a conditional node own their embedded graphs: handles the program may use (to add
// nodes to a body) that are not SWCU_GRAPH handles of their own. Node handles and embedded
// graph handles live in private maps; destroyed ones wait in a bounded graveyard like other
// handles, so a stale handle is an error, never a crash.
//
// An executable graph holds a private copy of its graph (copy_graph) with the execution order
// of every level computed once; a launch shares that copy, and a change to the executable graph
// after a launch copies it first, so launches already enqueued run what was launched. Everything
// here is used under the state lock.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/api.hpp"
#include "memory/memory.hpp"
#include "exec/sched.hpp"

namespace swcu {

struct Graph;
struct UserObject;

/// References to user objects, with their counts (user_object.hpp).
using UserRefs = std::map<UserObject*, unsigned long long>;

/// A kernel node's launch: the configuration and the argument values, copied when it is set.
struct KernelArgs {
  CUfunction func = nullptr;  ///< as given (may be a CUkernel)
  CUkernel kern = nullptr;
  CUcontext ctx = nullptr;
  Context* owner = nullptr;  ///< the context of the function's module, when it has one
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared = 0;
  std::string name;                  ///< the kernel's entry name (the launch log's)
  std::vector<std::size_t> offsets;  ///< the parameter layout; empty when unknown
  std::vector<std::size_t> sizes;
  std::vector<unsigned char> params;  ///< the packed argument values
  bool from_extra = false;            ///< given as one buffer through `extra`
  /// What cuGraphKernelNodeGetParams hands out (owned by the node, rebuilt by each query).
  std::vector<void*> param_pointers;
  std::array<void*, 5> extra{};
  std::size_t extra_size = 0;
};

/// A copy as a graph node does it: rows of `width` bytes (Depth 1).
struct CopyShape {
  std::uintptr_t dst = 0, src = 0;
  std::size_t dst_pitch = 0, src_pitch = 0;
  std::size_t width = 0, height = 0;
};

/// A memset as a graph node does it.
struct FillShape {
  std::uintptr_t dst = 0;
  std::size_t pitch = 0;
  unsigned value = 0;
  unsigned element_size = 1;
  std::size_t width = 0, height = 1;
};

/// The memory of a memory allocation node. Its address is fixed when the node is made (as the
/// driver documents) and stays reserved while the node or an executable graph of it exists; it
/// is usable (an allocation in State::address_map at the live stage) from the moment the node
/// runs until the memory is freed: by a free node, by the next launch with
/// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, or by the executable graph's destruction.
struct GraphMemory : std::enable_shared_from_this<GraphMemory> {
  GraphMemory() = default;
  ~GraphMemory();  // leaves the address map: destroyed under the state lock
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;

  std::unique_ptr<Allocation> allocation;  ///< kind SWCU_GRAPH; stage pending while not live
  CUDA_MEM_ALLOC_NODE_PARAMS params{};     ///< as given (dptr filled in)
  std::vector<CUmemAccessDesc> access;     ///< params.accessDescs points here
  bool freed_in_owner = false;             ///< a free node of the owning graph frees it
  bool freed_elsewhere = false;            ///< a free node of another graph frees it
  bool outstanding = false;                ///< a launch left it allocated (not freed in the graph)

  [[nodiscard]] CUdeviceptr address() const noexcept {
    return static_cast<CUdeviceptr>(allocation->base);
  }
};

/// A conditional handle made by cuGraphConditionalHandleCreate.
struct Condition {
  CUgraphConditionalHandle handle = 0;
  unsigned default_value = 0;
  unsigned flags = 0;  ///< CU_GRAPH_COND_ASSIGN_DEFAULT or 0
  Context* ctx = nullptr;
};

/// One node (a CUgraphNode handle when it belongs to a program's graph).
struct Node {
  Node() = default;
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  [[nodiscard]] CUgraphNode handle() noexcept { return reinterpret_cast<CUgraphNode>(this); }

  std::uint64_t id = 0;  ///< unique in the process
  /// The nodes this one was copied from (a clone, an executable graph) and, for an executable
  /// graph's node, the nodes of the graphs it was updated from: how the per-node functions find
  /// it.
  std::vector<std::uint64_t> origins;
  Graph* graph = nullptr;  ///< the graph it belongs to
  int type = CU_GRAPH_NODE_TYPE_EMPTY;
  std::vector<Node*> deps;        ///< its dependencies, in the order they were added
  std::vector<Node*> dependents;  ///< the nodes that depend on it, in the order they were added

  KernelArgs kernel;
  CUDA_MEMCPY3D copy{};  ///< memcpy node: as given
  CopyShape copy_shape;
  CUDA_MEMSET_NODE_PARAMS fill{};  ///< memset node: as given
  FillShape fill_shape;
  CUcontext ctx = nullptr;  ///< memcpy/memset node: the context given
  CUDA_HOST_NODE_PARAMS host{};
  CUevent event = nullptr;       ///< event record and wait nodes
  std::unique_ptr<Graph> child;  ///< child graph node: its graph
  CUgraph child_handle = nullptr;
  std::shared_ptr<GraphMemory> memory;  ///< alloc node: its memory; free node: what it frees
  CUdeviceptr free_address = 0;         ///< free node
  // Conditional node.
  CUgraphConditionalHandle condition = 0;
  int condition_type = CU_GRAPH_COND_TYPE_IF;
  std::vector<std::unique_ptr<Graph>> bodies;
  std::vector<CUgraph> body_handles;  ///< what phGraph_out points to
  Context* condition_ctx = nullptr;

  bool enabled = true;  ///< executable graphs: cuGraphNodeSetEnabled
};

/// A graph: a program's (SWCU_GRAPH), an embedded one (a child graph node's, a conditional
/// body) or an executable graph's private copy.
struct Graph final : Object {
  Graph() noexcept : Object(SWCU_GRAPH) {}
  ~Graph() override;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// A program's graph destroyed: its nodes and embedded graphs stop being handles, its user
  /// object references are released.
  void release() noexcept override;
  [[nodiscard]] CUgraph handle() noexcept { return reinterpret_cast<CUgraph>(this); }

  std::uint64_t id = 0;                      ///< unique in the process
  std::vector<std::unique_ptr<Node>> nodes;  ///< in creation order
  Node* parent = nullptr;  ///< an embedded graph's node (child graph or conditional)
  bool is_body = false;    ///< a conditional node's body
  Context* ctx = nullptr;  ///< a program's graph: the context that reclaims it
  UserRefs user_refs;      ///< references this graph owns (a program's and embedded graphs)
  std::vector<Condition> conditions;  ///< handles made for this graph
  bool handles = false;               ///< its nodes (and embedded graphs) are handles
  bool capturing = false;             ///< a stream capture records into it
  /// Executable copies: the order the nodes run in (topological, ties by creation order).
  std::vector<Node*> order;
};

// ---- graph.cpp ----

/// A program's graph or an embedded graph; nullptr for anything else.
[[nodiscard]] Graph* find_graph(State& s, CUgraph handle) noexcept;
/// A live node of a program's graph (embedded graphs included); nullptr otherwise.
[[nodiscard]] Node* find_node(State& s, CUgraphNode handle) noexcept;
/// The program's graph `g` is part of (itself when it is one).
[[nodiscard]] Graph& top_graph(Graph& g) noexcept;
/// True when `g` is a conditional body or inside one.
[[nodiscard]] bool in_body(const Graph& g) noexcept;

/// A new program's graph (SWCU_GRAPH), owned by the current context when there is one.
[[nodiscard]] Graph* create_graph(State& s);

/// Checks `count` dependencies (in `g`, no duplicates): CUDA_ERROR_INVALID_VALUE otherwise.
[[nodiscard]] CUresult check_dependencies(const Graph& g, const CUgraphNode* deps,
                                          std::size_t count) noexcept;
/// Adds `node` to `g` after `deps` (checked) and returns it; registers it as a handle when
/// `g`'s nodes are handles.
Node* add_node(State& s, Graph& g, const std::vector<Node*>& deps, std::unique_ptr<Node> node);

/// Node parameters: checked and turned into what a node keeps. `current` is the context a
/// NULL context argument means.
[[nodiscard]] CUresult make_kernel(State& s, const CUDA_KERNEL_NODE_PARAMS_v2& p, KernelArgs& out);
[[nodiscard]] CUresult make_copy(State& s, const CUDA_MEMCPY3D& p, CopyShape& out);
[[nodiscard]] CUresult make_fill(State& s, const CUDA_MEMSET_NODE_PARAMS& p, FillShape& out);
/// The CUDA_KERNEL_NODE_PARAMS a kernel node reports (its own arrays, rebuilt).
[[nodiscard]] CUDA_KERNEL_NODE_PARAMS_v2 kernel_params(KernelArgs& k);
/// A child graph for a node: a copy of `child` (CUDA_ERROR_INVALID_VALUE when it has memory or
/// conditional nodes).
[[nodiscard]] CUresult make_child(State& s, const Graph& child, std::unique_ptr<Graph>& out);

/// A deep copy of `g`: nodes (with their origins), edges, embedded graphs, conditions. With
/// `handles`, a program's clone: its nodes become handles and it takes its own references to
/// `g`'s user objects; else an executable copy, with the execution order of every level.
[[nodiscard]] std::unique_ptr<Graph> copy_graph(State& s, const Graph& g, bool handles);

/// True when `g` (or a graph embedded in it) has a node of this type.
[[nodiscard]] bool contains(const Graph& g, int type) noexcept;
/// The references to user objects of `g` and its embedded graphs, summed.
[[nodiscard]] UserRefs all_user_refs(const Graph& g);

/// The node with `origin` among its origins, searched in `g` and its embedded graphs.
[[nodiscard]] Node* find_by_origin(Graph& g, std::uint64_t origin) noexcept;

/// Nodes in topological order (ties by creation order); false when there is a cycle (`cycle`
/// is then a node on it).
[[nodiscard]] bool topological_order(const Graph& g, std::vector<Node*>& out, Node*& cycle);

/// Graph memory by address (the allocation's base); nullptr for other addresses.
[[nodiscard]] GraphMemory* find_graph_memory(std::uintptr_t address) noexcept;
/// New graph memory of `bytes` on `device`; nullptr when it cannot be mapped.
[[nodiscard]] std::shared_ptr<GraphMemory> new_graph_memory(State& s, std::size_t bytes,
                                                            int device);

/// Destroys a program's graph (SWCU_GRAPH) and what it owns.
void destroy_graph(State& s, Graph& g) noexcept;

/// Destroys what a destroyed context owns here: its captures end, its graphs and executable
/// graphs are destroyed (counted as reclaimed). Called by reclaim_context.
void reclaim_graphs(State& s, Context& ctx) noexcept;

/// A new unique id for a graph or a node.
[[nodiscard]] std::uint64_t next_graph_id() noexcept;

// ---- graph_exec.cpp ----

/// Destroys the executable graphs of a destroyed context (counted as reclaimed).
void reclaim_execs(State& s, Context& ctx) noexcept;
/// How many executable graphs of the program's graph with this id exist.
[[nodiscard]] std::size_t exec_count(std::uint64_t graph_id) noexcept;
/// The control API's set_conditional: sets a conditional handle's value for the graph launch
/// the calling thread runs (from a host node or an emulated kernel); 0, or -1 with `why`.
/// Takes the state lock.
[[nodiscard]] int set_conditional(CUgraphConditionalHandle handle, unsigned value,
                                  const char*& why) noexcept;

// ---- capture.cpp ----

/// Ends the captures of a destroyed context's streams.
void reclaim_captures(State& s, Context& ctx) noexcept;

}  // namespace swcu
