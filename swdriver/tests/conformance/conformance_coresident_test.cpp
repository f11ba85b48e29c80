// Kernel conformance for blocks that run together (conformance/{coresident,cooperative}.cu):
// ordinary launches whose blocks wait for each other (a decoupled look-back scan, a persistent
// kernel with an atomic work queue), cooperative launches with grid.sync(), and printf and the
// device heap from blocks on several workers. On a GPU the blocks that fit on the device at once
// (the occupancy calculation) are resident together, and a cooperative launch (cuda.h:
// cuLaunchCooperativeKernel) guarantees that for the whole grid, or fails with
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. These tests also run with SWCUDA_WORKERS set to 1, 2
// and 8 (CMakeLists.txt): the results must not depend on the number of workers.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "conformance_checks.hpp"
#include "graph_support.hpp"

namespace conf {
namespace {

// Dynamic shared memory (unused by the kernels) that leaves two blocks per SM: it keeps the
// resident set small, so that the grids below are larger than it and stay cheap to run.
constexpr unsigned kOccupancyLimiter = 100 * 1024;

void opt_in(CUfunction f, unsigned bytes) {
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncSetAttribute(
      f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)));
}

// Blocks the device holds at once: the occupancy for `block` threads and `dynamic` bytes of
// dynamic shared memory, times the SMs.
unsigned resident_blocks(CUfunction f, unsigned block, unsigned dynamic) {
  int per_sm = 0;
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, f, static_cast<int>(block), dynamic));
  int sms = 0;
  SWCU_TEST_REQUIRE_SUCCESS(
      swcu::test::api().cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  REQUIRE(per_sm > 0);
  return static_cast<unsigned>(per_sm * sms);
}

std::vector<int> random_ints(std::size_t n, int lo, int hi, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<int> v(n);
  for (int& x : v) x = rng.range(lo, hi);
  return v;
}

// A cooperative launch on `stream`; the arguments by address, as cuLaunchKernel takes them.
template <class... A>
CUresult launch_cooperative(CUfunction f, unsigned grid, unsigned block, unsigned shared,
                            CUstream stream, A... args) {
  void* params[] = {static_cast<void*>(&args)..., nullptr};
  return swcu::test::mod().cuLaunchCooperativeKernel(f, grid, 1, 1, block, 1, 1, shared, stream,
                                                     params);
}

// cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE.
template <class... A>
CUresult launch_ex_cooperative(CUfunction f, unsigned grid, unsigned block, unsigned shared,
                               A... args) {
  void* params[] = {static_cast<void*>(&args)..., nullptr};
  CUlaunchAttribute coop{};
  coop.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  coop.value.cooperative = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = block;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = shared;
  config.attrs = &coop;
  config.numAttrs = 1;
  return swcu::test::mod().cuLaunchKernelEx(&config, f, params, nullptr);
}

}  // namespace

void check_scan_lookback(Conformance& t, CUmodule m) {
  constexpr unsigned block = 64;
  for (const char* name : {"scan_lookback_acqrel", "scan_lookback_volatile"}) {
    INFO(name);
    const CUfunction f = t.function(m, name);
    opt_in(f, kOccupancyLimiter);
    // More tiles than resident blocks: the later ones start as earlier ones finish.
    const unsigned tiles = 2 * resident_blocks(f, block, kOccupancyLimiter) + 37;
    const int n = static_cast<int>(tiles * block) - 5;
    const std::vector<int> in = random_ints(static_cast<std::size_t>(n), -100, 100, 61);
    std::vector<int> want(in.size());
    std::partial_sum(in.begin(), in.end(), want.begin());
    const CUdeviceptr din = t.upload(in);
    for (int dynamic_ids : {0, 1}) {
      INFO("tile ids from ", dynamic_ids != 0 ? "an atomic counter" : "blockIdx.x");
      const CUdeviceptr dout = t.zeros<int>(in.size(), -1);
      const CUdeviceptr dstatus = t.zeros<unsigned long long>(tiles);
      const CUdeviceptr dcounter = t.zeros<unsigned>(1);
      t.run(f, {tiles}, {block}, kOccupancyLimiter, din, dout, dstatus, dcounter, n, dynamic_ids);
      expect_equal(t.download<int>(dout, in.size()), want, "inclusive scan");
    }
  }
}

