// External semaphore nodes of graphs: signal or wait for imported semaphores
// (<cuwrap/external_memory.hpp>) when a graph runs (cuGraphAddExternalSemaphoresSignalNode,
// cuGraphAddExternalSemaphoresWaitNode, cuGraphExecExternalSemaphores*NodeSetParams).
#pragma once

#include <source_location>
#include <span>

#include "cuwrap/external_memory.hpp"
#include "cuwrap/graph.hpp"

namespace cuwrap {

/// Adds a node to `g` that signals every semaphore of `batch` (a timeline semaphore takes its
/// value, a binary one is set) when it runs. Each semaphore is checked (not moved from, binary
/// with value 0) before the driver call; throws cuwrap::error naming the node kind.
graph_node add_semaphore_signal(graph_ref g, std::span<const semaphore_value> batch,
                                dependencies after = {},
                                std::source_location where = std::source_location::current());
/// Adds a node to `g` that waits for every semaphore of `batch` (a timeline semaphore until its
/// value is at least the one given, a binary one until it is set, consuming it).
graph_node add_semaphore_wait(graph_ref g, std::span<const semaphore_value> batch,
                              dependencies after = {},
                              std::source_location where = std::source_location::current());

/// The semaphores and values of signal node `node` of `exec`, replaced without
/// re-instantiating (cuGraphExecExternalSemaphoresSignalNodeSetParams).
void set_semaphore_signal(graph_exec_ref exec, graph_node node,
                          std::span<const semaphore_value> batch,
                          std::source_location where = std::source_location::current());
/// The same for wait node `node` (cuGraphExecExternalSemaphoresWaitNodeSetParams).
void set_semaphore_wait(graph_exec_ref exec, graph_node node,
                        std::span<const semaphore_value> batch,
                        std::source_location where = std::source_location::current());

}  // namespace cuwrap
