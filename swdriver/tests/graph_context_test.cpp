// Graphs and the current context: what needs one and what does not. Observed on an H200, driver
// 580.159.04, 2026-11-27, after cuCtxSetCurrent(NULL): cuGraphCreate and cuGraphAddEmptyNode
// succeed; cuGraphInstantiateWithFlags (cuGraphInstantiate) and cuGraphInstantiateWithParams
// answer CUDA_ERROR_INVALID_CONTEXT; cuGraphAddKernelNode crashes the process (a segfault), even
// with a valid CUfunction and params.ctx set, where this driver answers
// CUDA_ERROR_INVALID_CONTEXT.
#include "graph_fixture.hpp"

using swcu::test::api;
using swcu::test::gr;
using swcu::test::GraphTest;

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(GraphTest,
                    "a graph needs no current context, instantiating one does, as on an H200") {
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(nullptr));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphCreate(&graph, 0));
    CUgraphNode empty = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEmptyNode(&empty, graph, nullptr, 0));
    CUgraphExec exec = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiate(&exec, graph, 0), CUDA_ERROR_INVALID_CONTEXT);
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiateWithParams(&exec, graph, &params),
                           CUDA_ERROR_INVALID_CONTEXT);
    CUgraphNode error_node = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiate_v1(&exec, graph, &error_node, nullptr, 0),
                           CUDA_ERROR_INVALID_CONTEXT);
    CHECK(exec == nullptr);
    CHECK(ctl.live_handles(SWCU_GRAPH_EXEC) == 0);

    // With a context current the same graph instantiates, and its executable graph runs.
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphInstantiateWithParams(&exec, graph, &params));
    CHECK(params.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
    run(exec);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
  }

  TEST_CASE_FIXTURE(GraphTest, "a kernel node needs a current context") {
    CUdeviceptr dx = alloc(4);
    CUdeviceptr dy = alloc(4);
    float a = 2.0f;
    int n = 1;
    void* args[] = {&a, &dx, &dy, &n};
    CUDA_KERNEL_NODE_PARAMS p = saxpy_params(args, 1);
    p.ctx = ctx;
    CUDA_KERNEL_NODE_PARAMS_v1 p1{};
    p1.func = p.func;
    p1.gridDimX = p1.gridDimY = p1.gridDimZ = 1;
    p1.blockDimX = p1.blockDimY = p1.blockDimZ = 1;
    p1.kernelParams = args;
    const CUgraph graph = swcu::test::create_graph();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(nullptr));
    CUgraphNode k = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode(&k, graph, nullptr, 0, &p),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode_v1(&k, graph, nullptr, 0, &p1),
                           CUDA_ERROR_INVALID_CONTEXT);
    CHECK(k == nullptr);
    CHECK(swcu::test::nodes_of(graph).empty());

    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode(&k, graph, nullptr, 0, &p));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode_v1(&k, graph, nullptr, 0, &p1));
    CHECK(swcu::test::nodes_of(graph).size() == 2);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dy));
  }
}
