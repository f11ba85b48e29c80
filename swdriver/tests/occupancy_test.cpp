// Occupancy: the model of 2048 threads, 32 blocks and 228 KiB of shared memory per SM (1 KiB
// reserved per block), 132 SMs.
#include <array>

#include "module_support.hpp"

namespace {

using swcu::test::mod;
using swcu::test::ModuleTest;

struct OccupancyTest : ModuleTest {
  OccupancyTest() : m(load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")))) {}
  ~OccupancyTest() { mod().cuModuleUnload(m); }
  OccupancyTest(const OccupancyTest&) = delete;
  OccupancyTest& operator=(const OccupancyTest&) = delete;

  int blocks(CUfunction f, int block_size, std::size_t dynamic) {
    int n = -1;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block_size, dynamic));
    return n;
  }

  CUmodule m;
};

// Dynamic shared memory of 200 bytes per thread.
size_t two_hundred_per_thread(int block_size) { return static_cast<size_t>(block_size) * 200; }

CUlaunchConfig config(unsigned block, std::array<CUlaunchAttribute, 1>* cluster = nullptr) {
  CUlaunchConfig c{};
  c.gridDimX = 16;
  c.gridDimY = c.gridDimZ = 1;
  c.blockDimX = block;
  c.blockDimY = c.blockDimZ = 1;
  if (cluster != nullptr) {
    c.attrs = cluster->data();
    c.numAttrs = 1;
  }
  return c;
}

}  // namespace

