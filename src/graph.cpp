// Building, instantiating and updating graphs.
#include "cuwrap/graph.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "cuwrap/detail/graph_labels.hpp"
#include "in_context.hpp"

namespace cuwrap {
namespace detail {

void throw_graph_error(CUresult result, const char* api, std::string details,
                       std::source_location where) {
  throw_error(make_error_code(result), api, details, where);
}

}  // namespace detail

namespace {

const detail::driver_table& drv() { return detail::driver(); }

// The driver's parameter structs, shared by the add_* and set_* paths.
CUDA_KERNEL_NODE_PARAMS kernel_params(const kernel& k, const launch_config& config, void** params,
                                      CUcontext ctx, const char* api, std::source_location where,
                                      bool attributes_allowed = false) {
  if (!attributes_allowed && !config.attributes().empty()) {
    detail::throw_graph_error(
        CUDA_ERROR_NOT_SUPPORTED, api,
        "kernel " + k.name() +
            ": an executable graph's kernel node keeps the attributes it was added with "
            "(cuGraphExecKernelNodeSetParams takes none)",
        where);
  }
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = k.get();
  p.gridDimX = config.grid().x;
  p.gridDimY = config.grid().y;
  p.gridDimZ = config.grid().z;
  p.blockDimX = config.block().x;
  p.blockDimY = config.block().y;
  p.blockDimZ = config.block().z;
  p.sharedMemBytes = static_cast<unsigned>(config.dynamic_shared_bytes());
  p.kernelParams = params;  // the driver copies the argument values
  p.ctx = ctx;
  return p;
}

CUDA_MEMCPY3D copy_params(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) noexcept {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;  // the driver tells host from device by address
  p.srcDevice = src;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = dst;
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

CUDA_MEMSET_NODE_PARAMS fill_params(CUdeviceptr dst, unsigned value, std::size_t element_size,
                                    std::size_t count) noexcept {
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = dst;
  p.value = value;
  p.elementSize = static_cast<unsigned>(element_size);
  p.width = count;
  p.height = 1;
  return p;
}

// Checks an add_* result and returns the new node. `node` is taken by reference so that
// `added(drv().cuGraphAddXNode(&n, ...), n, ...)` reads `n` after the driver wrote it (a copy
// could be made before the call, as argument evaluation order is unspecified).
graph_node added(CUresult r, CUgraph graph, const CUgraphNode& node, const char* api,
                 const char* kind, std::source_location where) {
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, api, std::string{"adding a "} + kind + " node", where);
  }
  detail::label_node(graph, node, where);
  return graph_node{node};
}

void CUDA_CB run_host_callable(void* data) {
  static_cast<detail::host_callable_base*>(data)->run();
}

void CUDA_CB destroy_host_callable(void* data) {
  delete static_cast<detail::host_callable_base*>(data);
}

const char* update_reason(CUgraphExecUpdateResult result) {
  switch (result) {
    case CU_GRAPH_EXEC_UPDATE_ERROR: return "the update failed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "the topology changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "a node's kind changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "a kernel node's function changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
      return "a node's parameters changed in a way that cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "a node cannot be updated";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "the kernel changed in an unsupported way";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "a node's attributes changed";
    default: return "the update was refused";
  }
}

const char* instantiate_reason(CUgraphInstantiateResult result) {
  switch (result) {
    case CUDA_GRAPH_INSTANTIATE_SUCCESS: return "the instantiation failed";
    case CUDA_GRAPH_INSTANTIATE_ERROR: return "the instantiation failed";
    case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE:
      return "the graph's structure is invalid (a cycle, say)";
    case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
      return "a node's operation is not supported for device launch";
    case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
      return "device launch needs every node in one context";
    case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
      return "a conditional handle has no conditional node";
    default: return "the instantiation was refused";
  }
}

std::string instantiate_flags_text(instantiate_flags flags) {
  std::string text;
  const auto add = [&](instantiate_flags f, const char* name) {
    if (has(flags, f)) text += (text.empty() ? "" : "|") + std::string{name};
  };
  add(instantiate_flags::auto_free_on_launch, "auto_free_on_launch");
  add(instantiate_flags::upload, "upload");
  add(instantiate_flags::device_launch, "device_launch");
  add(instantiate_flags::use_node_priority, "use_node_priority");
  return text.empty() ? "none" : text;
}

const char* kind_name(node_kind kind) {
  switch (kind) {
    case node_kind::kernel: return "kernel";
    case node_kind::memcpy: return "memcpy";
    case node_kind::memset: return "memset";
    case node_kind::host: return "host";
    case node_kind::child_graph: return "child graph";
    case node_kind::empty: return "empty";
    case node_kind::event_wait: return "event wait";
    case node_kind::event_record: return "event record";
    case node_kind::memory_alloc: return "memory alloc";
    case node_kind::memory_free: return "memory free";
    case node_kind::conditional: return "conditional";
    case node_kind::semaphore_signal: return "external semaphore signal";
    case node_kind::semaphore_wait: return "external semaphore wait";
    case node_kind::memop_batch: return "memory operation batch";
  }
  return "unknown";
}

// "<kind> node added at file:line" (or "<kind> node <handle>" for a node cuwrap did not add).
std::string describe_node(CUgraphNode node) {
  CUgraphNodeType type{};
  const bool known = detail::driver().cuGraphNodeGetType(node, &type) == CUDA_SUCCESS;
  std::string text =
      std::string{known ? kind_name(static_cast<node_kind>(type)) : "unknown"} + " node";
  const std::string label = detail::node_label(node);
  if (!label.empty()) return text + " added at " + label;
  return text + " " + std::to_string(reinterpret_cast<std::uintptr_t>(node));
}

// Appends `g`'s nodes (ids `prefix`n<index>, labelled by kind and call site) and edges to `dot`,
// then each child graph and conditional body as a cluster of its own, nested likewise.
void append_labelled(graph_ref g, CUcontext ctx, CUdevice device, const std::string& prefix,
                     const std::string& indent, std::string& dot, std::source_location where) {
  const auto all = g.nodes(where);
  const auto id = [&](graph_node node) {
    return prefix + "n" + std::to_string(std::find(all.begin(), all.end(), node) - all.begin());
  };
  for (const graph_node node : all) {
    std::string text = kind_name(node.kind(where));
    if (const std::string label = node.label(); !label.empty()) text += "\\n" + label;
    for (char& c : text) {
      if (c == '"') c = '\'';
    }
    dot += indent + id(node) + " [shape=box, label=\"" + text + "\"];\n";
  }
  for (const graph_edge e : g.edges(where)) {
    dot += indent + id(e.from) + " -> " + id(e.to) + ";\n";
  }
  for (const graph_node node : all) {
    std::vector<std::pair<CUgraph, std::string>> inner;
    if (node.kind(where) == node_kind::child_graph) {
      CUgraph child{};
      check(drv().cuGraphChildGraphNodeGetGraph(node.get(), &child),
            "cuGraphChildGraphNodeGetGraph", where);
      inner.emplace_back(child, "child graph of " + id(node));
    } else if (node.kind(where) == node_kind::conditional) {
      const std::vector<CUgraph> bodies = detail::conditional_bodies(node.get());
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        inner.emplace_back(bodies[i], "body " + std::to_string(i) + " of " + id(node));
      }
    }
    for (std::size_t i = 0; i < inner.size(); ++i) {
      const std::string cluster = id(node) + "_" + std::to_string(i) + "_";
      dot += indent + "subgraph cluster_" + cluster + " {\n";
      dot += indent + "  label=\"" + inner[i].second + "\";\n";
      append_labelled(graph_ref{inner[i].first, ctx, device}, ctx, device, cluster, indent + "  ",
                      dot, where);
      dot += indent + "}\n";
    }
  }
}

}  // namespace

