// CUDA graphs: building them node by node (or capturing a stream), instantiating and
// launching them, and updating executable graphs in place.
#pragma once

#include <cuda.h>

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/copy.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/graph_labels.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/flags.hpp"
#include "cuwrap/launch.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// The kind of a graph node (CUgraphNodeType).
enum class node_kind {
  kernel = CU_GRAPH_NODE_TYPE_KERNEL,
  memcpy = CU_GRAPH_NODE_TYPE_MEMCPY,
  memset = CU_GRAPH_NODE_TYPE_MEMSET,
  host = CU_GRAPH_NODE_TYPE_HOST,
  child_graph = CU_GRAPH_NODE_TYPE_GRAPH,
  empty = CU_GRAPH_NODE_TYPE_EMPTY,
  event_wait = CU_GRAPH_NODE_TYPE_WAIT_EVENT,
  event_record = CU_GRAPH_NODE_TYPE_EVENT_RECORD,
  memory_alloc = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
  memory_free = CU_GRAPH_NODE_TYPE_MEM_FREE,
  conditional = CU_GRAPH_NODE_TYPE_CONDITIONAL,
  semaphore_signal = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL,
  semaphore_wait = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
  memop_batch = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
};

/// A node of a graph. A cheap value: nodes are owned by their graph.
class graph_node {
 public:
  using native_handle_type = CUgraphNode;
  constexpr graph_node(native_handle_type handle) noexcept : handle_{handle} {}
  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// What the node does (cuGraphNodeGetType).
  [[nodiscard]] node_kind kind(std::source_location where = std::source_location::current()) const;
  /// Where the node was added through cuwrap ("file:line" of the add_* call); empty for a node
  /// cuwrap did not add (captured from a stream, a clone's). No driver call.
  [[nodiscard]] std::string label() const;
  /// A kernel node's launch attribute `id` (cuGraphKernelNodeGetAttribute): cooperative,
  /// cluster dimensions, priority, ... (the CUlaunchAttributeIDs cuda.h marks valid for graph
  /// nodes). Throws cuwrap::error for another node kind or attribute.
  [[nodiscard]] CUlaunchAttributeValue attribute(
      CUlaunchAttributeID id, std::source_location where = std::source_location::current()) const;
  /// Sets a kernel node's launch attribute (cuGraphKernelNodeSetAttribute); launch_config's
  /// attributes() entries fit as they are.
  void set_attribute(const CUlaunchAttribute& attribute,
                     std::source_location where = std::source_location::current()) const;
  friend constexpr bool operator==(graph_node, graph_node) noexcept = default;

 private:
  native_handle_type handle_;
};

static_assert(sizeof(graph_node) == sizeof(CUgraphNode) &&
              std::is_standard_layout_v<graph_node>);  // spans of nodes pass as CUgraphNode*

/// A dependency: `to` runs after `from`.
struct graph_edge {
  graph_node from;
  graph_node to;
  friend constexpr bool operator==(graph_edge, graph_edge) noexcept = default;
};

/// The nodes a new node depends on: none (`{}`), one node, a braced list (`{a, b}`), or any
/// contiguous range of nodes (an array, a std::vector, a std::span). It only views them, for
/// the duration of the call it is passed to.
class dependencies {
 public:
  /// No dependencies: a root node.
  constexpr dependencies() noexcept = default;
  /// One node.
  constexpr dependencies(const graph_node& node) noexcept : nodes_{&node, 1} {}
  /// A braced list of nodes.
  constexpr dependencies(std::initializer_list<graph_node> nodes) noexcept
      : nodes_{nodes.begin(), nodes.size()} {}
  /// A contiguous range of nodes.
  template <class Range>
  requires requires(const Range& r) {
    { std::data(r) } -> std::convertible_to<const graph_node*>;
    { std::size(r) } -> std::convertible_to<std::size_t>;
  }
  constexpr dependencies(const Range& nodes) noexcept
      : nodes_{std::data(nodes), std::size(nodes)} {}

