// Per-node updates of executable graphs beyond kernels, copies and fills: host callables (and
// how long a replacement lives), events and child graphs.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuwrap/detail/graph_labels.hpp"
#include "cuwrap/graph.hpp"

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

void CUDA_CB run_host_callable(void* data) {
  static_cast<detail::host_callable_base*>(data)->run();
}

// The host callables set_host gave each executable graph, with its context.
struct replacements {
  CUcontext context = nullptr;
  std::vector<std::unique_ptr<detail::host_callable_base>> callables;
};

struct replacement_table {
  std::mutex mutex;
  std::map<CUgraphExec, replacements> execs;
};

replacement_table& table() {
  static auto* const t = new replacement_table;  // never destroyed: execs may outlive statics
  return *t;
}

// "<what> of node <label or handle>"
std::string about(const char* what, graph_node node) {
  const std::string label = node.label();
  return std::string{what} + " of the node " +
         (label.empty() ? std::to_string(reinterpret_cast<std::uintptr_t>(node.get()))
                        : "added at " + label);
}

}  // namespace

namespace detail {

void release_host_replacements(CUgraphExec exec) noexcept {
  replacements r;
  {
    replacement_table& t = table();
    const std::lock_guard lock{t.mutex};
    const auto it = t.execs.find(exec);
    if (it == t.execs.end()) return;
    r = std::move(it->second);
    t.execs.erase(it);
  }
  // A launch may still run a replaced callable: cuGraphExecDestroy does not wait for launches
  // ("the graph will be destroyed once it completes"), so wait for the context's work.
  if (drv().cuCtxPushCurrent(r.context) == CUDA_SUCCESS) {
    check_nothrow(drv().cuCtxSynchronize(), "cuCtxSynchronize");
    CUcontext popped{};
    check_nothrow(drv().cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

}  // namespace detail

void graph_exec_ref::set_host_callable(graph_node node,
                                       std::unique_ptr<detail::host_callable_base> callable,
                                       std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_host", where);
  const CUDA_HOST_NODE_PARAMS p{&run_host_callable, callable.get()};
  replacement_table& t = table();
  const std::lock_guard lock{t.mutex};  // the callable is kept before any launch can run it
  const CUresult r = drv().cuGraphExecHostNodeSetParams(handle_, node.get(), &p);
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphExecHostNodeSetParams", about("the callable", node),
                              where);
  }
  replacements& kept = t.execs[handle_];
  kept.context = context_;
  kept.callables.push_back(std::move(callable));
}

void graph_exec_ref::set_event_record(graph_node node, event_ref e,
                                      std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_event_record", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph_exec", "set_event_record", "event",
                                         where);
  const CUresult r = drv().cuGraphExecEventRecordNodeSetEvent(handle_, node.get(), e.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphExecEventRecordNodeSetEvent", about("the event", node),
                              where);
  }
}

void graph_exec_ref::set_event_wait(graph_node node, event_ref e,
                                    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_event_wait", where);
  detail::expect_argument_not_moved_from(!e.empty(), "graph_exec", "set_event_wait", "event",
                                         where);
  const CUresult r = drv().cuGraphExecEventWaitNodeSetEvent(handle_, node.get(), e.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphExecEventWaitNodeSetEvent", about("the event", node),
                              where);
  }
}

void graph_exec_ref::set_child(graph_node node, graph_ref child, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "graph_exec", "set_child", where);
  detail::expect_argument_not_moved_from(!child.empty(), "graph_exec", "set_child", "child graph",
                                         where);
  const CUresult r = drv().cuGraphExecChildGraphNodeSetParams(handle_, node.get(), child.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_graph_error(r, "cuGraphExecChildGraphNodeSetParams",
                              about("the child graph", node), where);
  }
}

}  // namespace cuwrap