std::string graph_node::label() const { return detail::node_label(handle_); }

CUlaunchAttributeValue graph_node::attribute(CUlaunchAttributeID id,
                                             std::source_location where) const {
  CUlaunchAttributeValue value{};
  const CUresult r = drv().cuGraphKernelNodeGetAttribute(handle_, id, &value);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphKernelNodeGetAttribute",
                              "launch attribute " + std::to_string(static_cast<int>(id)) +
                                  " of the " + describe_node(handle_),
                              where);
  }
  return value;
}

void graph_node::set_attribute(const CUlaunchAttribute& attribute,
                               std::source_location where) const {
  const CUresult r = drv().cuGraphKernelNodeSetAttribute(handle_, attribute.id, &attribute.value);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphKernelNodeSetAttribute",
                              "launch attribute " + std::to_string(static_cast<int>(attribute.id)) +
                                  " of the " + describe_node(handle_),
                              where);
  }
}

node_kind graph_node::kind(std::source_location where) const {
  CUgraphNodeType type{};
  check(drv().cuGraphNodeGetType(handle_, &type), "cuGraphNodeGetType", where);
  return static_cast<node_kind>(type);
}

graph_node graph_ref::add_empty(dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_empty", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEmptyNode(&n, handle_, after.data(), after.size()), handle_, n,
               "cuGraphAddEmptyNode", "empty", where);
}