void check_persistent_queue(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "persistent_queue");
  opt_in(f, kOccupancyLimiter);
  constexpr unsigned block = 64;
  constexpr int items = 1500, tile = 96;
  // Exactly the blocks that fit: every one must pass the start line.
  const unsigned grid = resident_blocks(f, block, kOccupancyLimiter);
  const std::vector<int> in = random_ints(std::size_t{items} * tile, -1000, 1000, 62);
  std::vector<long long> prefix(items);
  long long running = 0;
  for (int k = 0; k < items; ++k) {
    for (int e = 0; e < tile; ++e) running += in[static_cast<std::size_t>(k * tile + e)];
    prefix[static_cast<std::size_t>(k)] = running;
  }
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr dprefix = t.zeros<long long>(items);
  const CUdeviceptr dready = t.zeros<int>(items);
  const CUdeviceptr dtaken = t.zeros<unsigned>(items);
  const CUdeviceptr dper_block = t.zeros<unsigned>(grid);
  const CUdeviceptr dhead = t.zeros<unsigned>(1);
  const CUdeviceptr darrived = t.zeros<unsigned>(1);
  t.run(f, {grid}, {block}, kOccupancyLimiter, din, dprefix, dready, dtaken, dper_block, dhead,
        darrived, items, tile);
  expect_equal(t.download<long long>(dprefix, items), prefix, "running sums of the items");
  expect_equal(t.download<unsigned>(dtaken, items), std::vector<unsigned>(items, 1),
               "each item taken once");
  const std::vector<unsigned> per_block = t.download<unsigned>(dper_block, grid);
  CHECK(std::accumulate(per_block.begin(), per_block.end(), 0u) == unsigned{items});
  // Every block took one ticket past the end of the queue, and arrived at the start line.
  expect_equal(t.download<unsigned>(dhead, 1), std::vector<unsigned>{items + grid}, "tickets");
  expect_equal(t.download<unsigned>(darrived, 1), std::vector<unsigned>{grid}, "arrivals");
}

void check_grid_sync_reduce(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "grid_sync_reduce");
  constexpr int n = 50000;
  const std::vector<int> in = random_ints(n, -1000, 1000, 63);
  const long long total = std::accumulate(in.begin(), in.end(), 0LL);
  const CUdeviceptr din = t.upload(in);
  constexpr std::pair<unsigned, unsigned> shapes[] = {{8, 128}, {3, 256}, {20, 64}};
  for (const auto& [grid, block] : shapes) {
    INFO("grid ", grid, ", block ", block);
    const CUdeviceptr dpartials = t.zeros<long long>(grid, 0);
    const CUdeviceptr dtotals = t.zeros<long long>(grid, -1);
    SWCU_TEST_REQUIRE_SUCCESS(
        launch_cooperative(f, grid, block, 0, nullptr, din, dpartials, dtotals, n));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuCtxSynchronize());
    expect_equal(t.download<long long>(dtotals, grid), std::vector<long long>(grid, total),
                 "every block's total");
    expect_equal(t.download<long long>(dpartials, grid), std::vector<long long>(grid, 0),
                 "partials cleared after the last grid.sync");
  }
}

}  // namespace conf

