// What the files that build graphs share (graph.cpp, node_params.cpp, graph_api.cpp,
// node_api.cpp, graph_memory.cpp, conditional.cpp, and the executable graph files): private to
// graph/, used under the state lock.
#pragma once

#include <cstddef>
#include <memory>

#include "graph/graph.hpp"

namespace swcu {

// ---- graph.cpp ----

/// Registers `n` (and the nodes of the graphs embedded in it) as handles.
void register_node(Node& n);
/// A node that stops being a handle (destroyed, or its graph went): it leaves the handle maps,
/// what it owns goes, the object waits in the graveyard.
void retire_node(std::unique_ptr<Node> n) noexcept;
/// The context a node of `g` runs in makes a program's graph without one that context's.
void adopt(Graph& g, Context* ctx) noexcept;
/// The current context, or nullptr (no error).
[[nodiscard]] Context* current_or_null(State& s) noexcept;
/// A context argument: NULL is the current context (nullptr when there is none);
/// CUDA_ERROR_INVALID_CONTEXT for a handle that is not a live context.
[[nodiscard]] CUresult context_arg(State& s, CUcontext handle, Context*& out);
/// True when `g` (or a graph embedded in it) has memory allocation or free nodes.
[[nodiscard]] bool memory_graph(const Graph& g) noexcept;

// ---- node_params.cpp ----

/// True when every node of `g` (and of the graphs embedded in it) may be in a conditional body.
[[nodiscard]] bool only_body_types(const Graph& g) noexcept;
/// A node of `type` may join `g` (CUDA_ERROR_INVALID_VALUE: not in a conditional body, memory
/// nodes not in embedded graphs).
[[nodiscard]] CUresult check_placement(const Graph& g, int type) noexcept;
/// True when every CUgraphEdgeData of `data` (NULL: none) is the default (all zero).
[[nodiscard]] bool default_edges(const CUgraphEdgeData* data, std::size_t count) noexcept;

/// Sets the parameters of kernel node `n` (checked); its graph adopts the kernel's context.
[[nodiscard]] CUresult set_kernel(State& s, Node& n, const CUDA_KERNEL_NODE_PARAMS_v2& p);
/// Sets the parameters of memcpy node `n` (checked); NULL `ctx` is the current context.
[[nodiscard]] CUresult set_copy(State& s, Node& n, const CUDA_MEMCPY3D& p, CUcontext ctx);
/// Sets the parameters of memset node `n` (checked); NULL `ctx` is the current context.
[[nodiscard]] CUresult set_fill(State& s, Node& n, const CUDA_MEMSET_NODE_PARAMS& p, CUcontext ctx);
/// Sets the parameters of host node `n` (a function is required).
[[nodiscard]] CUresult set_host(Node& n, const CUDA_HOST_NODE_PARAMS& p);
/// Sets the event of event record or wait node `n`; `invalid` when it is not a live event.
[[nodiscard]] CUresult set_event(State& s, Node& n, CUevent event, CUresult invalid);
/// The union of cuGraphAddNode (`adding`) and cuGraphNodeSetParams: the parameters of `p` for
/// node `n` of `g`, checked and set; CUDA_ERROR_NOT_SUPPORTED for kinds that cannot be set.
[[nodiscard]] CUresult from_union(State& s, Graph& g, Node& n, CUgraphNodeParams& p, bool adding);
/// The CUDA_KERNEL_NODE_PARAMS a kernel node reports (its own arrays, rebuilt).
[[nodiscard]] CUDA_KERNEL_NODE_PARAMS_v2 kernel_params(KernelNode& k);

// ---- conditional.cpp ----

/// A conditional node's parameters (cuGraphAddNode): checked, its bodies made, p.phGraph_out
/// set; the condition must be one made for `g` or a graph it is embedded in.
[[nodiscard]] CUresult make_conditional(State& s, Graph& g, Node& n,
                                        CUDA_CONDITIONAL_NODE_PARAMS& p);
/// The conditions made for `g` and the graphs embedded in it, by handle.
void collect_conditions(const Graph& g, std::map<CUgraphConditionalHandle, Condition>& out);

}  // namespace swcu