graph_node graph_ref::add_kernel_params(const kernel& k, const launch_config& config,
                                        dependencies after, void** params,
                                        std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_kernel", where);
  const auto p = kernel_params(k, config, params, context_, "cuGraphAddKernelNode", where, true);
  // NVIDIA's driver crashes in cuGraphAddKernelNode when no context is current (seen on an
  // H200, driver 580.159.04): the graph's context is made current first unless it is.
  std::optional<scoped_current_context> current;
  if (context_ != nullptr) current.emplace(context_ref{context_}, where);
  CUgraphNode n{};
  const CUresult r = drv().cuGraphAddKernelNode(&n, handle_, after.data(), after.size(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(
        r, "cuGraphAddKernelNode",
        "adding a kernel node for " + k.name() + detail::context_mismatch(k, context_), where);
  }
  // Launch attributes become node attributes: one more driver call each (none for a plain
  // config). A refused attribute removes the node again.
  for (const CUlaunchAttribute& a : config.attributes()) {
    if (const CUresult ar = drv().cuGraphKernelNodeSetAttribute(n, a.id, &a.value);
        ar != CUDA_SUCCESS) {
      check_nothrow(drv().cuGraphDestroyNode(n), "cuGraphDestroyNode");
      detail::throw_graph_error(
          ar, "cuGraphKernelNodeSetAttribute",
          "kernel " + k.name() + ": launch attribute " + std::to_string(static_cast<int>(a.id)),
          where);
    }
  }
  detail::label_node(handle_, n, where);
  return graph_node{n};
}

graph_node graph_ref::add_copy_bytes(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
                                     dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_copy", where);
  const auto p = copy_params(dst, src, bytes);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemcpyNode(&n, handle_, after.data(), after.size(), &p, context_),
               handle_, n, "cuGraphAddMemcpyNode", "memcpy", where);
}

graph_node graph_ref::add_copy_3d_params(const CUDA_MEMCPY3D& params, dependencies after,
                                         std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_copy_3d", where);
  CUgraphNode n{};
  return added(
      drv().cuGraphAddMemcpyNode(&n, handle_, after.data(), after.size(), &params, context_),
      handle_, n, "cuGraphAddMemcpyNode", "memcpy", where);
}

graph_node graph_ref::add_fill_bits(CUdeviceptr dst, unsigned value, std::size_t element_size,
                                    std::size_t count, dependencies after,
                                    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_fill", where);
  const auto p = fill_params(dst, value, element_size, count);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemsetNode(&n, handle_, after.data(), after.size(), &p, context_),
               handle_, n, "cuGraphAddMemsetNode", "memset", where);
}

