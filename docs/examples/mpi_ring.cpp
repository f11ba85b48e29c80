// docs/mpi.md: one rank per device; an allreduce and a ring of device buffers over MPI, then the
// same ring over IPC on the node. Run with `mpirun -np 2 doc_example_mpi_ring`.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mpi.hpp>
#include <vector>

namespace mpi = cuwrap::mpi;

int run() {
  const mpi::communicator comm;                         // MPI_ERRORS_RETURN, node split, data path
  const cuwrap::device dev = mpi::select_device(comm);  // node-local rank -> device
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  cuwrap::stream s{ctx};

  // Every rank contributes its rank; everyone gets the sum.
  cuwrap::device_buffer<int> value{ctx, 1};
  cuwrap::copy(value, std::vector<int>{comm.rank()});
  mpi::allreduce<int>(comm, value.span(), s);
  std::vector<int> sum(1);
  cuwrap::copy(sum, value);

  // A ring over MPI: send to the right, receive from the left.
  const int right = (comm.rank() + 1) % comm.size();
  const int left = (comm.rank() + comm.size() - 1) % comm.size();
  cuwrap::device_buffer<float> mine{ctx, 256}, theirs{ctx, 256};
  cuwrap::fill(mine, static_cast<float>(comm.rank()));
  auto sent = mpi::isend<float>(comm, mine.span(), right, 0, s);
  mpi::recv<float>(comm, theirs.span(), left, 0, s);
  sent.wait();
  std::vector<float> got(256);
  cuwrap::copy(got, theirs);

  // The same ring over IPC on this node: map every node-local rank's buffer and read it.
  const mpi::topology topo{comm, dev};
  bool ipc_ok = true;
  if (topo.same_node(comm.rank(), left) && topo.can_access(comm.rank(), left)) {
    const auto peers = mpi::exchange_memory(comm, ctx, mine.span());
    cuwrap::copy(s, theirs, peers[topo.place(left).node_rank]);  // device to device
    s.synchronize();
    std::vector<float> over_ipc(256);
    cuwrap::copy(over_ipc, theirs);
    ipc_ok = over_ipc == got;
    comm.barrier();  // nobody unmaps (or frees) before every rank has read
  }

  std::printf("rank %d on device %d: sum %d, from rank %d: %.0f (%s), IPC %s\n", comm.rank(),
              dev.ordinal(), sum[0], left, got[0], comm.device_pointers() ? "CUDA-aware" : "staged",
              ipc_ok ? "agrees" : "differs");
  const bool ok =
      sum[0] == comm.size() * (comm.size() - 1) / 2 && got[0] == static_cast<float>(left) && ipc_ok;
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = run();
  } catch (const std::exception& e) {  // cuwrap::error, cuwrap::mpi::error
    std::fprintf(stderr, "%s\n", e.what());
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
