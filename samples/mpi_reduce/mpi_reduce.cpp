// mpi_reduce: how cuwrap programs scale past one machine. Each MPI rank picks device
// rank % count, fills a device buffer with a kernel, sums it on the device, and the ranks
// combine their sums with MPI_Allreduce. When the MPI library is CUDA-aware (asked at run time
// with MPIX_Query_cuda_support where Open MPI provides it) device pointers go to MPI directly;
// otherwise the sum is staged through pinned host memory. Every rank checks the global sum.
//
//   mpirun -np 2 mpi_reduce [--kernels=DIR]
#include <mpi.h>

#include <cuwrap/cuwrap.hpp>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

int run(int rank, int ranks, const std::string& dir) {
  const int count = cuwrap::device::count();
  const auto dev = cuwrap::device::get(rank % count);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, dir + "/p2p.fatbin");
  const auto fill_rank = mod.kernel<void(double*, int, int)>("fill_rank");
  const auto sum_all = mod.kernel<void(const double*, double*, int)>("sum_all");

  constexpr int n = 1 << 16;
  cuwrap::device_buffer<double> data{ctx, n};
  cuwrap::device_buffer<double> local{ctx, 1};
  cuwrap::device_buffer<double> global{ctx, 1};
  s.launch(fill_rank, cuwrap::launch_config::linear(n, 256), data.data(), rank, n);
  s.launch(sum_all, cuwrap::launch_config{{1}, {256}}, data.data(), local.data(), n);
  s.synchronize();

  const bool aware = mpi_is_cuda_aware();
  double total = 0;
  if (aware) {
    MPI_Allreduce(local.data(), global.data(), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    cuwrap::pinned_buffer<double> host{ctx, 1};
    cuwrap::copy(s, host, global);
    s.synchronize();
    total = host[0];
  } else {
    cuwrap::pinned_buffer<double> host{ctx, 1};
    cuwrap::copy(s, host, local);
    s.synchronize();
    MPI_Allreduce(host.data(), &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  // sum over ranks r of sum over i of (r + 0.5 i)
  const double per_rank_i = 0.5 * (static_cast<double>(n) * (n - 1) / 2);
  const double expected = n * (static_cast<double>(ranks) * (ranks - 1) / 2) + ranks * per_rank_i;
  std::printf("rank %d/%d on device %d (%s), %s MPI: global sum %.1f (expected %.1f)\n", rank,
              ranks, dev.ordinal(), dev.name().c_str(), aware ? "CUDA-aware" : "host-staged", total,
              expected);
  return std::fabs(total - expected) <= 1e-6 * expected ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::string dir = CUWRAP_SAMPLE_KERNELS_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg{argv[i]};
    if (arg.starts_with("--kernels=")) dir = arg.substr(10);
  }
  int status = 1;
  try {
    status = run(rank, ranks, dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_reduce rank %d: %s\n", rank, e.what());
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::puts(worst == 0 ? "PASSED" : "FAILED");
  MPI_Finalize();
  return worst;
}
