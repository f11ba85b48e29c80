// Uses the installed cuwrap::mpi (present when cuwrap was built with MPI): its headers, its
// library and MPI come from the package config. No MPI run: the device choice is pure.
#include <cstdio>
#include <cuwrap/mpi.hpp>

int main() {
  const cuwrap::mpi::device_policy policy{cuwrap::mpi::device_strategy::round_robin, {}, true};
  const int ordinal = cuwrap::mpi::choose_device(policy, 5, 1, 2, 4);
  std::printf("consumer_mpi: rank 5 of a round robin over 4 devices takes device %d\n", ordinal);
  return ordinal == 1 ? 0 : 1;
}