  /// The nodes, as the driver takes them.
  [[nodiscard]] const CUgraphNode* data() const noexcept {
    return reinterpret_cast<const CUgraphNode*>(nodes_.data());
  }
  /// How many nodes.
  [[nodiscard]] constexpr std::size_t size() const noexcept { return nodes_.size(); }

 private:
  std::span<const graph_node> nodes_;
};

/// Flags for instantiating a graph (CUgraphInstantiate_flags). Combine with |.
enum class instantiate_flags : unsigned long long {
  none = 0,
  auto_free_on_launch =
      CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,        ///< free unfreed allocations
  upload = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD,                ///< upload while instantiating
  device_launch = CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH,  ///< launchable from kernels
  use_node_priority = CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY,  ///< per-node priorities
};
/// instantiate_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<instantiate_flags> = true;

/// A device allocation made by a graph's memory-alloc node.
struct graph_allocation {
  graph_node node;          ///< the memory-alloc node
  CUdeviceptr address = 0;  ///< valid from that node on, until a memory-free node frees it
};

/// The condition of conditional nodes (CUgraphConditionalHandle): a value each launch of the
/// graph starts with, which kernels of the graph set with cudaGraphSetConditional. A cheap
/// value, owned by its graph. Passes as an argument to a kernel's cudaGraphConditionalHandle
/// parameter (it converts to CUgraphConditionalHandle, and to no other integer type).
class graph_condition {
 public:
  using native_handle_type = CUgraphConditionalHandle;
  /// Wraps a handle from cuGraphConditionalHandleCreate.
  constexpr explicit graph_condition(native_handle_type handle) noexcept : handle_{handle} {}
  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// The handle, for a kernel argument (exactly CUgraphConditionalHandle: no other integer).
  template <class T>
  requires std::same_as<T, native_handle_type>
  constexpr operator T() const noexcept { return handle_; }
  friend constexpr bool operator==(graph_condition, graph_condition) noexcept = default;

 private:
  native_handle_type handle_;
};

/// When a condition takes its default value (cuGraphConditionalHandleCreate flags).
enum class condition_reset : unsigned {
  each_launch = CU_GRAPH_COND_ASSIGN_DEFAULT,  ///< at the start of every launch of the graph
  never = 0,  ///< not assigned by the driver: a kernel of the graph sets it before it is tested
};

/// What a conditional node does with its condition: a CUgraphConditionalNodeType and how many
/// body graphs it has. Made by cuwrap::conditional::if_then, if_else, while_loop, switch_of(n).
class conditional_kind {
 public:
  /// The driver's node type.
  [[nodiscard]] constexpr CUgraphConditionalNodeType type() const noexcept { return type_; }
  /// How many body graphs the node has.
  [[nodiscard]] constexpr unsigned bodies() const noexcept { return bodies_; }
  /// A readable name: "if", "if-else", "while" or "switch".
  [[nodiscard]] constexpr const char* name() const noexcept {
    return type_ == CU_GRAPH_COND_TYPE_WHILE    ? "while"
           : type_ == CU_GRAPH_COND_TYPE_SWITCH ? "switch"
           : bodies_ == 2                       ? "if-else"
                                                : "if";
  }
  /// A node kind of `type` with `bodies` bodies (the driver checks the combination).
  constexpr conditional_kind(CUgraphConditionalNodeType type, unsigned bodies) noexcept
      : type_{type}, bodies_{bodies} {}
  friend constexpr bool operator==(conditional_kind, conditional_kind) noexcept = default;

 private:
  CUgraphConditionalNodeType type_;
  unsigned bodies_;
};

/// The kinds of conditional node.
namespace conditional {
/// Runs body(0) once when the condition is non-zero.
inline constexpr conditional_kind if_then{CU_GRAPH_COND_TYPE_IF, 1};
/// Runs body(0) when the condition is non-zero, body(1) when it is zero.
inline constexpr conditional_kind if_else{CU_GRAPH_COND_TYPE_IF, 2};
/// Runs body(0) again and again while the condition is non-zero (tested before each run).
inline constexpr conditional_kind while_loop{CU_GRAPH_COND_TYPE_WHILE, 1};
/// Runs body(n) once where n is the condition's value; none when it is `cases` or more.
[[nodiscard]] constexpr conditional_kind switch_of(unsigned cases) noexcept {
  return {CU_GRAPH_COND_TYPE_SWITCH, cases};
}
}  // namespace conditional

