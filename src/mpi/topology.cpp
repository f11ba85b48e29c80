#include "cuwrap/mpi/topology.hpp"

#include <array>
#include <map>

namespace cuwrap::mpi {

topology::topology(const communicator& comm, const device& mine, std::source_location where) {
  // The node's leader (its node-local rank 0) names the node by its rank in comm.
  int leader = comm.rank();
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&leader, 1, MPI_INT, 0, comm.node(), &request), "MPI_Ibcast", comm.node(),
        "node leader", where);
  comm.wait(request, nullptr, "MPI_Ibcast", "node leader", where);
  const std::array<int, 3> own{leader, comm.node_rank(), mine.ordinal()};
  std::vector<int> all(3 * static_cast<std::size_t>(comm.size()));
  check(MPI_Iallgather(own.data(), 3, MPI_INT, all.data(), 3, MPI_INT, comm.get(), &request),
        "MPI_Iallgather", comm.get(), "rank places", where);
  comm.wait(request, nullptr, "MPI_Iallgather", "rank places", where);
  std::map<int, int> node_of_leader;  // leaders are each node's lowest rank: in rank order
  for (std::size_t r = 0; r < all.size() / 3; ++r) {
    const auto [it, added] = node_of_leader.try_emplace(all[3 * r], nodes_);
    if (added) ++nodes_;
    places_.push_back({it->second, all[3 * r + 1], all[3 * r + 2]});
  }
  my_node_ = places_[static_cast<std::size_t>(comm.rank())].node;
  const auto devices = device::all(where);
  peer_.assign(devices.size(), std::vector<bool>(devices.size(), false));
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (std::size_t j = 0; j < devices.size(); ++j) {
      peer_[i][j] = i == j || devices[i].can_access_peer(devices[j], where);
    }
  }
}

std::vector<int> topology::ranks_on_node(int node) const {
  std::vector<int> ranks;
  for (int r = 0; r < size(); ++r) {
    if (place(r).node == node) ranks.push_back(r);
  }
  return ranks;
}

bool topology::can_access(int a, int b) const {
  const rank_place& from = place(a);
  const rank_place& to = place(b);
  if (from.node != my_node_ || to.node != my_node_) return false;
  const auto count = peer_.size();
  const auto i = static_cast<std::size_t>(from.device);
  const auto j = static_cast<std::size_t>(to.device);
  return i < count && j < count && peer_[i][j];
}

}  // namespace cuwrap::mpi
