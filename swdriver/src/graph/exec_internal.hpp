// What the executable graph files share (graph_exec.cpp, exec_launch.cpp, exec_update.cpp):
// private to graph/, used under the state lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "graph/graph.hpp"
#include "graph/user_object.hpp"

namespace swcu {

/// What an executable graph shares with its in-flight launches.
struct ExecState {
  std::map<CUgraphConditionalHandle, Condition> conditions;
  std::map<CUgraphConditionalHandle, unsigned> values;  ///< the conditions' current values
  bool destroyed = false;
};

/// An executable graph (SWCU_GRAPH_EXEC).
struct Exec final : Object {
  Exec() noexcept : Object(SWCU_GRAPH_EXEC) {}
  /// Destroyed: its count goes, in-flight launches keep what they need.
  void release() noexcept override;

  Context* ctx = nullptr;  ///< reclaims it
  unsigned long long flags = 0;
  std::uint64_t source = 0;  ///< the id of the graph it was instantiated from
  std::shared_ptr<Graph> plan;
  std::shared_ptr<HeldRefs> refs;
  std::shared_ptr<ExecState> exec;
  std::shared_ptr<Completion> last;  ///< the last launch (launches are serialized)
};

/// A live executable graph; nullptr otherwise.
[[nodiscard]] Exec* find_exec(State& s, CUgraphExec handle) noexcept;
/// The node of `e`'s executable copy made from the node with id `origin`, the copy made
/// writable first (exec_update.cpp); nullptr when it has none.
[[nodiscard]] Node* writable_exec_node(State& s, Exec& e, std::uint64_t origin);
/// Memory the executable copy `g` left allocated goes with it (or with its last launch), and
/// its allocation nodes' memory is unmapped (graph_memory.hpp).
void free_outstanding(Graph& g) noexcept;

}  // namespace swcu