struct conditional_node;
class graph_ref;

namespace detail {
struct host_callable_base {
  virtual ~host_callable_base() = default;
  virtual void run() noexcept = 0;
};
template <class F>
struct host_callable final : host_callable_base {
  explicit host_callable(F f) : fn{std::move(f)} {}
  void run() noexcept override { fn(); }
  F fn;
};
[[noreturn]] void throw_graph_error(CUresult result, const char* api, std::string details,
                                    std::source_location where);
/// Destroys the host callables graph_exec_ref::set_host gave executable graph `exec` (which was
/// just destroyed), after waiting for its context's work; nothing when there are none.
void release_host_replacements(CUgraphExec exec) noexcept;
}  // namespace detail

/// A non-owning view of a graph. Node-adding functions take the nodes the new node depends on
/// and return the new node; they throw cuwrap::error naming the node kind. A view of a
/// moved-from graph is empty: its operations throw cuwrap::usage_error before any driver call.
class graph_ref {
 public:
  using native_handle_type = CUgraph;

  /// Views `handle`, whose nodes work in context `ctx` on device `device`.
  constexpr graph_ref(native_handle_type handle, CUcontext ctx, CUdevice device) noexcept
      : handle_{handle}, context_{ctx}, device_{device} {}

  /// The driver's handle (null for a moved-from graph).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a moved-from or released graph, and for views of one.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }
  /// The context its nodes work in.
  [[nodiscard]] constexpr CUcontext context() const noexcept { return context_; }

  /// A node that does nothing: a join point (cuGraphAddEmptyNode).
  graph_node add_empty(dependencies after = {},
                       std::source_location where = std::source_location::current()) const;

  /// A kernel launch. The typed form checks arguments at compile time; the arguments are
  /// copied into the node (cuGraphAddKernelNode: one driver call, plus one
  /// cuGraphKernelNodeSetAttribute per attribute of `config`: cooperative, cluster dimensions,
  /// priority, ...). Errors name the driver call and the call site (the config argument
  /// carries it, as in launches).
  template <class... Params, class... Args>
  graph_node add_kernel(const typed_kernel<void(Params...)>& k,
                        detail::located<launch_config> config, dependencies after,
                        Args&&... args) const {
    static_assert(sizeof...(Args) == sizeof...(Params),
                  "add_kernel: the number of arguments differs from the kernel's parameters");
    if constexpr (sizeof...(Args) == sizeof...(Params)) {
      const std::source_location where = config.where;
      detail::expect_not_moved_from(!empty(), "graph", "add_kernel", where);
      detail::expect_argument_not_moved_from(k.get() != nullptr, "graph", "add_kernel", "kernel",
                                             where);
      detail::check_limits(k, config.value, where, "cuGraphAddKernelNode");
      auto values =
          detail::typed_kernel_values<Params...>(std::index_sequence_for<Params...>{}, "graph",
                                                 "add_kernel", where, std::forward<Args>(args)...);
      return add_kernel_tuple(k, config.value, after, values, std::index_sequence_for<Params...>{},
                              where);
    } else {
      return graph_node{nullptr};  // not compiled: the static_assert above has failed
    }
  }

