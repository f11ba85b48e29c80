// Kernel conformance for thread-block clusters (conformance/cluster.cu): cooperative groups'
// this_cluster() with map_shared_rank (distributed shared memory) and cluster.sync(), launched
// with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (cuLaunchKernelEx) and with compile-time
// dimensions (__cluster_dims__, PTX .reqnctapercluster/.explicitcluster), checked against a host
// reference; and the cluster size limits the driver checks (cuda.h: CU_LAUNCH_ATTRIBUTE_
// CLUSTER_DIMENSION; a cluster of more than 8 blocks needs
// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, and 16 is the most on sm_90, else
// CUDA_ERROR_INVALID_CLUSTER_SIZE). These tests also run with SWCUDA_WORKERS set to 1, 2 and 8
// (CMakeLists.txt): the blocks of a cluster may run on different workers.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conformance_checks.hpp"
#include "graph_support.hpp"

namespace {

using conf::Conformance;
using conf::Dim;

constexpr unsigned kBlock = 64;

// cuLaunchKernelEx with a cluster of `cluster` blocks in x (0: no attribute).
template <class... A>
CUresult launch_cluster_on(CUstream stream, CUfunction f, unsigned grid, unsigned cluster,
                           A... args) {
  void* params[] = {static_cast<void*>(&args)..., nullptr};
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = cluster;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = kBlock;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = kBlock * sizeof(int);
  config.attrs = cluster != 0 ? &attr : nullptr;
  config.numAttrs = cluster != 0 ? 1 : 0;
  config.hStream = stream;
  return swcu::test::mod().cuLaunchKernelEx(&config, f, params, nullptr);
}

template <class... A>
CUresult launch_cluster(CUfunction f, unsigned grid, unsigned cluster, A... args) {
  return launch_cluster_on(nullptr, f, grid, cluster, args...);
}

struct ClusterRing : Conformance {
  unsigned grid = 0;
  std::vector<int> in;
  CUdeviceptr din = 0, dout = 0, dsums = 0, dmeta = 0;

  void prepare(unsigned blocks) {
    grid = blocks;
    conf::Rng rng(91);
    in.resize(std::size_t{grid} * kBlock);
    for (int& x : in) x = rng.range(-1000, 1000);
    din = upload(in);
    dout = zeros<int>(in.size(), -1);
    dsums = zeros<long long>(grid, -1);
    dmeta = zeros<unsigned>(3 * std::size_t{grid}, 0xffffffffu);
  }

  // The host reference for clusters of `size` blocks.
  void check(unsigned size) {
    std::vector<int> want_out(in.size());
    std::vector<long long> want_sums(grid, -1);
    std::vector<unsigned> want_meta(3 * std::size_t{grid});
    for (unsigned b = 0; b < grid; ++b) {
      const unsigned cluster = b / size, rank = b % size;
      const unsigned next = cluster * size + (rank + 1) % size;
      for (unsigned t = 0; t < kBlock; ++t) want_out[b * kBlock + t] = in[next * kBlock + t];
      want_meta[3 * b] = rank;
      want_meta[3 * b + 1] = size;
      want_meta[3 * b + 2] = rank;
      if (rank == 0) {
        long long s = 0;
        for (unsigned e = cluster * size * kBlock; e < (cluster + 1) * size * kBlock; ++e)
          s += in[e];
        want_sums[cluster] = s;
      }
    }
    conf::expect_equal(download<int>(dout, in.size()), want_out, "the next block's tile");
    conf::expect_equal(download<long long>(dsums, grid), want_sums, "each cluster's sum");
    conf::expect_equal(download<unsigned>(dmeta, 3 * std::size_t{grid}), want_meta,
                       "rank, blocks and index in the cluster");
  }
};

}  // namespace

