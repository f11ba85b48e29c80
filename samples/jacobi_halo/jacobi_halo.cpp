// jacobi_halo: a 2D Jacobi solve of Laplace's equation split across MPI ranks, one rank per
// device, with cuwrap::mpi. The grid's interior rows are divided among the ranks (any number of
// them); each rank keeps its rows plus one halo row above and below, and after every sweep sends
// its first and last rows into its neighbours' halos:
//   - device to device over IPC when the neighbour runs on the same node and its device is
//     reachable (mpi::topology): each rank maps its neighbours' buffers (mpi::exchange_memory) and
//     copies straight into them, then all ranks meet at a barrier;
//   - with MPI messages otherwise (between nodes, or --exchange=mpi): mpi::isend / mpi::irecv of
//     device spans, CUDA-aware or staged as the communicator decided.
// Rank 0 gathers the result and compares it with a serial solve on the host; the program exits
// non-zero when they differ.
//
//   mpirun -np 4 jacobi_halo [--nx=64] [--ny=64] [--iterations=100] [--exchange=auto|ipc|mpi]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mpi.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"

namespace mpi = cuwrap::mpi;

namespace {

constexpr float kTop = 1.0f;  // the fixed top boundary row; every other boundary is 0

// The starting value of interior point (x, y) of the global grid: a fixed pattern, so that every
// halo row matters from the first sweep on.
float initial_value(int x, int y) { return static_cast<float>((x * 7 + y * 13) % 17) / 17.0f; }

// The first interior row (1-based in the global grid) and the number of rows of `rank`.
std::pair<int, int> rows_of(int rank, int ranks, int ny) {
  const int base = ny / ranks;
  const int extra = ny % ranks;
  const int rows = base + (rank < extra ? 1 : 0);
  const int first = 1 + rank * base + std::min(rank, extra);
  return {first, rows};
}

// The serial solve: (ny + 2) x nx, the same sweeps in the same float arithmetic.
std::vector<float> solve_serial(int nx, int ny, int iterations) {
  std::vector<float> in(static_cast<std::size_t>((ny + 2) * nx), 0.0f);
  std::fill_n(in.begin(), nx, kTop);
  for (int y = 1; y <= ny; ++y) {
    for (int x = 1; x < nx - 1; ++x) in[static_cast<std::size_t>(y * nx + x)] = initial_value(x, y);
  }
  std::vector<float> out = in;
  for (int it = 0; it < iterations; ++it) {
    for (int y = 1; y <= ny; ++y) {
      for (int x = 1; x < nx - 1; ++x) {
        const int i = y * nx + x;
        out[i] = 0.25f * (in[i - nx] + in[i + nx] + in[i - 1] + in[i + 1]);
      }
    }
    std::swap(in, out);
  }
  return in;
}

int run(const mpi::communicator& comm, const samples::options& options) {
  const int nx = options.positive("nx");
  const int ny = options.positive("ny");
  const int iterations = options.positive("iterations");
  const std::string exchange = options.text("exchange");
  if (exchange != "auto" && exchange != "ipc" && exchange != "mpi") {
    throw std::invalid_argument{"--exchange must be auto, ipc or mpi, not '" + exchange + "'"};
  }
  if (ny < comm.size()) throw std::invalid_argument{"--ny must be at least the number of ranks"};
  const int rank = comm.rank();
  const auto [first, rows] = rows_of(rank, comm.size(), ny);

  const auto dev = mpi::select_device(comm);  // one rank per device, by node-local rank
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/jacobi.fatbin");
  const auto step = mod.kernel<void(const float*, float*, int, int)>("jacobi_step");
  const mpi::topology topo{comm, dev};

  // Both buffers start as the initial grid: the top boundary in rank 0's upper halo.
  const auto width = static_cast<std::size_t>(nx);
  std::vector<float> initial((static_cast<std::size_t>(rows) + 2) * width, 0.0f);
  if (rank == 0) std::fill_n(initial.begin(), nx, kTop);
  // Rows 1..rows, and the halos: the neighbours' first values (global rows 1..ny only).
  for (int y = 0; y <= rows + 1; ++y) {
    const int global = first + y - 1;
    if (global < 1 || global > ny) continue;
    for (int x = 1; x < nx - 1; ++x) {
      initial[static_cast<std::size_t>(y * nx + x)] = initial_value(x, global);
    }
  }
  cuwrap::device_buffer<float> a{ctx, initial.size()};
  cuwrap::device_buffer<float> b{ctx, initial.size()};
  cuwrap::copy(a, initial);
  cuwrap::copy(b, initial);

  // The neighbours, and how each is reached.
  const int up = rank - 1;  // holds the rows above mine
  const int down = rank + 1 < comm.size() ? rank + 1 : -1;
  auto by_ipc = [&](int peer) {
    if (peer < 0 || exchange == "mpi") return false;
    const bool reachable = topo.can_access(rank, peer);
    if (exchange == "ipc" && !reachable) {
      throw std::runtime_error{"--exchange=ipc, but rank " + std::to_string(peer) +
                               " is not reachable over IPC"};
    }
    return reachable;
  };
  const bool up_ipc = by_ipc(up);
  const bool down_ipc = by_ipc(down);
  // Every rank of a node maps both buffers of every other (collective over the node).
  const auto peers_a = mpi::exchange_memory(comm, ctx, a.span());
  const auto peers_b = mpi::exchange_memory(comm, ctx, b.span());

  const auto config = cuwrap::launch_config{
      {static_cast<unsigned>((nx + 15) / 16), static_cast<unsigned>((rows + 15) / 16)}, {16, 16}};
  bool a_is_input = true;
  for (int it = 0; it < iterations; ++it) {
    auto& in = a_is_input ? a : b;
    auto& out = a_is_input ? b : a;
    const auto& peer_out = a_is_input ? peers_b : peers_a;
    s.launch(step, config, in.data(), out.data(), nx, rows);
    const auto o = out.span();
    const auto my_first = o.subspan(width, width);
    const auto my_last = o.subspan(static_cast<std::size_t>(rows) * width, width);
    // MPI neighbours: receive into my halos, send my edge rows (each helper synchronizes s first).
    std::vector<mpi::request> pending;
    if (up >= 0 && !up_ipc) {
      pending.push_back(mpi::irecv<float>(comm, o.first(width), up, 0, s));
      pending.push_back(mpi::isend<float>(comm, my_first, up, 1, s));
    }
    if (down >= 0 && !down_ipc) {
      pending.push_back(mpi::irecv<float>(comm, o.last(width), down, 1, s));
      pending.push_back(mpi::isend<float>(comm, my_last, down, 0, s));
    }
    // IPC neighbours: copy my edge rows straight into their output halos.
    if (up_ipc) {
      const auto theirs = peer_out[topo.place(up).node_rank];
      cuwrap::copy(s, theirs.last(width), my_first);
    }
    if (down_ipc) {
      const auto theirs = peer_out[topo.place(down).node_rank];
      cuwrap::copy(s, theirs.first(width), my_last);
    }
    s.synchronize();
    for (auto& r : pending) r.wait();
    comm.barrier();  // every IPC copy into my halos is done before the next sweep reads them
    a_is_input = !a_is_input;
  }

  // Gather the interior rows on rank 0 and compare with the serial solve.
  const auto& result = a_is_input ? a : b;
  std::vector<float> mine(static_cast<std::size_t>(rows) * width);
  cuwrap::copy(mine, result.span().subspan(width, mine.size()));
  std::vector<int> counts(static_cast<std::size_t>(comm.size()));
  std::vector<int> offsets(counts.size());
  for (int r = 0; r < comm.size(); ++r) {
    const auto [f, n] = rows_of(r, comm.size(), ny);
    counts[static_cast<std::size_t>(r)] = n * nx;
    offsets[static_cast<std::size_t>(r)] = (f - 1) * nx;
  }
  std::vector<float> grid(rank == 0 ? static_cast<std::size_t>(ny) * width : 0);
  mpi::check(MPI_Gatherv(mine.data(), rows * nx, MPI_FLOAT, grid.data(), counts.data(),
                         offsets.data(), MPI_FLOAT, 0, comm.get()),
             "MPI_Gatherv", comm.get());
  int status = 0;
  if (rank == 0) {
    const auto expected = solve_serial(nx, ny, iterations);
    float worst = 0.0f;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      worst = std::max(worst, std::fabs(grid[i] - expected[width + i]));
    }
    const float center = grid[static_cast<std::size_t>(ny / 2) * width + width / 2];
    std::printf(
        "%d ranks, %dx%d grid, %d sweeps: max difference from the serial solve %g "
        "(centre %.6f)\n",
        comm.size(), nx, ny, iterations, static_cast<double>(worst), static_cast<double>(center));
    status = worst <= 1e-6f ? 0 : 1;
  }
  std::printf("  rank %d: rows %d..%d on device %d, node %d; up %s, down %s; MPI %s\n", rank, first,
              first + rows - 1, dev.ordinal(), topo.place(rank).node,
              up < 0 ? "boundary" : (up_ipc ? "IPC" : "MPI"),
              down < 0 ? "boundary" : (down_ipc ? "IPC" : "MPI"),
              comm.device_pointers() ? "CUDA-aware" : "staged");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const samples::options options{argc,
                                 argv,
                                 {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR},
                                  {"nx", "64"},
                                  {"ny", "64"},
                                  {"iterations", "100"},
                                  {"exchange", "auto"}}};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 1;
  try {
    const mpi::communicator comm;
    status = run(comm, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jacobi_halo rank %d: %s\n", rank, e.what());
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::puts(worst == 0 ? "PASSED" : "FAILED");
  MPI_Finalize();
  return worst;
}
