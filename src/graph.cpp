// Building, instantiating and updating graphs.
#include "cuwrap/graph.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

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
                                      CUcontext ctx, const char* api, std::source_location where) {
  if (!config.attributes().empty()) {
    detail::throw_graph_error(
        CUDA_ERROR_NOT_SUPPORTED, api,
        "kernel " + k.name() + ": launch attributes are not supported on graph kernel nodes",
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
graph_node added(CUresult r, const CUgraphNode& node, const char* api, const char* kind,
                 std::source_location where) {
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, api, std::string{"adding a "} + kind + " node", where);
  }
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
  }
  return "unknown";
}

}  // namespace

node_kind graph_node::kind(std::source_location where) const {
  CUgraphNodeType type{};
  check(drv().cuGraphNodeGetType(handle_, &type), "cuGraphNodeGetType", where);
  return static_cast<node_kind>(type);
}

graph_node graph_ref::add_empty(dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_empty", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEmptyNode(&n, handle_, after.data(), after.size()), n,
               "cuGraphAddEmptyNode", "empty", where);
}

graph_node graph_ref::add_kernel_params(const kernel& k, const launch_config& config,
                                        dependencies after, void** params,
                                        std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_kernel", where);
  const auto p = kernel_params(k, config, params, context_, "cuGraphAddKernelNode", where);
  CUgraphNode n{};
  const CUresult r = drv().cuGraphAddKernelNode(&n, handle_, after.data(), after.size(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(
        r, "cuGraphAddKernelNode",
        "adding a kernel node for " + k.name() + detail::context_mismatch(k, context_), where);
  }
  return graph_node{n};
}

graph_node graph_ref::add_copy_bytes(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
                                     dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_copy", where);
  const auto p = copy_params(dst, src, bytes);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemcpyNode(&n, handle_, after.data(), after.size(), &p, context_), n,
               "cuGraphAddMemcpyNode", "memcpy", where);
}

graph_node graph_ref::add_fill_bits(CUdeviceptr dst, unsigned value, std::size_t element_size,
                                    std::size_t count, dependencies after,
                                    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_fill", where);
  const auto p = fill_params(dst, value, element_size, count);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemsetNode(&n, handle_, after.data(), after.size(), &p, context_), n,
               "cuGraphAddMemsetNode", "memset", where);
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
  return added(drv().cuGraphAddHostNode(&n, handle_, after.data(), after.size(), &p), n,
               "cuGraphAddHostNode", "host", where);
}

graph_node graph_ref::add_event_record(event_ref e, dependencies after,
                                       std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_event_record", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph", "add_event_record", "event", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEventRecordNode(&n, handle_, after.data(), after.size(), e.get()), n,
               "cuGraphAddEventRecordNode", "event record", where);
}

graph_node graph_ref::add_event_wait(event_ref e, dependencies after,
                                     std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_event_wait", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph", "add_event_wait", "event", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddEventWaitNode(&n, handle_, after.data(), after.size(), e.get()), n,
               "cuGraphAddEventWaitNode", "event wait", where);
}

graph_node graph_ref::add_child(graph_ref child, dependencies after,
                                std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_child", where);
  detail::expect_argument_not_moved_from(!child.empty(), "graph", "add_child", "child graph",
                                         where);
  CUgraphNode n{};
  return added(drv().cuGraphAddChildGraphNode(&n, handle_, after.data(), after.size(), child.get()),
               n, "cuGraphAddChildGraphNode", "child graph", where);
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
  return {graph_node{n}, p.dptr};
}

graph_node graph_ref::add_memory_free(CUdeviceptr address, dependencies after,
                                      std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_memory_free", where);
  CUgraphNode n{};
  return added(drv().cuGraphAddMemFreeNode(&n, handle_, after.data(), after.size(), address), n,
               "cuGraphAddMemFreeNode", "memory free", where);
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

CUgraphConditionalHandle graph_ref::make_condition(unsigned default_value,
                                                   std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "make_condition", where);
  CUgraphConditionalHandle handle{};
  check(drv().cuGraphConditionalHandleCreate(&handle, handle_, context_, default_value,
                                             CU_GRAPH_COND_ASSIGN_DEFAULT),
        "cuGraphConditionalHandleCreate", where);
  return handle;
}

conditional_node graph_ref::add_conditional(CUgraphConditionalHandle condition, bool loop,
                                            dependencies after, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph", "add_conditional", where);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = condition;
  p.conditional.type = loop ? CU_GRAPH_COND_TYPE_WHILE : CU_GRAPH_COND_TYPE_IF;
  p.conditional.size = 1;
  p.conditional.ctx = context_;
  CUgraphNode n{};
  const CUresult r = drv().cuGraphAddNode(&n, handle_, after.data(), nullptr, after.size(), &p);
  const graph_node node = added(r, n, "cuGraphAddNode", "conditional", where);
  return {node, graph_ref{p.conditional.phGraph_out[0], context_, device_}};
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
  CUgraphExec exec{};
  const CUresult r =
      drv().cuGraphInstantiate(&exec, handle_, static_cast<unsigned long long>(flags));
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphInstantiateWithFlags",
                              "flags " + std::to_string(static_cast<unsigned long long>(flags)),
                              where);
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
  if (info.errorNode != nullptr) {
    const graph_node node{info.errorNode};
    CUgraphNodeType type{};
    const bool known = drv().cuGraphNodeGetType(node.get(), &type) == CUDA_SUCCESS;
    details += std::string{"; node "} +
               (known ? kind_name(static_cast<node_kind>(type)) : "of unknown kind") + " " +
               std::to_string(reinterpret_cast<std::uintptr_t>(node.get()));
  }
  if (info.errorFromNode != nullptr) {
    details += " (the edge from node " +
               std::to_string(reinterpret_cast<std::uintptr_t>(info.errorFromNode)) + ")";
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