  /// A launch of an untyped kernel, checked as an untyped stream launch: the number of
  /// arguments and each one's size against the kernel's parameter layout (when the driver
  /// reports it), before the driver is called. Device memory passes as its element pointer.
  template <class... Args>
  graph_node add_kernel(const kernel& k, detail::located<launch_config> config, dependencies after,
                        Args&&... args) const {
    static_assert((std::is_trivially_copyable_v<detail::kernel_value_t<Args>> && ...),
                  "add_kernel: kernel arguments must be trivially copyable");
    const std::source_location where = config.where;
    detail::expect_not_moved_from(!empty(), "graph", "add_kernel", where);
    detail::expect_argument_not_moved_from(k.get() != nullptr, "graph", "add_kernel", "kernel",
                                           where);
    if (k.layout_known()) {
      const auto params = k.params();
      if (params.size() != sizeof...(Args)) {
        detail::throw_argument_count(k, sizeof...(Args), where);
      }
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (detail::check_argument_size(k, I, sizeof(detail::kernel_value_t<Args>), params[I].size,
                                     where),
         ...);
      }
      (std::index_sequence_for<Args...>{});
    }
    detail::check_limits(k, config.value, where, "cuGraphAddKernelNode");
    auto values = detail::untyped_kernel_values(std::index_sequence_for<Args...>{}, "graph",
                                                "add_kernel", where, std::forward<Args>(args)...);
    return add_kernel_tuple(k, config.value, after, values, std::index_sequence_for<Args...>{},
                            where);
  }

  /// A copy of `src` into `dst` (same rules as cuwrap::copy; cuGraphAddMemcpyNode).
  template <memory_range Dst, memory_range Src>
  graph_node add_copy(Dst&& dst, Src&& src, dependencies after = {},
                      std::source_location where = std::source_location::current()) const {
    const auto d = as_device_span(dst, where);
    const auto s = as_device_span(src, where);
    const auto bytes = detail::checked_copy_size(d, s, "cuGraphAddMemcpyNode", where);
    return add_copy_bytes(d.address(), s.address(), bytes, after, where);
  }

  /// A memcpy node from a whole CUDA_MEMCPY3D (cuGraphAddMemcpyNode, in the graph's context):
  /// the form of any copy the driver takes, CUDA arrays and several slices included. The typed
  /// form is add_copy_3d (<cuwrap/graph_copy_3d.hpp>).
  graph_node add_copy_3d_params(const CUDA_MEMCPY3D& params, dependencies after = {},
                                std::source_location where = std::source_location::current()) const;

  /// Sets every element of `dst` to `value` (1-, 2- or 4-byte elements; cuGraphAddMemsetNode).
  template <device_memory Dst,
            class T = typename decltype(as_device_span(std::declval<Dst&>()))::value_type>
  requires detail::fillable<T> graph_node
  add_fill(Dst&& dst, std::type_identity_t<T> value, dependencies after = {},
           std::source_location where = std::source_location::current())
  const {
    const auto d = as_device_span(dst, where);
    return add_fill_bits(d.address(), detail::bits_of(value), sizeof(T), d.size(), after, where);
  }

  /// Runs `fn` on the host (cuGraphAddHostNode). The graph owns a copy of `fn` through a CUDA
  /// user object, so it lives as long as this graph or any executable graph made from it.
  /// `fn` must not call CUDA. An exception escaping `fn` calls std::terminate: a node built
  /// here has no stream to report it to (host work captured from a stream does).
  template <class F>
  graph_node add_host(F&& fn, dependencies after = {},
                      std::source_location where = std::source_location::current()) const {
    auto callable = std::make_unique<detail::host_callable<std::decay_t<F>>>(std::forward<F>(fn));
    return add_host_callable(std::move(callable), after, where);
  }

  /// Records `e` (cuGraphAddEventRecordNode).
  graph_node add_event_record(event_ref e, dependencies after = {},
                              std::source_location where = std::source_location::current()) const;
  /// Waits for `e` (cuGraphAddEventWaitNode).
  graph_node add_event_wait(event_ref e, dependencies after = {},
                            std::source_location where = std::source_location::current()) const;
  /// Runs a copy of `child` (cuGraphAddChildGraphNode).
  graph_node add_child(graph_ref child, dependencies after = {},
                       std::source_location where = std::source_location::current()) const;
  /// Allocates `bytes` of device memory on the graph's device (cuGraphAddMemAllocNode).
  graph_allocation add_memory_alloc(
      std::size_t bytes, dependencies after = {},
      std::source_location where = std::source_location::current()) const;
  /// Frees memory a memory-alloc node allocated (cuGraphAddMemFreeNode).
  graph_node add_memory_free(CUdeviceptr address, dependencies after = {},
                             std::source_location where = std::source_location::current()) const;

  /// Adds the edge `from` -> `to` (cuGraphAddDependencies).
  void add_dependency(graph_node from, graph_node to,
                      std::source_location where = std::source_location::current()) const;
  /// Every node (cuGraphGetNodes).
  [[nodiscard]] std::vector<graph_node> nodes(
      std::source_location where = std::source_location::current()) const;
  /// Every edge (cuGraphGetEdges).
  [[nodiscard]] std::vector<graph_edge> edges(
      std::source_location where = std::source_location::current()) const;

  /// The graph in Graphviz DOT form (cuGraphDebugDotPrint): by default a readable picture
  /// (node kinds, kernel names and launch shapes, no addresses or handles); pass
  /// CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE (or other CUgraphDebugDot_flags) for everything.
  [[nodiscard]] std::string to_dot(
      unsigned flags = readable_dot,
      std::source_location where = std::source_location::current()) const;
  /// Writes the DOT form to `path` (cuGraphDebugDotPrint); `flags` as for to_dot().
  void write_dot(const std::string& path, unsigned flags = readable_dot,
                 std::source_location where = std::source_location::current()) const;
  /// The graph's nodes and edges in DOT form, each node named by its kind and the call site
  /// that added it (graph_node::label()), with each child graph and conditional body (added
  /// through add_conditional) drawn as a cluster, nested; built by cuwrap from nodes(), edges()
  /// and cuGraphChildGraphNodeGetGraph.
  [[nodiscard]] std::string to_labelled_dot(
      std::source_location where = std::source_location::current()) const;
  /// The default flags of to_dot() and write_dot(): node kinds, kernel names, launch shapes and
  /// parameters, without handles, pointers or addresses.
  static constexpr unsigned readable_dot = CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS;

  /// A condition for conditional nodes of this graph (or of graphs nested in it), which takes
  /// `default_value` when `reset` says (cuGraphConditionalHandleCreate). Kernels of the graph
  /// set it with cudaGraphSetConditional(condition, value).
  [[nodiscard]] graph_condition make_condition(
      unsigned default_value = 0, condition_reset reset = condition_reset::each_launch,
      std::source_location where = std::source_location::current()) const;
  /// A conditional node of kind `kind` (conditional::if_then, if_else, while_loop,
  /// switch_of(n)) testing `condition` (cuGraphAddNode, one driver call). Add the work of
  /// each body to body(i), by node or by capturing a stream into it (capture_into). Needs a
  /// CUDA 12.3+ driver (if-else and switch: 12.8+).
  [[nodiscard]] conditional_node add_conditional(
      graph_condition condition, conditional_kind kind, dependencies after = {},
      std::source_location where = std::source_location::current()) const;

  friend constexpr bool operator==(graph_ref a, graph_ref b) noexcept {
    return a.handle_ == b.handle_;
  }

 protected:
  native_handle_type handle_;
  CUcontext context_;
  CUdevice device_;

 private:
  template <class Tuple, std::size_t... I>
  graph_node add_kernel_tuple(const kernel& k, const launch_config& config, dependencies after,
                              Tuple& values, std::index_sequence<I...>,
                              std::source_location where) const {
    if constexpr (sizeof...(I) == 0) {
      return add_kernel_params(k, config, after, nullptr, where);
    } else {
      void* params[] = {static_cast<void*>(&std::get<I>(values))...};
      return add_kernel_params(k, config, after, params, where);
    }
  }
  graph_node add_kernel_params(const kernel& k, const launch_config& config, dependencies after,
                               void** params, std::source_location where) const;
  graph_node add_copy_bytes(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, dependencies after,
                            std::source_location where) const;
  graph_node add_fill_bits(CUdeviceptr dst, unsigned value, std::size_t element_size,
                           std::size_t count, dependencies after, std::source_location where) const;
  graph_node add_host_callable(std::unique_ptr<detail::host_callable_base> callable,
                               dependencies after, std::source_location where) const;
};

