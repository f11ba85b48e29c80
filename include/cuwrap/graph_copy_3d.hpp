// Memcpy nodes of graphs from cuwrap::copy_3d's descriptions: any mix of host, device, pitched
// and array memory, several slices included (cuGraphAddMemcpyNode,
// cuGraphExecMemcpyNodeSetParams). A stream capture of copy_3d(stream, ...) records the same
// nodes; the driver refuses copy_3d_batch and copy_batch while a stream captures.
#pragma once

#include <source_location>
#include <type_traits>

#include "cuwrap/copy_3d.hpp"
#include "cuwrap/graph.hpp"

namespace cuwrap {

/// Adds a node to `g` that copies region `src` into region `dst` when it runs (same extents,
/// else errc::invalid_value naming both before any driver call; cuGraphAddMemcpyNode, one driver
/// call). An array side is kept by handle: the array must outlive the graph's launches (a launch
/// after it is destroyed fails with CUDA_ERROR_ILLEGAL_ADDRESS when the stream synchronizes).
template <class E>
graph_node add_copy_3d(graph_ref g, volume<E> dst, std::type_identity_t<volume<const E>> src,
                       dependencies after = {},
                       std::source_location where = std::source_location::current()) {
  static_assert(!std::is_const_v<E>, "add_copy_3d into const memory");
  return g.add_copy_3d_params(detail::describe_3d(dst, src, "cuGraphAddMemcpyNode", where), after,
                              where);
}

/// New regions for memcpy node `node` of `exec`, without re-instantiating
/// (cuGraphExecMemcpyNodeSetParams). The driver takes rows only (height and depth 1, non-empty)
/// between the same kinds of memory (an array stays an array) of the same contexts.
template <class E>
void set_copy_3d(graph_exec_ref exec, graph_node node, volume<E> dst,
                 std::type_identity_t<volume<const E>> src,
                 std::source_location where = std::source_location::current()) {
  static_assert(!std::is_const_v<E>, "set_copy_3d into const memory");
  exec.set_copy_3d_params(
      node, detail::describe_3d(dst, src, "cuGraphExecMemcpyNodeSetParams", where), where);
}

}  // namespace cuwrap
