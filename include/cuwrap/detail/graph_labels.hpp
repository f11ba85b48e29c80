// Labels of graph nodes: the C++ call site that added each node through cuwrap, kept in a side
// table (graph -> nodes -> call site) that the driver knows nothing of. Graph errors and
// graph_ref::to_labelled_dot() name nodes by them.
#pragma once

#include <cuda.h>

#include <source_location>
#include <string>
#include <vector>

namespace cuwrap::detail {

/// Records that `node` of `graph` was added at `where`.
void label_node(CUgraph graph, CUgraphNode node, std::source_location where);
/// Records that `body` is the next body graph of conditional node `node` of `parent` (destroyed
/// with it).
void label_body(CUgraph parent, CUgraphNode node, CUgraph body);
/// The body graphs recorded for conditional node `node`, in order; empty for a node cuwrap did
/// not add.
[[nodiscard]] std::vector<CUgraph> conditional_bodies(CUgraphNode node);
/// "file:line" where `node` was added through cuwrap; empty when it was not (a captured node, a
/// clone's node).
[[nodiscard]] std::string node_label(CUgraphNode node);
/// Forgets the labels of `graph`'s nodes and of its bodies' nodes (the graph is destroyed).
void forget_labels(CUgraph graph) noexcept;
/// How many nodes have labels (for tests).
[[nodiscard]] std::size_t labelled_nodes() noexcept;

}  // namespace cuwrap::detail