/// A conditional node and the body graphs it runs (owned by the node).
struct conditional_node {
  graph_node node;                ///< the conditional node
  conditional_kind kind;          ///< what it does with its condition
  std::vector<graph_ref> bodies;  ///< one per body: add the nodes to run conditionally here

  /// Body `i` (from 0): if_then and while_loop have body(0); if_else runs body(0) when the
  /// condition is non-zero and body(1) when it is zero; switch_of(n) runs body(value). Throws
  /// cuwrap::usage_error for an index past the node's bodies.
  [[nodiscard]] graph_ref body(std::size_t i = 0,
                               std::source_location where = std::source_location::current()) const;
};

class graph_exec;

namespace detail {
/// How a graph owner destroys its handle (cuGraphDestroy); see unique_handle.
struct graph_traits {
  using ref_type = graph_ref;
  using state_type = std::shared_ptr<const context_owner>;
  static constexpr CUgraph empty_handle() noexcept { return nullptr; }
  static void destroy(CUgraph handle) noexcept {
    forget_labels(handle);
    check_nothrow(driver().cuGraphDestroy(handle), "cuGraphDestroy");
  }
};
}  // namespace detail

/// An owning graph (cuGraphCreate, cuGraphDestroy). Move-only; keeps its context alive. A
/// moved-from graph is empty: its operations throw cuwrap::usage_error.
class graph : public detail::unique_handle<detail::graph_traits> {
 public:
  /// An empty graph whose nodes work in `ctx`.
  explicit graph(const owning_context& ctx,
                 std::source_location where = std::source_location::current());
  /// Takes ownership of `handle`, whose nodes work in `ctx`. Throws cuwrap::usage_error (and
  /// takes nothing) if `ctx` was moved from.
  [[nodiscard]] static graph adopt(native_handle_type handle, const owning_context& ctx,
                                   std::source_location where = std::source_location::current()) {
    return graph{handle, ctx.lifetime_for("graph", "adopt", where)};
  }