graph_node graph_ref::add_host_callable(std::unique_ptr<detail::host_callable_base> callable,
                                        dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_host", where);
  // A user object owns the callable; the graph takes our reference, and every executable
  // graph instantiated from it takes its own, so the callable lives as long as any of them.
  CUuserObject object{};
  check(drv().cuUserObjectCreate(&object, callable.get(), &destroy_host_callable, 1,
                                 CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
        "cuUserObjectCreate", where);
  auto* data = callable.release();  // the user object owns it now
  if (const CUresult r =
          drv().cuGraphRetainUserObject(handle_, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
      r != CUDA_SUCCESS) {
    check_nothrow(drv().cuUserObjectRelease(object, 1), "cuUserObjectRelease");
    detail::throw_graph_error(r, "cuGraphRetainUserObject", "adding a host node", where);
  }
  const CUDA_HOST_NODE_PARAMS p{&run_host_callable, data};
  CUgraphNode n{};
  return added(drv().cuGraphAddHostNode(&n, handle_, after.data(), after.size(), &p), handle_, n,
               "cuGraphAddHostNode", "host", where);
}

graph_node graph_ref::add_event_record(event_ref e, dependencies after,
                                       std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_event_record", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph", "add_event_record", "event", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEventRecordNode(&n, handle_, after.data(), after.size(), e.get()),
               handle_, n, "cuGraphAddEventRecordNode", "event record", where);
}

graph_node graph_ref::add_event_wait(event_ref e, dependencies after,
                                     std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_event_wait", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph", "add_event_wait", "event", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEventWaitNode(&n, handle_, after.data(), after.size(), e.get()),
               handle_, n, "cuGraphAddEventWaitNode", "event wait", where);
}

graph_node graph_ref::add_child(graph_ref child, dependencies after,
                                std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_child", where);
  detail::expect_argument_not_moved_from(!child.empty(), "graph", "add_child", "child graph",
                                         where);
  CUgraphNode n{};
  return added(drv().cuGraphAddChildGraphNode(&n, handle_, after.data(), after.size(), child.get()),
               handle_, n, "cuGraphAddChildGraphNode", "child graph", where);
}

graph_allocation graph_ref::add_memory_alloc(std::size_t bytes, dependencies after,
                                             std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_memory_alloc", where);
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, device_};
  p.bytesize = bytes;
  CUgraphNode n{};
  const CUresult r = drv().cuGraphAddMemAllocNode(&n, handle_, after.data(), after.size(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphAddMemAllocNode",
                              std::to_string(bytes) + " bytes on device " + std::to_string(device_),
                              where);
  }
  detail::label_node(handle_, n, where);
  return {graph_node{n}, p.dptr};
}

graph_node graph_ref::add_memory_free(CUdeviceptr address, dependencies after,
                                      std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_memory_free", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemFreeNode(&n, handle_, after.data(), after.size(), address),
               handle_, n, "cuGraphAddMemFreeNode", "memory free", where);
}

void graph_ref::add_dependency(graph_node from, graph_node to, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_dependency", where);
  const CUgraphNode f = from.get();
  const CUgraphNode t = to.get();
  check(drv().cuGraphAddDependencies(handle_, &f, &t, nullptr, 1), "cuGraphAddDependencies", where);
}

std::vector<graph_node> graph_ref::nodes(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "nodes", where);
  std::size_t count = 0;
  check(drv().cuGraphGetNodes(handle_, nullptr, &count), "cuGraphGetNodes", where);
  std::vector<CUgraphNode> raw(count);
  check(drv().cuGraphGetNodes(handle_, raw.data(), &count), "cuGraphGetNodes", where);
  return {raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(count)};
}

std::vector<graph_edge> graph_ref::edges(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "edges", where);
  std::size_t count = 0;
  check(drv().cuGraphGetEdges(handle_, nullptr, nullptr, nullptr, &count), "cuGraphGetEdges",
        where);
  std::vector<CUgraphNode> from(count), to(count);
  check(drv().cuGraphGetEdges(handle_, from.data(), to.data(), nullptr, &count), "cuGraphGetEdges",
        where);
  std::vector<graph_edge> result;
  result.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    result.push_back({graph_node{from[i]}, graph_node{to[i]}});
  }
  return result;
}

