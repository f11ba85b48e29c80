// External semaphore nodes as an executable graph's launch runs them
// (graph/ext_semaphore_nodes.cpp; exec_launch.cpp calls these).
#pragma once

#include "graph/graph.hpp"

namespace swcu {

/// Checks the external semaphore part of `p` (extSemSignal or extSemWait, by `n`'s type) as
/// cuGraphAddExternalSemaphoresSignalNode/WaitNode do and sets node `n` from it: the generic
/// node functions' (cuGraphAddNode, cuGraphNodeSetParams, cuGraphExecNodeSetParams) way in.
[[nodiscard]] CUresult set_ext_semaphore_node(State& s, Node& n, const CUgraphNodeParams& p);

/// Whether every semaphore of wait node `n` can be taken now (its stream operation's
/// Op::ready, sched.hpp).
[[nodiscard]] bool semaphores_ready(const Node& n);

/// Runs an external semaphore signal node (stores the payloads) or wait node (a binary wait
/// takes the signal; its stream operation waited for semaphores_ready()).
void run_ext_semaphores(const Node& n);

}  // namespace swcu
