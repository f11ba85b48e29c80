#include "cuwrap/mpi/device_selection.hpp"

#include <string>

namespace cuwrap::mpi {

int choose_device(const device_policy& policy, int rank, int node_rank, int node_size,
                  int device_count, std::source_location where) {
  const char* operation = "cuwrap::mpi::select_device";
  if (device_count <= 0) {
    detail::raise<configuration_error>(operation, "this node has no device", MPI_COMM_NULL, where);
  }
  switch (policy.strategy) {
    case device_strategy::node_rank:
      if (node_size > device_count && !policy.allow_sharing) {
        detail::raise<configuration_error>(
            operation,
            "this node has " + std::to_string(node_size) + " ranks but " +
                std::to_string(device_count) +
                " devices: start at most one rank per device, or allow sharing",
            MPI_COMM_NULL, where);
      }
      return node_rank % device_count;
    case device_strategy::round_robin: return rank % device_count;
    case device_strategy::explicit_list: {
      if (node_rank >= static_cast<int>(policy.ordinals.size())) {
        detail::raise<configuration_error>(
            operation,
            "the explicit list has " + std::to_string(policy.ordinals.size()) +
                " ordinals, none for node-local rank " + std::to_string(node_rank),
            MPI_COMM_NULL, where);
      }
      const int ordinal = policy.ordinals[static_cast<std::size_t>(node_rank)];
      if (ordinal < 0 || ordinal >= device_count) {
        detail::raise<configuration_error>(operation,
                                           "explicit ordinal " + std::to_string(ordinal) +
                                               " for node-local rank " + std::to_string(node_rank) +
                                               ", but the node has " +
                                               std::to_string(device_count) + " devices",
                                           MPI_COMM_NULL, where);
      }
      return ordinal;
    }
  }
  return 0;
}

std::optional<std::pair<int, int>> first_shared(const std::vector<int>& ordinals) {
  for (std::size_t j = 0; j < ordinals.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (ordinals[i] == ordinals[j]) return std::pair{static_cast<int>(i), static_cast<int>(j)};
    }
  }
  return std::nullopt;
}

device select_device(const communicator& comm, const device_policy& policy,
                     std::source_location where) {
  const int count = device::count(where);
  // Every rank of the node takes part in the exchange even when its own choice fails, so that
  // the others do not wait for it: -1 marks a rank that failed.
  int mine = -1;
  std::string failure;
  try {
    mine = choose_device(policy, comm.rank(), comm.node_rank(), comm.node_size(), count, where);
  } catch (const configuration_error& e) {
    failure = e.what();
  }
  std::vector<int> chosen(static_cast<std::size_t>(comm.node_size()));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&mine, 1, MPI_INT, chosen.data(), 1, MPI_INT, comm.node(), &request),
        "MPI_Iallgather", comm.node(), "device ordinals", where);
  comm.wait(request, nullptr, "MPI_Iallgather", "device ordinals", where);
  for (std::size_t r = 0; r < chosen.size(); ++r) {
    if (chosen[r] < 0) {
      detail::raise<configuration_error>(
          "cuwrap::mpi::select_device",
          failure.empty() ? "node-local rank " + std::to_string(r) + " could not choose a device"
                          : failure,
          comm.get(), where);
    }
  }
  if (!policy.allow_sharing) {
    if (const auto shared = first_shared(chosen)) {
      detail::raise<configuration_error>(
          "cuwrap::mpi::select_device",
          "node-local ranks " + std::to_string(shared->first) + " and " +
              std::to_string(shared->second) + " would share device " +
              std::to_string(chosen[static_cast<std::size_t>(shared->first)]) +
              " (allow sharing, or start fewer ranks)",
          comm.get(), where);
    }
  }
  return device::get(mine, where);
}

}  // namespace cuwrap::mpi