void graph_ref::write_dot(const std::string& path, unsigned flags,
                          std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "write_dot", where);
  const CUresult r = drv().cuGraphDebugDotPrint(handle_, path.c_str(), flags);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphDebugDotPrint", "'" + path + "'", where);
  }
}

std::string graph_ref::to_dot(unsigned flags, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "to_dot", where);
  char path[] = "/tmp/cuwrap-graph-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    detail::throw_graph_error(CUDA_ERROR_OPERATING_SYSTEM, "mkstemp", "a temporary DOT file",
                              where);
  }
  close(fd);
  struct remove_file {
    const char* path;
    ~remove_file() { std::remove(path); }
  } cleanup{path};
  write_dot(path, flags, where);
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::string graph_ref::to_labelled_dot(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "to_labelled_dot", where);
  std::string dot = "digraph cuwrap_graph {\n";
  append_labelled(*this, context_, device_, "", "  ", dot, where);
  return dot + "}\n";
}

graph_condition graph_ref::make_condition(unsigned default_value, condition_reset reset,
                                          std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "make_condition", where);
  CUgraphConditionalHandle handle{};
  const CUresult r = drv().cuGraphConditionalHandleCreate(&handle, handle_, context_, default_value,
                                                          static_cast<unsigned>(reset));
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphConditionalHandleCreate",
                              "a condition with default value " + std::to_string(default_value),
                              where);
  }
  return graph_condition{handle};
}

conditional_node graph_ref::add_conditional(graph_condition condition, conditional_kind kind,
                                            dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_conditional", where);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = condition.get();
  p.conditional.type = kind.type();
  p.conditional.size = kind.bodies();
  p.conditional.ctx = context_;
  CUgraphNode n{};
  const CUresult r = drv().cuGraphAddNode(&n, handle_, after.data(), nullptr, after.size(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphAddNode",
                              std::string{"adding a conditional node ("} + kind.name() + ", " +
                                  std::to_string(kind.bodies()) + " bodies)",
                              where);
  }
  detail::label_node(handle_, n, where);
  conditional_node result{graph_node{n}, kind, {}};
  result.bodies.reserve(kind.bodies());
  for (unsigned i = 0; i < kind.bodies(); ++i) {
    result.bodies.emplace_back(p.conditional.phGraph_out[i], context_, device_);
    detail::label_body(handle_, n, p.conditional.phGraph_out[i]);
  }
  return result;
}

graph_ref conditional_node::body(std::size_t i, std::source_location where) const {
  if (i >= bodies.size()) {
    throw usage_error{"cuwrap::conditional_node::body: body " + std::to_string(i) + " of a " +
                          kind.name() + " node with " + std::to_string(bodies.size()) +
                          (bodies.size() == 1 ? " body" : " bodies"),
                      where};
  }
  return bodies[i];
}

namespace {
CUgraph create_graph(const owning_context& ctx, std::source_location where) {
  (void)ctx.lifetime_for("graph", "graph", where);  // a moved-from context throws here
  CUgraph handle{};
  check(drv().cuGraphCreate(&handle, 0), "cuGraphCreate", where);
  return handle;
}
}  // namespace

graph::graph(const owning_context& ctx, std::source_location where)
    : graph{create_graph(ctx, where), ctx.lifetime()} {}

graph graph::clone(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "clone", where);
  CUgraph copy{};
  check(drv().cuGraphClone(&copy, handle_), "cuGraphClone", where);
  return graph{copy, state()};
}

graph_exec graph::instantiate(instantiate_flags flags, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "instantiate", where);
  return instantiate_with(flags, nullptr, where);
}

graph_exec graph::instantiate(stream_ref upload_on, instantiate_flags flags,
                              std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "instantiate", where);
  detail::expect_argument_not_moved_from(!upload_on.empty(), "graph", "instantiate", "stream",
                                         where);
  return instantiate_with(flags | instantiate_flags::upload, upload_on.get(), where);
}

