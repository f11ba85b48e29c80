// Which device each rank uses: by node-local rank (MPI_COMM_TYPE_SHARED), round-robin over world
// ranks, or an explicit list; with a clear error when two ranks of a node would share a device
// and sharing was not allowed.
#pragma once

#include <optional>
#include <source_location>
#include <utility>
#include <vector>

#include "cuwrap/device.hpp"
#include "cuwrap/mpi/communicator.hpp"

namespace cuwrap::mpi {

/// How ranks map to devices.
enum class device_strategy {
  node_rank,      ///< device = node-local rank (one rank per device: the usual launch)
  round_robin,    ///< device = rank % device count
  explicit_list,  ///< device = ordinals[node-local rank]
};

/// A strategy and its options.
struct device_policy {
  device_strategy strategy = device_strategy::node_rank;
  /// For explicit_list: the ordinal of each node-local rank.
  std::vector<int> ordinals;
  /// Let several ranks of a node use one device (node_rank then wraps around).
  bool allow_sharing = false;
};

/// The ordinal `policy` gives a rank (pure: no MPI, no driver). Throws configuration_error when
/// the node has more ranks than devices (node_rank without sharing), when the explicit list has
/// no entry for this rank, or when an ordinal is out of range.
[[nodiscard]] int choose_device(const device_policy& policy, int rank, int node_rank, int node_size,
                                int device_count,
                                std::source_location where = std::source_location::current());

/// The first two node-local ranks given the same ordinal, if any (pure).
[[nodiscard]] std::optional<std::pair<int, int>> first_shared(const std::vector<int>& ordinals);

/// Picks this rank's device (collective over comm.node()): choose_device() with the driver's
/// device count, then one MPI_Allgather on the node of every rank's choice, so that every rank
/// of the node throws the same configuration_error, naming both ranks, when two would share a
/// device and `policy` does not allow it.
[[nodiscard]] device select_device(const communicator& comm, const device_policy& policy = {},
                                   std::source_location where = std::source_location::current());

}  // namespace cuwrap::mpi