  /// A copy of the graph (cuGraphClone).
  [[nodiscard]] graph clone(std::source_location where = std::source_location::current()) const;
  /// An executable graph (cuGraphInstantiateWithParams, one driver call). Throws
  /// cuwrap::error with the driver's reason (CUgraphInstantiateResult) and the failing node:
  /// its kind and the call site that added it.
  [[nodiscard]] graph_exec instantiate(
      instantiate_flags flags = instantiate_flags::none,
      std::source_location where = std::source_location::current()) const;
  /// An executable graph, uploaded on `upload_on` as part of instantiating
  /// (CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD with hUploadStream); otherwise as instantiate(flags).
  [[nodiscard]] graph_exec instantiate(
      stream_ref upload_on, instantiate_flags flags = instantiate_flags::none,
      std::source_location where = std::source_location::current()) const;

 private:
  friend class capture_guard;
  graph_exec instantiate_with(instantiate_flags flags, CUstream upload,
                              std::source_location where) const;
  graph(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : unique_handle{
            graph_ref{handle, ctx ? ctx->handle : CUcontext{}, ctx ? ctx->device : CUdevice{}},
            std::move(ctx)} {}
};

static_assert(!std::is_copy_constructible_v<graph> && std::is_nothrow_move_constructible_v<graph>);

/// A non-owning view of an executable graph. A view of a moved-from graph_exec is empty: its
/// operations throw cuwrap::usage_error before any driver call.
class graph_exec_ref {
 public:
  using native_handle_type = CUgraphExec;

  /// Views `handle`, whose nodes work in context `ctx`.
  constexpr graph_exec_ref(native_handle_type handle, CUcontext ctx) noexcept
      : handle_{handle}, context_{ctx} {}

  /// The driver's handle (null for a moved-from graph_exec).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a moved-from or released graph_exec, and for views of one.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }
  /// The context its nodes work in.
  [[nodiscard]] constexpr CUcontext context() const noexcept { return context_; }

