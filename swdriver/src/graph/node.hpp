// Graph nodes: what every node has (its place in a graph: id, origins, dependencies) and, per
// node kind, its own parameter type (KernelNode, CopyNode, FillNode, HostNode, EventNode,
// ChildNode, AllocNode, FreeNode, ConditionalNode, ExtSemNode, MemOpNode), held in a std::variant.
// A node is made with its CUgraphNodeType and holds the parameter type of that kind from then on
// (node_kind_of); `n.as<KernelNode>()` reaches them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/api.hpp"
#include "memory/copy_3d.hpp"
#include "memory/external.hpp"
#include "sched/shapes.hpp"

namespace swcu {

struct Context;
struct Graph;
struct GraphMemory;

/// A kernel node: the launch configuration and the argument values, copied when they are set.
struct KernelNode {
  CUfunction func = nullptr;              ///< as given (may be a CUkernel)
  CUkernel kern = nullptr;                ///< as given
  CUcontext ctx = nullptr;                ///< as given
  Context* owner = nullptr;               ///< the context of the function's module, when it has one
  std::array<unsigned, 3> grid{1, 1, 1};  ///< blocks per grid
  std::array<unsigned, 3> block{1, 1, 1};  ///< threads per block
  unsigned shared = 0;                     ///< dynamic shared memory bytes
  std::string name;                        ///< the kernel's entry name (the launch log's)
  std::vector<std::size_t> offsets;        ///< the parameter layout; empty when unknown
  std::vector<std::size_t> sizes;          ///< the parameters' sizes, with `offsets`
  std::vector<unsigned char> params;       ///< the packed argument values
  bool from_extra = false;                 ///< given as one buffer through `extra`
  bool cooperative = false;  ///< captured from a cooperative launch: the grid is co-resident
  std::array<unsigned, 3> cluster{1, 1, 1};  ///< captured from a launch with a cluster size
  /// CU_LAUNCH_ATTRIBUTE_PRIORITY set on the node (cuGraphKernelNodeSetAttribute): used when
  /// the executable graph was instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.
  int priority = 0;
  /// The other attributes set on the node (kept and reported; they change nothing here).
  std::vector<CUlaunchAttribute> attributes;
  /// What cuGraphKernelNodeGetParams hands out (owned by the node, rebuilt by each query).
  std::vector<void*> param_pointers;
  std::array<void*, 5> extra{};  ///< what the query hands out for `from_extra`
  std::size_t extra_size = 0;    ///< the buffer size `extra` points to
};

/// An empty node (and the kinds this driver does not support, which are never added).
struct EmptyNode {};

/// A memcpy node: rows between two addresses (`shape`), or, for a copy with a CUDA array on a
/// side or several slices, the resolved 3D copy (`general`, memory/copy_3d.hpp), which names its
/// arrays by handle and looks them up again when it runs (graph/copy_nodes.hpp).
struct CopyNode {
  CUDA_MEMCPY3D params{};         ///< as given
  CopyShape shape;                ///< what it does (when `general` is empty)
  std::optional<Copy3D> general;  ///< what it does: arrays or several slices
  CUcontext ctx = nullptr;        ///< the context given (the current one for NULL)
};

/// A memset node.
struct FillNode {
  CUDA_MEMSET_NODE_PARAMS params{};  ///< as given
  FillShape shape;                   ///< what it does
  CUcontext ctx = nullptr;           ///< the context given (the current one for NULL)
};

/// A host node.
struct HostNode {
  CUDA_HOST_NODE_PARAMS params{};  ///< the function and its argument
};

/// An event record node or an event wait node (the node's type tells which).
struct EventNode {
  CUevent event = nullptr;  ///< the event recorded or waited for
};

/// A child graph node: it owns its graph (an embedded graph).
struct ChildNode {
  std::unique_ptr<Graph> graph;  ///< the embedded copy
  CUgraph handle = nullptr;      ///< what cuGraphChildGraphNodeGetGraph hands out
};

/// A memory allocation node.
struct AllocNode {
  std::shared_ptr<GraphMemory> memory;  ///< its memory (graph_memory.hpp)
};

/// A memory free node.
struct FreeNode {
  std::shared_ptr<GraphMemory> memory;  ///< what it frees
  CUdeviceptr address = 0;              ///< as given
};

/// A conditional node: it owns its bodies (embedded graphs).
struct ConditionalNode {
  CUgraphConditionalHandle handle = 0;  ///< the condition it tests
  int type = CU_GRAPH_COND_TYPE_IF;     ///< IF, WHILE or SWITCH
  std::vector<std::unique_ptr<Graph>> bodies;
  std::vector<CUgraph> body_handles;  ///< what phGraph_out points to
  Context* ctx = nullptr;             ///< the context given (the handle's)
};

/// An external semaphore signal or wait node (the node's type tells which;
/// graph/ext_semaphore_nodes.cpp): the handles and parameters as given, and what they resolve
/// to (memory/external.hpp), which keeps the semaphores' payloads mapped.
struct ExtSemNode {
  std::vector<CUexternalSemaphore> handles;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> signals;  ///< a signal node's
  std::vector<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> waits;      ///< a wait node's
  std::vector<SemaphoreStep> steps;  ///< one per semaphore, resolved when set
};

/// A batch memory operation node (graph/memop_nodes.cpp): its operations, checked and decoded,
/// and the parameters as given, which cuGraphBatchMemOpNodeGetParams hands out.
struct MemOpNode {
  CUcontext ctx = nullptr;  ///< as given (a capture's: the stream's context)
  unsigned flags = 0;       ///< as given (0)
  std::vector<CUstreamBatchMemOpParams> given;
  std::vector<MemOp> ops;  ///< what it runs, in order
};

/// The parameters of a node, one alternative per kind.
using NodeParams =
    std::variant<EmptyNode, KernelNode, CopyNode, FillNode, HostNode, EventNode, ChildNode,
                 AllocNode, FreeNode, ConditionalNode, ExtSemNode, MemOpNode>;

/// Empty parameters of the kind a node of `type` (a CUgraphNodeType) holds.
[[nodiscard]] NodeParams node_kind_of(int type);

/// One node (a CUgraphNode handle when it belongs to a program's graph).
struct Node {
  /// A node of `type` (a CUgraphNodeType) with empty parameters of that kind.
  explicit Node(int node_type);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// The node as a CUgraphNode.
  [[nodiscard]] CUgraphNode handle() noexcept { return reinterpret_cast<CUgraphNode>(this); }

