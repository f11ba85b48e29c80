// External semaphore nodes of graphs (<cuwrap/graph_ext_semaphore.hpp>).
#include "cuwrap/graph_ext_semaphore.hpp"

#include <string>
#include <vector>

namespace cuwrap {
namespace {

// The driver's arrays for `batch`, each semaphore checked first.
struct node_arrays {
  std::vector<CUexternalSemaphore> handles;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> signals;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> waits;

  node_arrays(std::span<const semaphore_value> batch, bool signal, const char* operation,
              std::source_location where) {
    for (const semaphore_value& v : batch) {
      detail::expect_argument_not_moved_from(!v.semaphore.empty(), "graph", operation, "semaphore",
                                             where);
      if (v.semaphore.kind() == external_semaphore_kind::binary && v.value != 0) {
        throw usage_error(std::string{"cuwrap::graph::"} + operation + ": value " +
                              std::to_string(v.value) +
                              " given for a binary semaphore (only timeline semaphores take "
                              "values; pass 0)",
                          where);
      }
      handles.push_back(v.semaphore.get());
      if (signal) {
        signals.emplace_back().params.fence.value = v.value;
      } else {
        waits.emplace_back().params.fence.value = v.value;
      }
    }
  }
};

graph_node added(CUresult r, const CUgraphNode& node, const char* api, const char* kind,
                 std::source_location where) {
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), api, std::string{"adding an "} + kind + " node", where);
  }
  return graph_node{node};
}

}  // namespace

graph_node add_semaphore_signal(graph_ref g, std::span<const semaphore_value> batch,
                                dependencies after, std::source_location where) {
  detail::expect_not_moved_from(!g.empty(), "graph", "add_semaphore_signal", where);
  node_arrays a{batch, true, "add_semaphore_signal", where};
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS p{};
  p.extSemArray = a.handles.data();
  p.paramsArray = a.signals.data();
  p.numExtSems = static_cast<unsigned>(a.handles.size());
  CUgraphNode n{};
  return added(detail::driver().cuGraphAddExternalSemaphoresSignalNode(&n, g.get(), after.data(),
                                                                       after.size(), &p),
               n, "cuGraphAddExternalSemaphoresSignalNode", "external semaphore signal", where);
}

graph_node add_semaphore_wait(graph_ref g, std::span<const semaphore_value> batch,
                              dependencies after, std::source_location where) {
  detail::expect_not_moved_from(!g.empty(), "graph", "add_semaphore_wait", where);
  node_arrays a{batch, false, "add_semaphore_wait", where};
  CUDA_EXT_SEM_WAIT_NODE_PARAMS p{};
  p.extSemArray = a.handles.data();
  p.paramsArray = a.waits.data();
  p.numExtSems = static_cast<unsigned>(a.handles.size());
  CUgraphNode n{};
  return added(detail::driver().cuGraphAddExternalSemaphoresWaitNode(&n, g.get(), after.data(),
                                                                     after.size(), &p),
               n, "cuGraphAddExternalSemaphoresWaitNode", "external semaphore wait", where);
}

void set_semaphore_signal(graph_exec_ref exec, graph_node node,
                          std::span<const semaphore_value> batch, std::source_location where) {
  detail::expect_not_moved_from(!exec.empty(), "graph_exec", "set_semaphore_signal", where);
  node_arrays a{batch, true, "set_semaphore_signal", where};
  CUDA_EXT_SEM_SIGNAL_NODE_PARAMS p{};
  p.extSemArray = a.handles.data();
  p.paramsArray = a.signals.data();
  p.numExtSems = static_cast<unsigned>(a.handles.size());
  check(
      detail::driver().cuGraphExecExternalSemaphoresSignalNodeSetParams(exec.get(), node.get(), &p),
      "cuGraphExecExternalSemaphoresSignalNodeSetParams", where);
}

void set_semaphore_wait(graph_exec_ref exec, graph_node node,
                        std::span<const semaphore_value> batch, std::source_location where) {
  detail::expect_not_moved_from(!exec.empty(), "graph_exec", "set_semaphore_wait", where);
  node_arrays a{batch, false, "set_semaphore_wait", where};
  CUDA_EXT_SEM_WAIT_NODE_PARAMS p{};
  p.extSemArray = a.handles.data();
  p.paramsArray = a.waits.data();
  p.numExtSems = static_cast<unsigned>(a.handles.size());
  check(detail::driver().cuGraphExecExternalSemaphoresWaitNodeSetParams(exec.get(), node.get(), &p),
        "cuGraphExecExternalSemaphoresWaitNodeSetParams", where);
}

}  // namespace cuwrap