namespace {

using conf::Conformance;
using conf::expect_equal;

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance, "conformance.coresident: a single-pass decoupled look-back scan") {
    conf::check_scan_lookback(*this, load_ptx("coresident"));
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.coresident: a persistent kernel with an atomic work queue") {
    conf::check_persistent_queue(*this, load_ptx("coresident"));
  }

  // The CUDA Programming Guide (hardware multithreading, occupancy): the blocks of a grid are
  // distributed to the SMs, each holding as many as its resources allow, and a new block starts
  // as one finishes.
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.coresident: an ordinary launch keeps as many blocks resident as "
                    "the occupancy allows") {
    const CUfunction f = function(load_ptx("coresident"), "resident_peak");
    conf::opt_in(f, conf::kOccupancyLimiter);
    constexpr unsigned block = 32;
    const unsigned resident = conf::resident_blocks(f, block, conf::kOccupancyLimiter);
    const unsigned grid = 2 * resident + 51;
    const CUdeviceptr drunning = zeros<unsigned>(1);
    const CUdeviceptr dfinished = zeros<unsigned>(1);
    const CUdeviceptr dpeak = zeros<unsigned>(1);
    run(f, {grid}, {block}, conf::kOccupancyLimiter, drunning, dfinished, dpeak, resident);
    expect_equal(download<unsigned>(dpeak, 1), std::vector<unsigned>{resident}, "peak");
    expect_equal(download<unsigned>(dfinished, 1), std::vector<unsigned>{grid}, "finished");
    expect_equal(download<unsigned>(drunning, 1), std::vector<unsigned>{0}, "running");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.cooperative: a grid.sync reduction") {
    conf::check_grid_sync_reduce(*this, load_ptx("cooperative"));
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.cooperative: grid.sync orders writes across blocks") {
    const CUfunction f = function(load_ptx("cooperative"), "grid_sync_neighbors");
    constexpr unsigned grid = 6, block = 96;
    constexpr std::size_t n = grid * block - 10;
    const std::vector<int> in = conf::random_ints(n, -5000, 5000, 64);
    std::vector<int> v(n), after(n), want(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = 2 * in[(i + 97) % n];
    for (std::size_t i = 0; i < n; ++i) after[i] = v[i] + 1;
    for (std::size_t i = 0; i < n; ++i) want[i] = after[(i + n - 13) % n] - v[i];
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dbuf = zeros<int>(n);
    const CUdeviceptr dout = zeros<int>(n, -1);
    SWCU_TEST_REQUIRE_SUCCESS(
        conf::launch_cooperative(f, grid, block, 0, nullptr, din, dbuf, dout, static_cast<int>(n)));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    expect_equal(download<int>(dout, n), want, "values exchanged across grid.sync");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.cooperative: the cooperative attribute of cuLaunchKernelEx and "
                    "a captured cooperative launch") {
    const CUfunction f = function(load_ptx("cooperative"), "grid_sync_reduce");
    constexpr int n = 4000;
    constexpr unsigned grid = 5, block = 64;
    const std::vector<int> in = conf::random_ints(n, -1000, 1000, 65);
    const long long total = std::accumulate(in.begin(), in.end(), 0LL);
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dpartials = zeros<long long>(grid, 0);
    const CUdeviceptr dtotals = zeros<long long>(grid, -1);
    SWCU_TEST_REQUIRE_SUCCESS(
        conf::launch_ex_cooperative(f, grid, block, 0, din, dpartials, dtotals, n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    expect_equal(download<long long>(dtotals, grid), std::vector<long long>(grid, total),
                 "totals (cuLaunchKernelEx)");

    // Captured into a graph, the kernel node keeps the launch cooperative.
    CUstream stream = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(
        conf::launch_cooperative(f, grid, block, 0, stream, din, dpartials, dtotals, n));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuStreamEndCapture(stream, &graph));
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(dtotals, 0xff, grid * sizeof(long long)));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    expect_equal(download<long long>(dtotals, grid), std::vector<long long>(grid, total),
                 "totals (graph)");
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.cooperative: the largest grid that fits runs, one more block is "
                    "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE") {
    const CUfunction f = function(load_ptx("cooperative"), "grid_sync_reduce");
    conf::opt_in(f, conf::kOccupancyLimiter);
    constexpr unsigned block = 32;
    constexpr int n = 20000;
    // cuda.h, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: "the number of blocks launched per grid
    // for a kernel that was launched via cuLaunchCooperativeKernel ... exceeds the maximum
    // number of blocks as allowed by cuOccupancyMaxActiveBlocksPerMultiprocessor ... times the
    // number of multiprocessors".
    const unsigned grid = conf::resident_blocks(f, block, conf::kOccupancyLimiter);
    const std::vector<int> in = conf::random_ints(n, -1000, 1000, 66);
    const long long total = std::accumulate(in.begin(), in.end(), 0LL);
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dpartials = zeros<long long>(grid + 1, 0);
    const CUdeviceptr dtotals = zeros<long long>(grid + 1, -1);
    SWCU_TEST_CHECK_RESULT(conf::launch_cooperative(f, grid + 1, block, conf::kOccupancyLimiter,
                                                    nullptr, din, dpartials, dtotals, n),
                           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    SWCU_TEST_CHECK_RESULT(conf::launch_ex_cooperative(f, grid + 1, block, conf::kOccupancyLimiter,
                                                       din, dpartials, dtotals, n),
                           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    SWCU_TEST_REQUIRE_SUCCESS(conf::launch_cooperative(f, grid, block, conf::kOccupancyLimiter,
                                                       nullptr, din, dpartials, dtotals, n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    std::vector<long long> want(grid + 1, total);
    want[grid] = -1;  // the refused launches ran nothing
    expect_equal(download<long long>(dtotals, grid + 1), want, "every block's total");
  }

  // cooperative_groups.h: grid_group::sync() needs the grid workspace that only a cooperative
  // launch provides; without it the kernel traps (the header's _CG_ABORT), which a GPU reports
  // as CUDA_ERROR_LAUNCH_FAILED, sticky.
  TEST_CASE_FIXTURE(Conformance, "conformance.cooperative: grid.sync in an ordinary launch traps") {
    const CUfunction f = function(load_ptx("cooperative"), "grid_sync_neighbors");
    const CUdeviceptr d = zeros<int>(256);
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {2}, {64}, 0, d, d, d, 128));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    const std::string text = capture.finish();
    INFO(text);
    CHECK(text.find("kernel grid_sync_neighbors") != std::string::npos);
    CHECK(text.find("only a cooperative launch provides") != std::string::npos);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }

  // Every block faults, on whichever worker runs it: the first fault ends the launch, and the
  // launch reports one fault (one stderr line), as a GPU reports one error per launch.
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.coresident: when every block faults one fault ends the launch") {
    const std::string text = swcu::test::ptx(R"(
.visible .entry store_everywhere(.param .u64 base)
{
  .reg .b32 %b;
  .reg .b64 %a, %o;
  ld.param.u64 %a, [base];
  mov.u32 %b, %ctaid.x;
  cvt.u64.u32 %o, %b;
  shl.b64 %o, %o, 47;
  add.s64 %a, %a, %o;
  st.global.u32 [%a], %b;
  ret;
}
)");
    const CUfunction f = function(load_image(text), "store_everywhere");
    const CUdeviceptr d = alloc(16);  // block b stores at d + b * 2^47: only block 0 maps
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {64}, {32}, 0, d));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("swcuda: kernel store_everywhere") == 0);
    CHECK(err.find('\n') == err.size() - 1);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.coresident: printf from many blocks comes out line by line") {
    const CUfunction f = function(load_ptx("io"), "device_printf");
    const CUdeviceptr dword = upload(std::vector<char>{'w', 'o', 'r', 'd', '\0'});
    constexpr int grid = 48;
    conf::FdCapture capture(1);
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {grid}, {40}, 0, 7, 1.5, dword));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::string text = capture.finish();
    std::vector<std::string> want;
    for (int b = 0; b < grid; ++b)
      for (int t = 0; t < 4; ++t) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "conf block=%d thread=%d v=%d hex=%x ll=%lld f=%.3f s=%s c=%c", b, t, 7 + t,
                      7 * 16 + 10, 7LL * 1000000007LL, 1.5 * t, "word", 'A' + t);
        want.emplace_back(line);
      }
    std::sort(want.begin(), want.end());
    std::vector<std::string> got;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
      got.push_back(text.substr(start, end - start));
    std::sort(got.begin(), got.end());
    INFO(text);
    CHECK(got == want);
  }
}

}  // namespace
