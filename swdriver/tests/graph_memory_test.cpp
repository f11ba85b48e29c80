// Graph memory usage: cuDeviceGetGraphMemAttribute, cuDeviceSetGraphMemAttribute and
// cuDeviceGraphMemTrim over allocation and free nodes.
#include <vector>

#include "graph_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::api;
using swcu::test::gr;

constexpr std::size_t kMiB = 1 << 20;  // a multiple of the page size: mapped as it is

struct GraphMemoryTest : swcu::test::DriverTest {
  GraphMemoryTest() : ctx(swcu::test::create_context()), stream(swcu::test::create_stream()) {
    // Start from an empty graph pool with fresh high watermarks (no test leaves a graph).
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGraphMemTrim(0));
    reset_highs();
  }
  ~GraphMemoryTest() {
    cu.cuStreamDestroy_v2(stream);
    cu.cuCtxDestroy_v2(ctx);
  }
  GraphMemoryTest(const GraphMemoryTest&) = delete;
  GraphMemoryTest& operator=(const GraphMemoryTest&) = delete;

  cuuint64_t attr(CUgraphMem_attribute a) {
    cuuint64_t v = 12345;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetGraphMemAttribute(0, a, &v));
    return v;
  }
  cuuint64_t used() { return attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT); }
  cuuint64_t reserved() { return attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT); }
  cuuint64_t used_high() { return attr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH); }
  cuuint64_t reserved_high() { return attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH); }
  void reset_highs() {
    cuuint64_t zero = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
  }
  // A graph that allocates `bytes` and, with `free_it`, frees them again.
  CUgraph alloc_graph(std::size_t bytes, bool free_it) {
    CUgraph g = swcu::test::create_graph();
    CUDA_MEM_ALLOC_NODE_PARAMS p{};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    p.bytesize = bytes;
    CUgraphNode a = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemAllocNode(&a, g, nullptr, 0, &p));
    if (free_it) {
      CUgraphNode f = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemFreeNode(&f, g, &a, 1, p.dptr));
    }
    return g;
  }
  void run(CUgraphExec e) {
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
  }

  CUcontext ctx;
  CUstream stream;
};

}  // namespace

TEST_SUITE("graph memory") {
  // CUgraphMem_attribute: USED_MEM_CURRENT is the memory "currently associated with graphs",
  // RESERVED_MEM_CURRENT the memory "currently allocated for use by the CUDA graphs asynchronous
  // allocator"; the programming guide ("Graph Memory Nodes"): graph allocations get physical
  // memory when the graph is uploaded or launched, keep it between launches, and
  // cuDeviceGraphMemTrim "will unmap and release any physical memory reserved by graph memory
  // nodes that is not actively in use".
  TEST_CASE_FIXTURE(GraphMemoryTest, "a launch maps graph memory and trimming releases it") {
    CHECK(used() == 0);
    CHECK(reserved() == 0);
    CUgraph graph = alloc_graph(kMiB, true);
    CHECK(used() == 0);  // a node only reserves an address
    const CUgraphExec exec = swcu::test::instantiate(graph);
    CHECK(used() == 0);
    run(exec);
    // As a real driver reports after one launch (cuda-python's test_cuda_graphMem_attr).
    CHECK(used() == kMiB);
    CHECK(used_high() == used());
    CHECK(reserved() == used_high());
    CHECK(reserved_high() == reserved());
    run(exec);  // kept between launches: no growth
    CHECK(used() == kMiB);
    CHECK(reserved() == kMiB);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGraphMemTrim(0));  // idle and freed: released
    CHECK(used() == 0);
    CHECK(reserved() == 0);
    CHECK(used_high() == kMiB);
    CHECK(reserved_high() == kMiB);
    run(exec);  // mapped again by the next launch
    CHECK(used() == kMiB);

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));  // back into the pool, still reserved
    CHECK(used() == 0);
    CHECK(reserved() == kMiB);
    // Another graph's launch reuses what the pool holds.
    CUgraph other = alloc_graph(kMiB / 2, true);
    const CUgraphExec other_exec = swcu::test::instantiate(other);
    run(other_exec);
    CHECK(used() == kMiB / 2);
    CHECK(reserved() == kMiB);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGraphMemTrim(0));
    CHECK(reserved() == 0);
    CHECK(used() == 0);

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(other_exec));
    for (CUgraph g : {graph, other}) SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));
  }

  TEST_CASE_FIXTURE(GraphMemoryTest, "memory in use is not trimmed, and uploads map memory too") {
    CUgraph kept = alloc_graph(kMiB, false);  // left allocated by each launch
    const CUgraphExec exec = swcu::test::instantiate(kept);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphUpload(exec, stream));
    CHECK(used() == kMiB);
    run(exec);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceGraphMemTrim(0));  // "Allocations that have not been freed"
    CHECK(used() == kMiB);
    CHECK(reserved() == kMiB);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    CHECK(used() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGraphMemTrim(0));
    CHECK(reserved() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(kept));
  }

  // cuDeviceSetGraphMemAttribute: only USED_MEM_HIGH and RESERVED_MEM_HIGH, and "High watermark
  // can only be reset to zero".
  TEST_CASE_FIXTURE(GraphMemoryTest, "only the high watermarks can be reset, and only to zero") {
    CUgraph graph = alloc_graph(kMiB, true);
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    CHECK(used_high() == kMiB);
    cuuint64_t v = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &v));
    CHECK(used_high() == 0);         // the current use
    CHECK(reserved_high() == kMiB);  // untouched
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &v));
    CHECK(reserved_high() == kMiB);  // the pool still holds it
    v = 5;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &v),
                           CUDA_ERROR_INVALID_VALUE);
    v = 0;
    // Plain ints in the list: an enum object holding 9 would be undefined behaviour to load.
    for (const int a : {int{CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT},
                        int{CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT}, 9}) {
      SWCU_TEST_CHECK_RESULT(
          cu.cuDeviceSetGraphMemAttribute(0, swcu::test::invalid_enum<CUgraphMem_attribute>(a), &v),
          CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetGraphMemAttribute(0, swcu::test::invalid_enum<CUgraphMem_attribute>(9), &v),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, nullptr),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetGraphMemAttribute(99, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v),
        CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetGraphMemAttribute(-1, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &v),
                           CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGraphMemTrim(99), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGraphMemTrim(0));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
  }
}