  /// Launches the graph on `s` (cuGraphLaunch; one driver call).
  void launch(stream_ref s, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "graph_exec", "launch", where);
    detail::expect_argument_not_moved_from(!s.empty(), "graph_exec", "launch", "stream", where);
    check(detail::driver().cuGraphLaunch(handle_, s.get()), "cuGraphLaunch", where);
  }
  /// Uploads the graph to the device ahead of its first launch (cuGraphUpload).
  void upload(stream_ref s, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "graph_exec", "upload", where);
    detail::expect_argument_not_moved_from(!s.empty(), "graph_exec", "upload", "stream", where);
    check(detail::driver().cuGraphUpload(handle_, s.get()), "cuGraphUpload", where);
  }
  /// The flags it was instantiated with (cuGraphExecGetFlags; one driver call): has(flags(),
  /// instantiate_flags::device_launch) tells whether kernels may launch it (cudaGraphLaunch in
  /// device code, passing get(), which is the cudaGraphExec_t they take).
  [[nodiscard]] instantiate_flags flags(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "graph_exec", "flags", where);
    cuuint64_t raw = 0;
    check(detail::driver().cuGraphExecGetFlags(handle_, &raw), "cuGraphExecGetFlags", where);
    return static_cast<instantiate_flags>(raw);
  }

  /// Takes `g`'s parameters, which must have the same topology and node kinds
  /// (cuGraphExecUpdate). Otherwise throws, naming the offending node and the reason.
  void update(graph_ref g, std::source_location where = std::source_location::current()) const;

  /// New arguments (and config) for kernel node `node` (cuGraphExecKernelNodeSetParams).
  /// Errors name cuGraphExecKernelNodeSetParams and the call site (carried by `config`).
  template <class... Params, class... Args>
  void set_kernel_params(graph_node node, const typed_kernel<void(Params...)>& k,
                         detail::located<launch_config> config, Args&&... args) const {
    static_assert(sizeof...(Args) == sizeof...(Params),
                  "set_kernel_params: the number of arguments differs from the kernel's");
    if constexpr (sizeof...(Args) == sizeof...(Params)) {
      const std::source_location where = config.where;
      detail::expect_not_moved_from(!empty(), "graph_exec", "set_kernel_params", where);
      detail::expect_argument_not_moved_from(k.get() != nullptr, "graph_exec", "set_kernel_params",
                                             "kernel", where);
      auto values = detail::typed_kernel_values<Params...>(std::index_sequence_for<Params...>{},
                                                           "graph_exec", "set_kernel_params", where,
                                                           std::forward<Args>(args)...);
      std::apply(
          [&](auto&... v) {
            if constexpr (sizeof...(v) == 0) {
              set_kernel_params_raw(node, k, config.value, nullptr, where);
            } else {
              void* params[] = {static_cast<void*>(&v)...};
              set_kernel_params_raw(node, k, config.value, params, where);
            }
          },
          values);
    }
  }
  /// New source and destination for memcpy node `node` (cuGraphExecMemcpyNodeSetParams).
  template <memory_range Dst, memory_range Src>
  void set_copy_params(graph_node node, Dst&& dst, Src&& src,
                       std::source_location where = std::source_location::current()) const {
    const auto d = as_device_span(dst, where);
    const auto s = as_device_span(src, where);
    const auto bytes = detail::checked_copy_size(d, s, "cuGraphExecMemcpyNodeSetParams", where);
    set_copy_bytes(node, d.address(), s.address(), bytes, where);
  }
  /// New parameters for memcpy node `node` from a whole CUDA_MEMCPY3D
  /// (cuGraphExecMemcpyNodeSetParams). The driver takes only 1-dimensional copies between the
  /// same kinds of memory of the same contexts. The typed form is set_copy_3d
  /// (<cuwrap/graph_copy_3d.hpp>).
  void set_copy_3d_params(graph_node node, const CUDA_MEMCPY3D& params,
                          std::source_location where = std::source_location::current()) const;
  /// New destination and value for memset node `node` (cuGraphExecMemsetNodeSetParams).
  template <device_memory Dst,
            class T = typename decltype(as_device_span(std::declval<Dst&>()))::value_type>
  requires detail::fillable<T>
  void set_fill_params(graph_node node, Dst&& dst, std::type_identity_t<T> value,
                       std::source_location where = std::source_location::current()) const {
    const auto d = as_device_span(dst, where);
    set_fill_bits(node, d.address(), detail::bits_of(value), sizeof(T), d.size(), where);
  }
  /// Runs `fn` instead of host node `node`'s callable from the next launch on
  /// (cuGraphExecHostNodeSetParams). The executable graph keeps `fn` alive until it is
  /// destroyed (its owner's destructor then waits for the context's work before destroying the
  /// callables it was given this way); the callable it replaces lives as long as before (with
  /// the graph it came from and every executable graph made from it).
  template <class F>
  void set_host(graph_node node, F&& fn,
                std::source_location where = std::source_location::current()) const {
    auto callable = std::make_unique<detail::host_callable<std::decay_t<F>>>(std::forward<F>(fn));
    set_host_callable(node, std::move(callable), where);
  }
  /// Records `e` at event record node `node` (cuGraphExecEventRecordNodeSetEvent).
  void set_event_record(graph_node node, event_ref e,
                        std::source_location where = std::source_location::current()) const;
  /// Waits for `e` at event wait node `node` (cuGraphExecEventWaitNodeSetEvent).
  void set_event_wait(graph_node node, event_ref e,
                      std::source_location where = std::source_location::current()) const;
  /// Takes the parameters of `child` (same topology) for child graph node `node`
  /// (cuGraphExecChildGraphNodeSetParams).
  void set_child(graph_node node, graph_ref child,
                 std::source_location where = std::source_location::current()) const;
  /// Enables or disables a kernel, memcpy or memset node (cuGraphNodeSetEnabled).
  void set_enabled(graph_node node, bool enabled,
                   std::source_location where = std::source_location::current()) const;
  /// True if `node` is enabled (cuGraphNodeGetEnabled).
  [[nodiscard]] bool enabled(graph_node node,
                             std::source_location where = std::source_location::current()) const;

 protected:
  native_handle_type handle_;
  CUcontext context_;

 private:
  void set_kernel_params_raw(graph_node node, const kernel& k, const launch_config& config,
                             void** params, std::source_location where) const;
  void set_copy_bytes(graph_node node, CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
                      std::source_location where) const;
  void set_fill_bits(graph_node node, CUdeviceptr dst, unsigned value, std::size_t element_size,
                     std::size_t count, std::source_location where) const;
  void set_host_callable(graph_node node, std::unique_ptr<detail::host_callable_base> callable,
                         std::source_location where) const;
};

