// Launch attributes of kernel nodes: cuGraphKernelNodeSetAttribute, GetAttribute and
// CopyAttributes (cuda.h: the CUlaunchAttributeIDs "valid for graph nodes").
#include <vector>

#include "graph_fixture.hpp"

namespace {

using swcu::test::api;
using swcu::test::gr;
using swcu::test::GraphTest;

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(GraphTest, "kernel nodes keep the launch attributes valid for graph nodes") {
    constexpr unsigned n = 128;
    CUdeviceptr dx = alloc(n * 4), dy = alloc(n * 4);
    float a = 2.0f;
    int count = n;
    void* args[] = {&a, &dx, &dy, &count};
    const CUDA_KERNEL_NODE_PARAMS p = saxpy_params(args, n);
    CUgraph graph = swcu::test::create_graph();
    CUgraphNode k = nullptr, other = nullptr, empty = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode(&k, graph, nullptr, 0, &p));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode(&other, graph, nullptr, 0, &p));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEmptyNode(&empty, graph, nullptr, 0));

    CUkernelNodeAttrValue v{};
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeGetAttribute(k, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
    CHECK(v.cooperative == 0);  // nothing set yet
    v.cooperative = 1;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
    v = {};
    v.priority = -2;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    v = {};
    v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
    v = {};
    v.clusterDim.x = 2;
    v.clusterDim.y = 1;
    v.clusterDim.z = 1;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v));

    CUkernelNodeAttrValue got{};
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeGetAttribute(k, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got));
    CHECK(got.priority == -2);
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeGetAttribute(k, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &got));
    CHECK(got.memSyncDomain == CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);

    // Copied to another kernel node.
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphKernelNodeCopyAttributes(other, k));
    got = {};
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeGetAttribute(other, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &got));
    CHECK(got.clusterDim.x == 2);
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphKernelNodeGetAttribute(other, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &got));
    CHECK(got.cooperative == 1);

    // Stream-only and launch-only attributes, non-kernel nodes, a cluster of no blocks or of
    // more than 16 (the portable maximum) are refused.
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, &v),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphKernelNodeGetAttribute(empty, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphKernelNodeCopyAttributes(empty, k),
                           CUDA_ERROR_INVALID_VALUE);
    v = {};
    v.clusterDim.x = 32;
    v.clusterDim.y = v.clusterDim.z = 1;
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphKernelNodeSetAttribute(k, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v),
        CUDA_ERROR_INVALID_VALUE);

    // The node runs with its attributes (a cooperative grid of 2 blocks, in one cluster).
    std::vector<float> y(n, 1.0f);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoD_v2(dx, y.data(), n * 4));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoD_v2(dy, y.data(), n * 4));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroyNode(other));
    const CUgraphExec exec =
        swcu::test::instantiate(graph, CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    run(exec);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoH_v2(y.data(), dy, n * 4));
    CHECK(y == std::vector<float>(n, 3.0f));  // 2 * 1 + 1
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dy));
  }
}
