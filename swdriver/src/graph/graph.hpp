// CUDA graphs: graphs (SWCU_GRAPH) of nodes (node.hpp), executable graphs (SWCU_GRAPH_EXEC),
// graph memory (graph_memory.hpp) and conditional handles. The files of graph/, one job each:
//   graph.cpp          handles and graveyards, graph lifecycle, clone, copy, topological order
//   node_params.cpp    checking node parameters and making what a node keeps
//   copy_nodes.cpp     memcpy nodes with CUDA arrays or several slices, and their capture
//   graph_api.cpp      structure queries and edges (cuGraphGetNodes, cuGraphAddDependencies...)
//   node_api.cpp       adding nodes, the per-kind getters and setters
//   graph_memory.cpp   graph memory (allocation and free nodes) and the devices' usage of it
//   conditional.cpp    conditional handles and conditional nodes' parameters
//   graph_exec.cpp     instantiating and destroying executable graphs (exec_internal.hpp)
//   exec_launch.cpp    launching and uploading them (a launch: segments of nodes and one stream
//                      operation per node that waits), running their nodes, set_conditional
//   memop_nodes.cpp    batch memory operation nodes
//   kernel_attributes.cpp  launch attributes of kernel nodes (cuGraphKernelNode*Attribute)
//   device_launch.cpp  device graph launch: a kernel's cudaGraphLaunch and its environments
//   exec_update.cpp    whole-graph and per-node updates, enabling and disabling nodes
//   capture.cpp        stream capture into graphs
//   ext_semaphore_nodes.cpp  external semaphore nodes, their launch and their capture
//   user_object.cpp    the user objects graphs hold
//   dot.cpp            cuGraphDebugDotPrint
// graph_internal.hpp holds what the graph-building files share.
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

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/api.hpp"
#include "graph/graph_memory.hpp"
#include "graph/node.hpp"
#include "memory/memory.hpp"
#include "sched/sched.hpp"

namespace swcu {

struct UserObject;

/// References to user objects, with their counts (user_object.hpp).
using UserRefs = std::map<UserObject*, unsigned long long>;

/// A conditional handle made by cuGraphConditionalHandleCreate.
struct Condition {
  CUgraphConditionalHandle handle = 0;
  unsigned default_value = 0;
  unsigned flags = 0;  ///< CU_GRAPH_COND_ASSIGN_DEFAULT or 0
  Context* ctx = nullptr;
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
/// True when a stream capture records into `g` or a graph embedded in it (a conditional body).
[[nodiscard]] bool capturing_within(const Graph& g) noexcept;

/// A new program's graph (SWCU_GRAPH), owned by the current context when there is one.
[[nodiscard]] Graph* create_graph(State& s);

/// Checks `count` dependencies (in `g`, no duplicates): CUDA_ERROR_INVALID_VALUE otherwise.
[[nodiscard]] CUresult check_dependencies(const Graph& g, const CUgraphNode* deps,
                                          std::size_t count) noexcept;
/// Adds `node` to `g` after `deps` (checked) and returns it; registers it as a handle when
/// `g`'s nodes are handles.
Node* add_node(State& s, Graph& g, const std::vector<Node*>& deps, std::unique_ptr<Node> node);

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

/// Destroys a program's graph (SWCU_GRAPH) and what it owns.
void destroy_graph(State& s, Graph& g) noexcept;

/// Destroys what a destroyed context owns here: its captures end, its graphs and executable
/// graphs are destroyed (counted as reclaimed). Called by reclaim_context.
void reclaim_graphs(State& s, Context& ctx) noexcept;

/// A new unique id for a graph or a node.
[[nodiscard]] std::uint64_t next_graph_id() noexcept;

// ---- node_params.cpp ----

/// Node parameters: checked and turned into what a node keeps.
[[nodiscard]] CUresult make_kernel(State& s, const CUDA_KERNEL_NODE_PARAMS_v2& p, KernelNode& out);
/// A memcpy node's copy (Depth 1, no CUDA arrays: copy_nodes.hpp makes the others), checked like
/// an enqueued copy's.
[[nodiscard]] CUresult make_copy(State& s, const CUDA_MEMCPY3D& p, CopyShape& out);
/// A memset node's fill, checked like an enqueued memset's.
[[nodiscard]] CUresult make_fill(State& s, const CUDA_MEMSET_NODE_PARAMS& p, FillShape& out);
/// A child graph for a node: a copy of `child` (CUDA_ERROR_INVALID_VALUE when it has memory or
/// conditional nodes, or a capture records into it).
[[nodiscard]] CUresult make_child(State& s, const Graph& child, std::unique_ptr<Graph>& out);
/// Makes `graph` the graph of child graph node `n` (its parent and handle set).
void attach_child(Node& n, std::unique_ptr<Graph> graph);

// ---- graph_exec.cpp, exec_launch.cpp ----

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