namespace detail {
/// How a graph_exec owner destroys its handle (cuGraphExecDestroy); see unique_handle.
struct graph_exec_traits {
  using ref_type = graph_exec_ref;
  using state_type = std::shared_ptr<const context_owner>;
  static constexpr CUgraphExec empty_handle() noexcept { return nullptr; }
  static void destroy(CUgraphExec handle) noexcept {
    check_nothrow(driver().cuGraphExecDestroy(handle), "cuGraphExecDestroy");
    release_host_replacements(handle);
  }
};
}  // namespace detail

/// An owning executable graph (cuGraphExecDestroy). Move-only; keeps its context alive. A
/// moved-from graph_exec is empty: its operations throw cuwrap::usage_error.
class graph_exec : public detail::unique_handle<detail::graph_exec_traits> {
 public:
  /// Takes ownership of `handle`. Throws cuwrap::usage_error (and takes nothing) if `ctx` was
  /// moved from.
  [[nodiscard]] static graph_exec adopt(
      native_handle_type handle, const owning_context& ctx,
      std::source_location where = std::source_location::current()) {
    return graph_exec{handle, ctx.lifetime_for("graph_exec", "adopt", where)};
  }

 private:
  friend class graph;
  graph_exec(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : unique_handle{graph_exec_ref{handle, ctx ? ctx->handle : CUcontext{}}, std::move(ctx)} {}
};

static_assert(!std::is_copy_constructible_v<graph_exec> &&
              std::is_nothrow_move_constructible_v<graph_exec>);

}  // namespace cuwrap