  /// The parameters of kind `Kind`. A node of another kind throws std::bad_variant_access
  /// (CUDA_ERROR_UNKNOWN at the C ABI): callers check the node's type first.
  template <class Kind>
  [[nodiscard]] Kind& as() {
    return std::get<Kind>(params);
  }
  /// The parameters of kind `Kind` (const).
  template <class Kind>
  [[nodiscard]] const Kind& as() const {
    return std::get<Kind>(params);
  }
  /// The parameters of kind `Kind`, or nullptr for a node of another kind.
  template <class Kind>
  [[nodiscard]] Kind* if_kind() noexcept {
    return std::get_if<Kind>(&params);
  }
  /// The parameters of kind `Kind`, or nullptr for a node of another kind (const).
  template <class Kind>
  [[nodiscard]] const Kind* if_kind() const noexcept {
    return std::get_if<Kind>(&params);
  }

  /// The graph memory an allocation or free node uses; nullptr for other kinds.
  [[nodiscard]] GraphMemory* memory() const noexcept;

  /// Calls `f(Graph&)` for each graph embedded in the node (a child graph node's graph, a
  /// conditional node's bodies).
  template <class F>
  void for_each_embedded(F&& f) const {
    if (const auto* c = if_kind<ChildNode>(); c != nullptr && c->graph) f(*c->graph);
    if (const auto* c = if_kind<ConditionalNode>()) {
      for (const auto& body : c->bodies) f(*body);
    }
  }

  std::uint64_t id = 0;  ///< unique in the process
  /// The nodes this one was copied from (a clone, an executable graph) and, for an executable
  /// graph's node, the nodes of the graphs it was updated from: how the per-node functions find
  /// it.
  std::vector<std::uint64_t> origins;
  Graph* graph = nullptr;         ///< the graph it belongs to
  const int type;                 ///< its CUgraphNodeType: `params` holds that kind's alternative
  std::vector<Node*> deps;        ///< its dependencies, in the order they were added
  std::vector<Node*> dependents;  ///< the nodes that depend on it, in the order they were added
  NodeParams params;              ///< what the node does, by kind
  bool enabled = true;            ///< executable graphs: cuGraphNodeSetEnabled
  /// An ':async' fault rule that fired on the call the node was captured from: each run of the
  /// node fails the launch with it (code 0: none).
  Fault fault;
};

}  // namespace swcu