TEST_SUITE("occupancy") {
  TEST_CASE_FIXTURE(OccupancyTest, "active blocks per multiprocessor") {
    const CUfunction f = function(m, "no_params");
    CHECK(blocks(f, 32, 0) == 32);  // the block limit
    CHECK(blocks(f, 256, 0) == 8);  // 2048 threads
    CHECK(blocks(f, 1024, 0) == 2);
    CHECK(blocks(f, 100, 0) == 16);     // whole warps: 128 threads each
    CHECK(blocks(f, 256, 49152) == 4);  // 233472 / (49152 + 1024)
    CHECK(blocks(f, 64, 49153) == 0);   // more than the kernel's dynamic shared memory limit
    CHECK(blocks(f, 1025, 0) == 0);
    const CUfunction bounded = function(m, "bounded");
    CHECK(blocks(bounded, 512, 0) == 0);  // more than __launch_bounds__(256)
    const CUfunction shared = function(m, "static_shared");
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
    CHECK(blocks(shared, 32, 100000) == 2);  // 233472 / (100000 + 400 + 1024)
    int n = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &n, f, 256, 0, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
    CHECK(n == 8);
    SWCU_TEST_CHECK_RESULT(
        mod().cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 256, 0, 2),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 0, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, f, 32, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                               &n, reinterpret_cast<CUfunction>(m), 32, 0),
                           CUDA_ERROR_INVALID_HANDLE);
  }

  TEST_CASE_FIXTURE(OccupancyTest, "the block size with the most resident threads") {
    int grid = 0;
    int block = 0;
    const CUfunction f = function(m, "no_params");
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxPotentialBlockSize(&grid, &block, f, nullptr, 0, 0));
    CHECK(block == 1024);
    CHECK(grid == 2 * 132);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxPotentialBlockSize(&grid, &block, f, nullptr, 0, 200));
    CHECK(block == 128);  // 200 threads: 9 blocks, 1800 threads; 128: 16 blocks fill the SM
    CHECK(grid == 16 * 132);
    const CUfunction bounded = function(m, "bounded");
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxPotentialBlockSize(&grid, &block, bounded, nullptr, 0, 0));
    CHECK(block == 256);
    CHECK(grid == 8 * 132);
    // Dynamic shared memory that grows with the block: 224 threads, 5 blocks per SM, is best.
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxPotentialBlockSizeWithFlags(
        &grid, &block, f, &two_hundred_per_thread, 0, 0, CU_OCCUPANCY_DEFAULT));
    CHECK(block == 224);
    CHECK(grid == 5 * 132);
    SWCU_TEST_CHECK_RESULT(
        mod().cuOccupancyMaxPotentialBlockSize(nullptr, &block, f, nullptr, 0, 0),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxPotentialBlockSize(&grid, &block, f, nullptr, 0, -1),
                           CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(OccupancyTest, "dynamic shared memory available per block") {
    const CUfunction f = function(m, "no_params");
    std::size_t bytes = 0;
    // Never more than the kernel's current dynamic limit: 48 KiB by default (NVIDIA's driver).
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 2, 256));
    CHECK(bytes == 49152);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256));
    CHECK(bytes == 49152);
    // Raised, the limit lets the SM's share through.
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200000));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 2, 256));
    CHECK(bytes == 233472 / 2 - 1024);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256));
    CHECK(bytes == 200000);
    const CUfunction with_static = function(m, "static_shared");
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncSetAttribute(
        with_static, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200000));
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, with_static, 2, 256));
    CHECK(bytes == 233472 / 2 - 1024 - 400);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 9, 256));
    CHECK(bytes == 0);  // 9 blocks of 256 threads do not fit
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 0, 256),
                           CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(OccupancyTest, "clusters") {
    const CUfunction f = function(m, "no_params");
    std::array<CUlaunchAttribute, 1> two{};
    two[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    two[0].value.clusterDim.x = 2;
    two[0].value.clusterDim.y = two[0].value.clusterDim.z = 1;
    CUlaunchConfig c = config(128, &two);
    int n = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, f, &c));
    CHECK(n == 16 * 132 / 2);
    c = config(128);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, f, &c));
    CHECK(n == 16 * 132);  // no size given or required: clusters of one block
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, function(m, "clustered"), &c));
    CHECK(n == 16 * 132 / 2);  // its compile-time size
    two[0].value.clusterDim.x = 16;
    c = config(128, &two);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveClusters(&n, f, &c),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveClusters(&n, f, nullptr),
                           CUDA_ERROR_INVALID_VALUE);

    c = config(128);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxPotentialClusterSize(&n, f, &c));
    CHECK(n == 8);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxPotentialClusterSize(&n, f, &c));
    CHECK(n == 16);
    c = config(128, &two);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, f, &c));
    CHECK(n == 16 * 132 / 16);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxPotentialClusterSize(&n, function(m, "clustered"), &c));
    CHECK(n == 2);
  }

  // CUDA driver API reference, cuOccupancyMaxActiveClusters: "If the function has required
  // cluster size already set (see cudaFuncGetAttributes / cuFuncGetAttribute), the cluster size
  // from config must either be unspecified or match the required size." It goes on to say that
  // without a required size one must be given, but NVIDIA's driver answers a configuration with
  // no cluster dimension with a count (zero or more), which is what programs rely on (issue 15).
  TEST_CASE_FIXTURE(OccupancyTest, "clusters without a cluster dimension in the configuration") {
    const CUmodule own = load(swcu::test::ptx(R"(
.visible .entry plain() { ret; }
.visible .entry fixed() .reqnctapercluster 4, 1, 1 { ret; }
.visible .entry must_set() .explicitcluster { ret; }
)"));
    CUlaunchConfig c = config(256);
    int n = -1;
    // No size anywhere: every block is a cluster of its own (8 blocks of 256 threads per SM).
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, function(own, "plain"), &c));
    CHECK(n == 8 * 132);
    // The compile-time size (.reqnctapercluster) is the size.
    const CUfunction fixed = function(own, "fixed");
    CHECK(attribute(fixed, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 4);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, fixed, &c));
    CHECK(n == 8 * 132 / 4);
    // A size set with CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH is the size too.
    const CUfunction plain = function(own, "plain");
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, plain, &c));
    CHECK(n == 8 * 132 / 2);
    // A kernel that must be launched with a cluster size (.explicitcluster) needs one.
    const CUfunction must_set = function(own, "must_set");
    CHECK(attribute(must_set, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) == 1);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveClusters(&n, must_set, &c),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    std::array<CUlaunchAttribute, 1> two{};
    two[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    two[0].value.clusterDim.x = 2;
    two[0].value.clusterDim.y = two[0].value.clusterDim.z = 1;
    c = config(256, &two);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, must_set, &c));
    CHECK(n == 8 * 132 / 2);
    // A configuration that does not fit on an SM: zero clusters, not an error.
    c = config(256);
    c.sharedMemBytes = 100 * 1024;  // above the kernel's 48 KiB dynamic shared memory limit
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, function(own, "fixed"), &c));
    CHECK(n == 0);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(own));
  }

  // Observed on an H200, driver 580.159.04, 2026-11-27: after cuCtxSetCurrent(NULL),
  // cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveClusters and
  // cuOccupancyMaxPotentialClusterSize answer CUDA_ERROR_INVALID_CONTEXT, even for a function
  // and a stream of a live context; every cuOccupancy* query does the same here.
  TEST_CASE_FIXTURE(OccupancyTest, "every occupancy query needs a current context") {
    const CUfunction f = function(m, "no_params");
    CUstream stream = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUlaunchConfig c = config(256);
    c.hStream = stream;  // not the NULL stream: its context is known without a current one
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    int n = -1;
    int grid = -1;
    std::size_t bytes = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 256, 0),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(
        mod().cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 256, 0, 0),
        CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxPotentialBlockSize(&grid, &n, f, nullptr, 0, 0),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(
        mod().cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &n, f, nullptr, 0, 0, 0),
        CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxActiveClusters(&n, f, &c),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(mod().cuOccupancyMaxPotentialClusterSize(&n, f, &c),
                           CUDA_ERROR_INVALID_CONTEXT);
    CHECK(n == -1);  // nothing written
    CHECK(grid == -1);
    // With the context current again, the same calls answer.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 256, 0));
    CHECK(n == 8);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&n, f, &c));
    CHECK(n == 8 * 132);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy(stream));
  }
}
