// External semaphore nodes as an executable graph's launch runs them
// (graph/ext_semaphore_nodes.cpp; exec_launch.cpp calls these).
#pragma once

#include <functional>

#include "graph/graph.hpp"

namespace swcu {

/// The ready condition of a launch of `plan` (Op::ready, sched.hpp): true once every enabled
/// external semaphore wait node's condition holds; nullptr when the graph has none.
[[nodiscard]] std::function<bool(State&)> semaphore_waits(const Graph& plan);

/// Runs an external semaphore signal node (stores the payloads) or wait node (a binary wait
/// takes the signal; the launch waited for the condition before it started).
void run_ext_semaphores(const Node& n);

}  // namespace swcu
