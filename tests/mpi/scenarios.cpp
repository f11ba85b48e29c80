// The MPI tests' program: `mpirun -np N cuwrap_mpi_scenarios <scenario>` runs one scenario on
// every rank, on the software driver with several simulated devices per process
// (SWCUDA_DEVICES). Each rank checks its own results against values computed on the host; the
// exit status is 0 only when every rank passed (an MPI_Allreduce of the statuses), and each
// failure prints the rank and what was wrong.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mpi.hpp>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "swcuda.hpp"

namespace mpi = cuwrap::mpi;

namespace {

void expect(bool condition, const std::string& what) {
  if (!condition) throw std::runtime_error{"expectation failed: " + what};
}

/// Runs `body`, which must throw E with `text` in its message.
template <class E>
void expect_throws(const std::function<void()>& body, const std::string& text) {
  try {
    body();
  } catch (const E& e) {
    const std::string message = e.what();
    expect(message.find(text) != std::string::npos,
           "the error '" + message + "' should contain '" + text + "'");
    std::printf("  expected error: %s\n", e.what());
    return;
  }
  throw std::runtime_error{"no error containing '" + text + "' was thrown"};
}

/// A device, its primary context and a stream, picked by node-local rank.
struct rank_device {
  cuwrap::device dev;
  cuwrap::primary_context ctx;
  cuwrap::scoped_current_context current;
  cuwrap::stream s;
  explicit rank_device(const mpi::communicator& comm)
      : dev{mpi::select_device(comm)}, ctx{dev}, current{ctx}, s{ctx} {}
};

std::vector<float> to_host(const cuwrap::device_span<const float> d) {
  std::vector<float> h(d.size());
  cuwrap::copy(h, d);
  return h;
}

cuwrap::device_buffer<float> from_host(const cuwrap::primary_context& ctx,
                                       const std::vector<float>& h) {
  cuwrap::device_buffer<float> d{ctx, h.size()};
  cuwrap::copy(d, h);
  return d;
}

// Each rank's device is its node-local rank; every strategy maps as documented; the topology
// puts all ranks on one node with mutual access (SWCUDA_P2P=all).
void selection(const mpi::communicator& comm) {
  const auto dev = mpi::select_device(comm);
  expect(dev.ordinal() == comm.node_rank(), "node_rank strategy gives the node-local rank");
  const auto rr = mpi::select_device(comm, {mpi::device_strategy::round_robin, {}, true});
  expect(rr.ordinal() == comm.rank() % cuwrap::device::count(), "round robin: rank % count");
  std::vector<int> reversed(static_cast<std::size_t>(comm.node_size()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const auto ex = mpi::select_device(comm, {mpi::device_strategy::explicit_list, reversed});
  expect(ex.ordinal() == comm.node_size() - 1 - comm.node_rank(), "explicit list");
  const mpi::topology topo{comm, dev};
  expect(topo.node_count() == 1 && topo.size() == comm.size(), "one node holds every rank");
  for (int r = 0; r < comm.size(); ++r) {
    expect(topo.place(r).device == topo.place(r).node_rank, "each rank's device is recorded");
    expect(topo.can_access(comm.rank(), r), "every rank reaches every other's device");
  }
  expect(topo.ranks_on_node(0).size() == static_cast<std::size_t>(comm.size()), "ranks_on_node");
}

// More ranks than devices: every rank gets the same configuration_error, unless sharing.
void too_many_ranks(const mpi::communicator& comm) {
  expect_throws<mpi::configuration_error>([&] { (void)mpi::select_device(comm); },
                                          std::to_string(comm.node_size()) + " ranks but " +
                                              std::to_string(cuwrap::device::count()) + " devices");
  const auto shared = mpi::select_device(comm, {mpi::device_strategy::node_rank, {}, true});
  expect(shared.ordinal() == comm.node_rank() % cuwrap::device::count(), "sharing wraps");
  // Round-robin without sharing: two ranks of the node on one device is an error naming them.
  expect_throws<mpi::configuration_error>(
      [&] {
        (void)mpi::select_device(comm, {mpi::device_strategy::round_robin, {}, false});
      },
      "node-local ranks 0 and 2 would share device 0");
}

// Point-to-point in a ring and every collective, on whatever path `comm` chose; `expected`
// says which path that must be.
void exchange(const mpi::communicator& comm, bool expected_device_pointers) {
  expect(comm.device_pointers() == expected_device_pointers, "the data path chosen");
  rank_device rd{comm};
  const int rank = comm.rank();
  const int size = comm.size();
  constexpr std::size_t n = 1000;
  std::vector<float> mine(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = static_cast<float>(rank * 10000 + i);
  auto data = from_host(rd.ctx, mine);
  cuwrap::device_buffer<float> got{rd.ctx, n};
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  // What the helpers ask of the driver: the staged path allocates pinned buffers
  // (cuMemHostAlloc) and copies through them; the device-pointer path does neither.
  const auto counts_before = cuwrap::testing::current_call_counts();
  // isend + recv: the ring passes each rank's data to the right.
  auto sending = mpi::isend<float>(comm, data.span(), right, 7, rd.s);
  mpi::recv<float>(comm, got.span(), left, 7, rd.s);
  sending.wait();
  const auto from_left = to_host(got.span());
  for (std::size_t i = 0; i < n; ++i) {
    expect(from_left[i] == static_cast<float>(left * 10000 + i),
           "ring element " + std::to_string(i));
  }
  // irecv + send, the other way.
  auto receiving = mpi::irecv<float>(comm, got.span(), right, 8, rd.s);
  mpi::send<float>(comm, data.span(), left, 8, rd.s);
  receiving.wait();
  expect(to_host(got.span())[n - 1] == static_cast<float>(right * 10000 + n - 1), "reverse ring");

  // allreduce: the sum over ranks of rank * 10000 + i.
  cuwrap::device_buffer<double> sums{rd.ctx, n};
  std::vector<double> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = rank + 0.5 * static_cast<double>(i);
  cuwrap::copy(sums, h);
  mpi::allreduce<double>(comm, sums.span(), rd.s);
  cuwrap::copy(h, sums);
  const double ranks_sum = size * (size - 1) / 2.0;
  for (std::size_t i = 0; i < n; ++i) {
    expect(h[i] == ranks_sum + size * 0.5 * static_cast<double>(i), "allreduce element");
  }
  // allreduce with MPI_MAX into another buffer.
  cuwrap::device_buffer<int> one{rd.ctx, 1}, max{rd.ctx, 1};
  const std::vector<int> rank_value{rank};
  cuwrap::copy(one, rank_value);
  mpi::allreduce<int>(comm, one.span(), max.span(), rd.s, MPI_MAX);
  std::vector<int> max_host(1);
  cuwrap::copy(max_host, max);
  expect(max_host[0] == size - 1, "allreduce MPI_MAX");
  // allgather: every rank's 3 values, rank by rank.
  cuwrap::device_buffer<std::int64_t> three{rd.ctx, 3}, all{rd.ctx, 3 * std::size_t(size)};
  const std::vector<std::int64_t> values{rank, -rank, 100 + rank};
  cuwrap::copy(three, values);
  mpi::allgather<std::int64_t>(comm, three.span(), all.span(), rd.s);
  std::vector<std::int64_t> gathered(3 * std::size_t(size));
  cuwrap::copy(gathered, all);
  for (int r = 0; r < size; ++r) {
    expect(gathered[3 * r] == r && gathered[3 * r + 1] == -r && gathered[3 * r + 2] == 100 + r,
           "allgather block " + std::to_string(r));
  }
  // broadcast from the last rank.
  std::vector<float> before(n, static_cast<float>(rank));
  auto b = from_host(rd.ctx, before);
  mpi::broadcast<float>(comm, b.span(), size - 1, rd.s);
  expect(to_host(b.span()) == std::vector<float>(n, static_cast<float>(size - 1)), "broadcast");
  const auto calls =
      cuwrap::testing::difference(cuwrap::testing::current_call_counts(), counts_before);
  const auto pinned = calls.contains("cuMemHostAlloc") ? calls.at("cuMemHostAlloc") : 0;
  const auto freed = calls.contains("cuMemFreeHost") ? calls.at("cuMemFreeHost") : 0;
  if (expected_device_pointers) {
    expect(pinned == 0, "no pinned staging on the device-pointer path");
  } else {
    // isend, recv, irecv, send: one each; allreduce x2: one each; allgather: two; broadcast: one.
    expect(pinned == 9, "nine pinned staging buffers, not " + std::to_string(pinned));
    expect(freed == pinned, "every staging buffer freed");
  }
}

// Same-node IPC: each rank maps every other rank's buffer, reads it, and writes its rank into
// its slot of the right neighbour's buffer; events recorded by one rank are waited by others.
void ipc(const mpi::communicator& comm) {
  rank_device rd{comm};
  const int size = comm.node_size();
  const int me = comm.node_rank();
  std::vector<float> mine(64 + std::size_t(size), static_cast<float>(me));
  auto whole = from_host(rd.ctx, mine);
  // A subspan, to check that offsets travel: element 0 is not shared.
  const auto shared = whole.span().subspan(1);
  const auto peers = mpi::exchange_memory(comm, rd.ctx, shared);
  expect(peers.size() == size, "one span per node-local rank");
  for (int r = 0; r < size; ++r) {
    expect(peers[r].size() == shared.size(), "mapped size");
    expect(to_host(peers[r])[0] == static_cast<float>(r), "reads rank " + std::to_string(r));
  }
  // Peer-to-peer write: my rank into slot 63 + me of my right neighbour.
  const int right = (me + 1) % size;
  const std::vector<float> stamp{static_cast<float>(100 + me)};
  cuwrap::copy(rd.s, peers[right].subspan(63 + std::size_t(me), 1), stamp);
  rd.s.synchronize();
  comm.barrier();
  const int left = (me + size - 1) % size;
  expect(to_host(shared)[63 + std::size_t(left)] == static_cast<float>(100 + left),
         "the left neighbour wrote into my buffer");
  // Events: each rank records its interprocess event after its write; the others wait on it.
  cuwrap::event done{rd.ctx, cuwrap::event_flags::interprocess};
  const auto events = mpi::exchange_events(comm, rd.ctx, done);
  expect(!events[std::size_t(me)].has_value(), "no event of my own in the list");
  cuwrap::copy(rd.s, shared.subspan(0, 1), std::vector<float>{static_cast<float>(1000 + me)});
  rd.s.record(done);
  comm.barrier();  // every record is made before anyone waits
  for (int r = 0; r < size; ++r) {
    if (r == me) continue;
    rd.s.wait(*events[std::size_t(r)]);
    rd.s.synchronize();
    expect(to_host(peers[r])[0] == static_cast<float>(1000 + r), "after rank's event");
  }
  comm.barrier();  // nobody unmaps before every rank read
}

// A pool shared by node-local rank 0 over a Unix socket; its allocation imported everywhere.
void pool(const mpi::communicator& comm) {
  rank_device rd{comm};
  constexpr std::size_t n = 256;
  std::optional<cuwrap::memory_pool> owned;
  std::optional<cuwrap::stream_ordered_buffer<float>> allocation;
  if (comm.node_rank() == 0) {
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    owned.emplace(rd.dev, options);
    allocation.emplace(owned->allocate<float>(rd.s, n));
    std::vector<float> h(n);
    std::iota(h.begin(), h.end(), 0.5f);
    cuwrap::copy(rd.s, allocation->span(), h);
    rd.s.synchronize();
  }
  auto imported = mpi::share_pool(comm, 0, owned ? &*owned : nullptr);
  expect(imported.has_value() == (comm.node_rank() != 0), "imported everywhere but the root");
  if (imported && imported->access(rd.dev) != cuwrap::pool_access::read_write) {
    imported->allow_access(rd.dev);
  }
  const cuwrap::memory_pool_ref pool_ref =
      imported ? cuwrap::memory_pool_ref{*imported} : cuwrap::memory_pool_ref{*owned};
  auto memory = mpi::share_pool_allocation<float>(
      comm, 0, rd.ctx, pool_ref, allocation ? allocation->span() : cuwrap::device_span<float>{});
  if (memory) {
    expect(memory->size() == n, "imported count");
    const auto h = to_host(memory->span());
    for (std::size_t i = 0; i < n; ++i) expect(h[i] == 0.5f + float(i), "pool element");
  }
  memory.reset();  // the imports go before the exporter frees
  comm.barrier();
}

// Sizes that disagree: a receive of 4 gets 3 (MPI_Get_count) or 5 (MPI_ERR_TRUNCATE); a
// checked collective with rank-dependent counts.
void mismatch(const mpi::communicator& comm) {
  rank_device rd{comm};
  cuwrap::device_buffer<float> five{rd.ctx, 5}, four{rd.ctx, 4};
  cuwrap::fill(five, 1.0f);
  if (comm.rank() == 0) {
    mpi::send<float>(comm, five.span().first(3), 1, 1, rd.s);
    mpi::send<float>(comm, five.span(), 1, 2, rd.s);
  } else if (comm.rank() == 1) {
    expect_throws<mpi::mismatch_error>(
        [&] { mpi::recv<float>(comm, four.span(), 0, 1, rd.s); },
        "MPI_Irecv(from rank 0, tag 1, 4 x MPI_FLOAT: received 3 from rank 0, expected 4)");
    expect_throws<mpi::mismatch_error>([&] { mpi::recv<float>(comm, four.span(), 0, 2, rd.s); },
                                       "MPI_ERR_TRUNCATE");
  }
  const auto count = 4 + std::size_t(comm.rank() % 2);
  expect_throws<mpi::mismatch_error>(
      [&] { mpi::allreduce<float>(comm, five.span().first(count), rd.s); },
      "MPI_Iallreduce(ranks pass different element counts, from 4 to 5");
  // The same collective with equal counts goes through.
  mpi::allreduce<float>(comm, five.span(), rd.s);
  expect(to_host(five.span())[4] == static_cast<float>(comm.size()), "checked allreduce result");
  // MPI's own errors name the call and MPI_Error_string.
  expect_throws<mpi::error>([&] { mpi::send<float>(comm, five.span(), 99, 0, rd.s); },
                            "MPI_Isend(to rank 99, tag 0, 5 x MPI_FLOAT): MPI_ERR_RANK");
}

// Rank 1 fails before its part of the exchange; rank 0's receive gets a timeout_error instead of
// hanging. Both ranks then go on (and finish together).
void failure(const mpi::communicator& comm) {
  rank_device rd{comm};
  cuwrap::device_buffer<float> data{rd.ctx, 16};
  if (comm.rank() == 1) {
    expect_throws<cuwrap::error>([] { (void)cuwrap::device::get(99); }, "cuDeviceGet");
    return;  // this rank's exchange never happens
  }
  if (comm.rank() == 0) {
    expect_throws<mpi::timeout_error>([&] { mpi::recv<float>(comm, data.span(), 1, 5, rd.s); },
                                      "MPI_Irecv(from rank 1, tag 5, 16 x MPI_FLOAT, not complete");
  }
}

// The abort policy: rank 0 waits for a message rank 1 never sends; the job ends, non-zero.
void abort_policy(const mpi::communicator& comm) {
  rank_device rd{comm};
  cuwrap::device_buffer<float> data{rd.ctx, 16};
  if (comm.rank() == 0) mpi::recv<float>(comm, data.span(), 1, 5, rd.s);
  if (comm.rank() == 1) pause();  // "hangs": only MPI_Abort ends it
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string scenario = argc > 1 ? argv[1] : "";
  using run = std::function<void()>;
  int status = 0;
  try {
    mpi::communicator_options options;
    // A rank whose checks fail leaves the others waiting: the bounded wait turns that into an
    // error on them too, well inside the ctest TIMEOUT.
    options.timeout = std::chrono::milliseconds{20000};
    if (scenario == "failure" || scenario == "abort")
      options.timeout = std::chrono::milliseconds{500};
    if (scenario == "abort") options.when_timed_out = mpi::on_timeout::abort;
    if (scenario == "mismatch") options.checked = true;
    if (scenario == "staged") options.path = mpi::cuda_aware::stage;
    if (scenario == "device-pointers") options.path = mpi::cuda_aware::trust;
    const mpi::communicator comm{MPI_COMM_WORLD, options};
    const std::map<std::string, run> scenarios{
        {"selection", [&] { selection(comm); }},
        {"too-many-ranks", [&] { too_many_ranks(comm); }},
        {"staged", [&] { exchange(comm, false); }},
        {"device-pointers", [&] { exchange(comm, true); }},
        {"env-trusted", [&] { exchange(comm, true); }},
        {"ipc", [&] { ipc(comm); }},
        {"pool", [&] { pool(comm); }},
        {"mismatch", [&] { mismatch(comm); }},
        {"failure", [&] { failure(comm); }},
        {"abort", [&] { abort_policy(comm); }},
    };
    const auto it = scenarios.find(scenario);
    if (it == scenarios.end()) throw std::invalid_argument{"unknown scenario '" + scenario + "'"};
    it->second();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s FAILED: %s\n", rank, scenario.c_str(), e.what());
    status = 1;
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %s\n", scenario.c_str(), worst == 0 ? "PASSED" : "FAILED");
  MPI_Finalize();
  return worst;
}