TEST_SUITE("conformance.cluster") {
  TEST_CASE_FIXTURE(ClusterRing,
                    "conformance.cluster: distributed shared memory with the launch attribute") {
    const CUfunction f = function(load_ptx("cluster"), "cluster_ring");
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      INFO("cluster size ", size);
      prepare(96);
      SWCU_TEST_REQUIRE_SUCCESS(launch_cluster(f, grid, size, din, dout, dsums, dmeta));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
      check(size);
    }
  }

  TEST_CASE_FIXTURE(ClusterRing,
                    "conformance.cluster: distributed shared memory with __cluster_dims__") {
    const CUfunction f = function(load_ptx("cluster"), "cluster_ring_fixed");
    // more clusters than are resident at once: whole clusters start as others finish
    int clusters = 0;
    CUlaunchConfig config{};
    config.gridDimX = 4;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = kBlock;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = kBlock * sizeof(int);
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuOccupancyMaxActiveClusters(&clusters, f, &config));
    REQUIRE(clusters > 0);
    prepare(4 * static_cast<unsigned>(clusters) + 4 * 5);
    void* params[] = {&din, &dout, &dsums, &dmeta};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(
        f, grid, 1, 1, kBlock, 1, 1, kBlock * sizeof(int), nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    check(4);
    // the attribute may repeat the compile-time size, not change it
    SWCU_TEST_CHECK_RESULT(launch_cluster(f, grid, 2, din, dout, dsums, dmeta),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
  }

  TEST_CASE_FIXTURE(ClusterRing, "conformance.cluster: a cluster too large is refused") {
    const CUfunction f = function(load_ptx("cluster"), "cluster_ring");
    prepare(32);
    // more than the portable 8 blocks without the non-portable opt-in
    SWCU_TEST_CHECK_RESULT(launch_cluster(f, grid, 16, din, dout, dsums, dmeta),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncSetAttribute(
        f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    // 16 with it (the most on sm_90), and the kernel runs as a cluster of 16
    SWCU_TEST_REQUIRE_SUCCESS(launch_cluster(f, grid, 16, din, dout, dsums, dmeta));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    check(16);
    SWCU_TEST_CHECK_RESULT(launch_cluster(f, grid, 32, din, dout, dsums, dmeta),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
  }

  TEST_CASE_FIXTURE(ClusterRing, "conformance.cluster: graphs keep the cluster size") {
    const CUmodule m = load_ptx("cluster");
    CUstream stream = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    // a captured launch with the attribute
    prepare(64);
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(
        launch_cluster_on(stream, function(m, "cluster_ring"), grid, 4, din, dout, dsums, dmeta));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuStreamEndCapture(stream, &graph));
    CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    check(4);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(graph));
    // a kernel node of a kernel compiled with __cluster_dims__(4, 1, 1)
    prepare(32);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphCreate(&graph, 0));
    void* params[] = {&din, &dout, &dsums, &dmeta};
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = function(m, "cluster_ring_fixed");
    p.gridDimX = grid;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = kBlock;
    p.blockDimY = p.blockDimZ = 1;
    p.sharedMemBytes = kBlock * sizeof(int);
    p.kernelParams = params;
    CUgraphNode node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphAddKernelNode(&node, graph, nullptr, 0, &p));
    exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    check(4);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.cluster: bulk copies and mbarrier arrivals between the blocks") {
    // cp.async.bulk into another block's shared memory (from global memory, and from the
    // issuing block's shared memory), the multicast form, and mbarrier.arrive.shared::cluster
    // on a remote barrier: each completes the destination block's mbarrier (PTX ISA
    // "cp.async.bulk", "mbarrier.arrive"), whose owner waits for it with try_wait.parity.
    const CUfunction f = function(load_ptx("cluster"), "cluster_bulk_exchange");
    constexpr unsigned kWords = 64, kGrid = 16;
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      INFO("cluster size ", size);
      conf::Rng rng(17 + size);
      std::vector<int> in(std::size_t{4} * kWords * kGrid);
      for (int& x : in) x = rng.range(-100000, 100000);
      const CUdeviceptr din = upload(in);
      const CUdeviceptr dout = zeros<int>(in.size(), -1);
      SWCU_TEST_REQUIRE_SUCCESS(launch_cluster(f, kGrid, size, din, dout));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
      std::vector<int> want(in.size(), -1);
      for (unsigned b = 0; b < kGrid; ++b) {
        const unsigned first = b / size * size, rank = b % size;
        const unsigned next = first + (rank + 1) % size, after = first + (rank + 2) % size;
        int* mine = &want[std::size_t{4} * kWords * b];
        for (unsigned i = 0; i < kWords; ++i) {
          mine[i] = in[std::size_t{4} * kWords * next + i];
          mine[kWords + i] = in[std::size_t{4} * kWords * after + i];
          mine[2 * kWords + i] = in[std::size_t{4} * kWords * first + kWords + i];
        }
        if (rank == 0) {
          for (unsigned r = 0; r < size; ++r)
            mine[3 * kWords + r] = static_cast<int>(1000 * r + first + r);
        }
      }
      conf::expect_equal(download<int>(dout, in.size()), want,
                         "tiles received, forwarded, multicast and posted");
    }
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.cluster: st.async and red.async into another block") {
    // cuda::ptx::st_async / red_async (PTX ISA "st.async", "red.async"): stores and reductions
    // into rank 0's shared memory, each completing its bytes on rank 0's mbarrier.
    const CUfunction f = function(load_ptx("cluster"), "cluster_async_stores");
    constexpr unsigned kGrid = 16;
    for (unsigned size : {1u, 2u, 4u, 8u, 16u}) {
      INFO("cluster size ", size);
      if (size == 16) {
        SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncSetAttribute(
            f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
      }
      conf::Rng rng(5 + size);
      std::vector<int> in(std::size_t{2} * kBlock * kGrid);
      for (int& x : in) x = rng.range(-1000000, 1000000);
      const CUdeviceptr din = upload(in);
      const CUdeviceptr dout = zeros<int>(in.size(), -1);
      const CUdeviceptr dtotals = zeros<unsigned>(2 * (kGrid / size), 0);
      SWCU_TEST_REQUIRE_SUCCESS(launch_cluster(f, kGrid, size, din, dout, dtotals));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
      std::vector<unsigned> want_totals(2 * (kGrid / size), 0);
      for (unsigned t = 0; t < kGrid * kBlock; ++t) {
        const unsigned cluster = t / (size * kBlock);
        want_totals[2 * cluster] +=
            static_cast<unsigned>(in[2 * t]) + static_cast<unsigned>(in[2 * t + 1]);
        want_totals[2 * cluster + 1] =
            std::max(want_totals[2 * cluster + 1], static_cast<unsigned>(in[2 * t]));
      }
      conf::expect_equal(download<int>(dout, in.size()), in, "the gathered stores");
      conf::expect_equal(download<unsigned>(dtotals, want_totals.size()), want_totals,
                         "each cluster's sum and maximum");
    }
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.cluster: bulk reductions into another block") {
    // cuda::ptx::cp_reduce_async_bulk into .shared::cluster (PTX ISA "cp.reduce.async.bulk"):
    // every block reduces its ints into rank 0's shared memory, each element atomically,
    // completing the bytes on rank 0's mbarrier.
    const CUfunction f = function(load_ptx("cluster"), "cluster_bulk_reduce");
    constexpr unsigned kGrid = 16;
    for (unsigned size : {1u, 2u, 4u, 8u, 16u}) {
      INFO("cluster size ", size);
      if (size == 16) {
        SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncSetAttribute(
            f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
      }
      conf::Rng rng(17 + size);
      std::vector<int> in(std::size_t{kBlock} * kGrid);
      for (int& x : in) x = rng.range(-1000000, 1000000);
      const CUdeviceptr din = upload(in);
      const CUdeviceptr dout = zeros<unsigned>(2 * kBlock * (kGrid / size), 0);
      SWCU_TEST_REQUIRE_SUCCESS(launch_cluster(f, kGrid, size, din, dout));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
      std::vector<unsigned> want(2 * kBlock * (kGrid / size), 0);
      for (unsigned c = 0; c < kGrid / size; ++c) {
        for (unsigned t = 0; t < kBlock; ++t) {
          int least = 0x7fffffff;
          for (unsigned b = c * size; b < (c + 1) * size; ++b) {
            want[2 * kBlock * c + t] += static_cast<unsigned>(in[b * kBlock + t]);
            least = std::min(least, in[b * kBlock + t]);
          }
          want[2 * kBlock * c + kBlock + t] = static_cast<unsigned>(least);
        }
      }
      conf::expect_equal(download<unsigned>(dout, want.size()), want,
                         "each cluster's element-wise sums and minimums");
    }
  }
}
