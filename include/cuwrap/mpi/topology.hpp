// Where every rank runs: which ranks share a node, which device each uses, and which can reach
// each other's device memory (same node, and the same device or cuDeviceCanAccessPeer).
#pragma once

#include <source_location>
#include <vector>

#include "cuwrap/device.hpp"
#include "cuwrap/mpi/communicator.hpp"

namespace cuwrap::mpi {

/// One rank's place.
struct rank_place {
  int node = 0;       ///< node index, 0 .. node_count() - 1, in order of each node's lowest rank
  int node_rank = 0;  ///< rank among the node's ranks
  int device = 0;     ///< the ordinal of the device it uses (on its node)
};

/// Every rank's place, and the device peer matrix of this node.
class topology {
 public:
  /// Gathers every rank's place (collective over `comm`: one MPI_Allgather) and asks the
  /// driver about every ordered pair of this node's devices (cuDeviceCanAccessPeer).
  topology(const communicator& comm, const device& mine,
           std::source_location where = std::source_location::current());

  /// The place of `rank`.
  [[nodiscard]] const rank_place& place(int rank) const { return places_.at(rank); }
  /// The number of ranks.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(places_.size()); }
  /// The number of nodes.
  [[nodiscard]] int node_count() const noexcept { return nodes_; }
  /// True when `a` and `b` run on one node.
  [[nodiscard]] bool same_node(int a, int b) const { return place(a).node == place(b).node; }
  /// The ranks on `node`, in rank order.
  [[nodiscard]] std::vector<int> ranks_on_node(int node) const;
  /// True when rank `a`, on this rank's node, can map and access rank `b`'s device memory:
  /// the same node, and the same device or peer access from a's device to b's. Ranks of other
  /// nodes: false.
  [[nodiscard]] bool can_access(int a, int b) const;

 private:
  std::vector<rank_place> places_;
  std::vector<std::vector<bool>> peer_;  // this node's devices: peer_[from][to]
  int nodes_ = 0;
  int my_node_ = 0;
};

}  // namespace cuwrap::mpi
