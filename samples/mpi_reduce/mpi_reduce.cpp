// mpi_reduce: how cuwrap programs scale past one machine, with cuwrap::mpi. Each MPI rank takes
// the device of its node-local rank (mpi::select_device), fills a device buffer with a kernel,
// sums it on the device, and the ranks combine their sums with mpi::allreduce, which hands the
// device pointer to a CUDA-aware MPI or stages it through pinned host memory (decided once by
// the communicator: MPIX_Query_cuda_support, or CUWRAP_MPI_CUDA_AWARE=1|0). Every rank checks
// the global sum.
//
//   mpirun -np 2 mpi_reduce [--kernels=DIR]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mpi.hpp>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

int run(const cuwrap::mpi::communicator& comm, const std::string& dir) {
  const auto dev = cuwrap::mpi::select_device(comm);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, dir + "/p2p.fatbin");
  const auto fill_rank = mod.kernel<void(double*, int, int)>("fill_rank");
  const auto sum_all = mod.kernel<void(const double*, double*, int)>("sum_all");

  constexpr int n = 1 << 16;
  cuwrap::device_buffer<double> data{ctx, n};
  cuwrap::device_buffer<double> sum{ctx, 1};
  s.launch(fill_rank, cuwrap::launch_config::linear(n, 256), data.data(), comm.rank(), n);
  s.launch(sum_all, cuwrap::launch_config{{1}, {256}}, data.data(), sum.data(), n);
  // allreduce synchronizes s before MPI reads the sum, and returns with the result in `sum`.
  cuwrap::mpi::allreduce<double>(comm, sum.span(), s);
  std::vector<double> total(1);
  cuwrap::copy(total, sum);

  // sum over ranks r of sum over i of (r + 0.5 i)
  const int ranks = comm.size();
  const double per_rank_i = 0.5 * (static_cast<double>(n) * (n - 1) / 2);
  const double expected = n * (static_cast<double>(ranks) * (ranks - 1) / 2) + ranks * per_rank_i;
  std::printf("rank %d/%d on device %d (%s), %s MPI: global sum %.1f (expected %.1f)\n",
              comm.rank(), ranks, dev.ordinal(), dev.name().c_str(),
              comm.device_pointers() ? "CUDA-aware" : "host-staged", total[0], expected);
  return std::fabs(total[0] - expected) <= 1e-6 * expected ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const samples::options options{argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}}};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 1;
  try {
    const cuwrap::mpi::communicator comm;
    status = run(comm, options.text("kernels"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_reduce rank %d: %s\n", rank, e.what());
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::puts(worst == 0 ? "PASSED" : "FAILED");
  MPI_Finalize();
  return worst;
}