graph_exec graph::instantiate_with(instantiate_flags flags, CUstream upload,
                                   std::source_location where) const {
  CUDA_GRAPH_INSTANTIATE_PARAMS p{};
  p.flags = static_cast<cuuint64_t>(flags);
  p.hUploadStream = upload;
  CUgraphExec exec{};
  const CUresult r = detail::call_in_context(
      context_, [&] { return drv().cuGraphInstantiateWithParams(&exec, handle_, &p); }, where);
  if (r != CUDA_SUCCESS) {
    std::string details = instantiate_reason(p.result_out);
    details += " (flags " + instantiate_flags_text(flags) + ")";
    if (p.hErrNode_out != nullptr) details += "; the " + describe_node(p.hErrNode_out);
    detail::throw_graph_error(r, "cuGraphInstantiateWithParams", details, where);
  }
  return graph_exec{exec, state()};
}

void graph_exec_ref::update(graph_ref g, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "update", where);
  detail::expect_argument_not_moved_from(!g.empty(), "graph_exec", "update", "graph", where);
  CUgraphExecUpdateResultInfo info{};
  const CUresult r = drv().cuGraphExecUpdate(handle_, g.get(), &info);
  if (r == CUDA_SUCCESS) {
    return;
  }
  std::string details = update_reason(info.result);
  if (info.errorNode != nullptr) details += "; the " + describe_node(info.errorNode);
  if (info.errorFromNode != nullptr) {
    details += " (the edge from the " + describe_node(info.errorFromNode) + ")";
  }
  detail::throw_graph_error(r, "cuGraphExecUpdate", details, where);
}

void graph_exec_ref::set_kernel_params_raw(graph_node node, const kernel& k,
                                           const launch_config& config, void** params,
                                           std::source_location where) const {
  const char* api = "cuGraphExecKernelNodeSetParams";
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_kernel_params", where);
  detail::check_limits(k, config, where, api);
  const auto p = kernel_params(k, config, params, context_, api, where);
  std::optional<scoped_current_context> current;  // as for cuGraphAddKernelNode
  if (context_ != nullptr) current.emplace(context_ref{context_}, where);
  const CUresult r = drv().cuGraphExecKernelNodeSetParams(handle_, node.get(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, api, "kernel " + k.name() + detail::context_mismatch(k, context_),
                              where);
  }
}

void graph_exec_ref::set_copy_bytes(graph_node node, CUdeviceptr dst, CUdeviceptr src,
                                    std::size_t bytes, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_copy_params", where);
  const auto p = copy_params(dst, src, bytes);
  check(drv().cuGraphExecMemcpyNodeSetParams(handle_, node.get(), &p, context_),
        "cuGraphExecMemcpyNodeSetParams", where);
}

void graph_exec_ref::set_copy_3d_params(graph_node node, const CUDA_MEMCPY3D& params,
                                        std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_copy_3d", where);
  check(drv().cuGraphExecMemcpyNodeSetParams(handle_, node.get(), &params, context_),
        "cuGraphExecMemcpyNodeSetParams", where);
}

void graph_exec_ref::set_fill_bits(graph_node node, CUdeviceptr dst, unsigned value,
                                   std::size_t element_size, std::size_t count,
                                   std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_fill_params", where);
  const auto p = fill_params(dst, value, element_size, count);
  check(drv().cuGraphExecMemsetNodeSetParams(handle_, node.get(), &p, context_),
        "cuGraphExecMemsetNodeSetParams", where);
}

void graph_exec_ref::set_enabled(graph_node node, bool enabled, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_enabled", where);
  check(drv().cuGraphNodeSetEnabled(handle_, node.get(), enabled ? 1U : 0U),
        "cuGraphNodeSetEnabled", where);
}

bool graph_exec_ref::enabled(graph_node node, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "enabled", where);
  unsigned on = 0;
  check(drv().cuGraphNodeGetEnabled(handle_, node.get(), &on), "cuGraphNodeGetEnabled", where);
  return on != 0;
}

}  // namespace cuwrap
