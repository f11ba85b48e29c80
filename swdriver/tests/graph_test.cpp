// CUDA graphs on the software driver: building, querying, launching, node kinds, instantiation,
// whole-graph and per-node updates, user objects.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "graph_fixture.hpp"

namespace {

using swcu::test::api;
using swcu::test::count;
using swcu::test::gr;
using swcu::test::GraphTest;
using swcu::test::Order;

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(GraphTest, "a graph is a DAG: nodes, roots, edges and dependencies") {
    const auto& g = gr();
    CUgraph graph = nullptr;
    SWCU_TEST_CHECK_RESULT(g.cuGraphCreate(&graph, 1), CUDA_ERROR_INVALID_VALUE);
    graph = swcu::test::create_graph();
    CHECK(ctl.live_handles(SWCU_GRAPH) == 1);
    const CUgraphNode top = swcu::test::add_empty(graph);
    const CUgraphNode left = swcu::test::add_empty(graph, {top});
    const CUgraphNode right = swcu::test::add_empty(graph, {top});
    const CUgraphNode bottom = swcu::test::add_empty(graph, {left, right});
    CHECK(swcu::test::nodes_of(graph) == std::vector{top, left, right, bottom});
    CHECK(swcu::test::type_of(bottom) == CU_GRAPH_NODE_TYPE_EMPTY);

    std::size_t n = 0;
    SWCU_TEST_CHECK_RESULT(g.cuGraphGetRootNodes(graph, nullptr, &n), CUDA_SUCCESS);
    CHECK(n == 1);
    CUgraphNode roots[3] = {left, left, left};
    n = 3;
    SWCU_TEST_CHECK_RESULT(g.cuGraphGetRootNodes(graph, roots, &n), CUDA_SUCCESS);
    CHECK(n == 1);
    CHECK(roots[0] == top);
    CHECK(roots[1] == nullptr);  // the rest of the array is cleared

    using Edge = std::pair<CUgraphNode, CUgraphNode>;
    CHECK(swcu::test::edges_of(graph) ==
          std::vector<Edge>{{top, left}, {top, right}, {left, bottom}, {right, bottom}});
    CUgraphNode from[4], to[4];
    CUgraphEdgeData data[4];
    std::memset(data, 0xff, sizeof data);
    n = 4;
    SWCU_TEST_CHECK_RESULT(g.cuGraphGetEdges(graph, from, to, data, &n), CUDA_SUCCESS);
    CHECK(n == 4);
    CHECK(data[2].type == 0);  // default edges: zeroed data
    CHECK(data[3].to_port == 0);
    n = 4;
    SWCU_TEST_CHECK_RESULT(g.cuGraphGetEdges_v1(graph, from, nullptr, &n),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphGetEdges(graph, nullptr, nullptr, data, &n),
                           CUDA_ERROR_INVALID_VALUE);

    CUgraphNode deps[2];
    n = 2;
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeGetDependencies(bottom, deps, nullptr, &n), CUDA_SUCCESS);
    CHECK(std::vector<CUgraphNode>(deps, deps + n) == std::vector{left, right});
    n = 2;
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeGetDependentNodes_v1(top, deps, &n), CUDA_SUCCESS);
    CHECK(std::vector<CUgraphNode>(deps, deps + n) == std::vector{left, right});
    n = 0;
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeGetDependencies_v1(top, nullptr, &n), CUDA_SUCCESS);
    CHECK(n == 0);

    // Edges: an existing one, a cycle, a node of another graph, a duplicate dependency.
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddDependencies(graph, &top, &left, nullptr, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddDependencies_v1(graph, &bottom, &top, 1),
                           CUDA_ERROR_INVALID_VALUE);
    CUgraph other = swcu::test::create_graph();
    const CUgraphNode stranger = swcu::test::add_empty(other);
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddDependencies(graph, &stranger, &bottom, nullptr, 1),
                           CUDA_ERROR_INVALID_VALUE);
    const CUgraphNode twice[] = {top, top};
    CUgraphNode out = nullptr;
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddEmptyNode(&out, graph, twice, 2), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddEmptyNode(&out, graph, &stranger, 1),
                           CUDA_ERROR_INVALID_VALUE);
    CUgraphEdgeData programmatic{};
    programmatic.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddDependencies(graph, &top, &bottom, &programmatic, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddDependencies(graph, &top, &bottom, nullptr, 1),
                           CUDA_SUCCESS);
    CHECK(swcu::test::edges_of(graph).size() == 5);
    SWCU_TEST_CHECK_RESULT(g.cuGraphRemoveDependencies_v1(graph, &top, &bottom, 1), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(g.cuGraphRemoveDependencies(graph, &top, &bottom, nullptr, 1),
                           CUDA_ERROR_INVALID_VALUE);  // gone already
    CHECK(swcu::test::edges_of(graph).size() == 4);

    // Destroying a node severs its edges; its handle is stale.
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroyNode(left), CUDA_SUCCESS);
    CHECK(swcu::test::nodes_of(graph) == std::vector{top, right, bottom});
    CHECK(swcu::test::edges_of(graph) == std::vector<Edge>{{top, right}, {right, bottom}});
    CUgraphNodeType type{};
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeGetType(left, &type), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroyNode(left), CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(other), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(graph), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(graph), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeGetType(top, &type), CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles(SWCU_GRAPH) == 0);
  }

  TEST_CASE_FIXTURE(GraphTest, "a launch runs the nodes in a topological order and replays" *
                                   doctest::test_suite("simulated time")) {
    Order order;
    CUgraph graph = swcu::test::create_graph();
    // Created in one order, linked so that they must run in another.
    const CUgraphNode a = swcu::test::add_host(graph, &Order::run, order.mark(4));
    const CUgraphNode b = swcu::test::add_host(graph, &Order::run, order.mark(1));
    const CUgraphNode c = swcu::test::add_host(graph, &Order::run, order.mark(2), {b});
    const CUgraphNode d = swcu::test::add_host(graph, &Order::run, order.mark(3), {b});
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddDependencies(graph, &c, &a, nullptr, 1));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddDependencies(graph, &d, &a, nullptr, 1));
    const CUgraphNode e = swcu::test::add_host(graph, &Order::run, order.mark(5), {a});
    (void)e;
    const CUgraphExec exec = swcu::test::instantiate(graph);
    CHECK(ctl.live_handles(SWCU_GRAPH_EXEC) == 1);
    run(exec);
    CHECK(order.seen == std::vector{1, 2, 3, 4, 5});
    run(exec);
    CHECK(order.seen == std::vector{1, 2, 3, 4, 5, 1, 2, 3, 4, 5});
    // The graph may change after instantiation without touching the executable graph.
    int extra = 0;
    (void)swcu::test::add_host(graph, &count, &extra);
    run(exec);
    CHECK(extra == 0);
    // The per-thread stream and the legacy stream launch too.
    SWCU_TEST_CHECK_RESULT(gr().cuGraphLaunch_ptsz(exec, nullptr), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(api().cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(order.seen.size() == 25);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphLaunch(nullptr, stream), CUDA_ERROR_INVALID_VALUE);
    // A launch is one operation of the stream: the clock moves by one operation.
    CUevent start = swcu::test::create_event(), stop = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(start, stream));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(stop, stream));
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(0.001));
    api().cuEventDestroy_v2(start);
    api().cuEventDestroy_v2(stop);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecDestroy(exec), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphDestroy(graph), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(GraphTest, "memset and memcpy nodes fill and copy memory, 1D and 2D") {
    constexpr std::size_t n = 64;
    const CUdeviceptr d = alloc(n * 4);
    std::vector<unsigned> host(n, 0);
    CUgraph graph = swcu::test::create_graph();
    const CUgraphNode fill = swcu::test::add_fill32(graph, d, 0xabcd1234u, n, ctx);
    const CUgraphNode out =
        swcu::test::add_copy(graph, swcu::test::address(host.data()), d, n * 4, ctx, {fill});
    CHECK(swcu::test::type_of(fill) == CU_GRAPH_NODE_TYPE_MEMSET);
    CHECK(swcu::test::type_of(out) == CU_GRAPH_NODE_TYPE_MEMCPY);
    CUDA_MEMSET_NODE_PARAMS fp{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemsetNodeGetParams(fill, &fp));
    CHECK(fp.value == 0xabcd1234u);
    CHECK(fp.width == n);
    CUDA_MEMCPY3D cp{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemcpyNodeGetParams(out, &cp));
    CHECK(cp.WidthInBytes == n * 4);
    CHECK(cp.srcDevice == d);

    // 2D: rows of 8 bytes out of rows of 16, with explicit memory types.
    std::vector<unsigned char> rows(4 * 8, 0);
    CUDA_MEMCPY3D p2{};
    p2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p2.srcDevice = d;
    p2.srcXInBytes = 4;
    p2.srcPitch = 16;
    p2.dstMemoryType = CU_MEMORYTYPE_HOST;
    p2.dstHost = rows.data();
    p2.dstPitch = 8;
    p2.WidthInBytes = 8;
    p2.Height = 4;
    p2.Depth = 1;
    CUgraphNode two_d = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemcpyNode(&two_d, graph, &out, 1, &p2, ctx));

    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(host == std::vector<unsigned>(n, 0xabcd1234u));
    CHECK(rows[0] == 0x34);
    CHECK(rows[31] == 0xab);

    // Parameters set on the graph apply to the next instantiation.
    fp.value = 7;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemsetNodeSetParams(fill, &fp));
    run(exec);
    CHECK(host[0] == 0xabcd1234u);
    const CUgraphExec second = swcu::test::instantiate(graph);
    run(second);
    CHECK(host == std::vector<unsigned>(n, 7));

    // What a node refuses.
    CUgraphNode bad = nullptr;
    CUDA_MEMSET_NODE_PARAMS odd = fp;
    odd.elementSize = 3;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemsetNode(&bad, graph, nullptr, 0, &odd, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    odd = fp;
    odd.width = n + 1;  // beyond the allocation
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemsetNode(&bad, graph, nullptr, 0, &odd, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    // Several slices without a pitch ("srcPitch must be greater than or equal to WidthInBytes +
    // srcXInBytes"), an array side that names no array (graph_array_copy_test.cpp has the
    // nodes that work).
    CUDA_MEMCPY3D deep = swcu::test::copy_1d(d, d, 4);
    deep.Depth = 2;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemcpyNode(&bad, graph, nullptr, 0, &deep, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMCPY3D array = swcu::test::copy_1d(d, d, 4);
    array.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemcpyNode(&bad, graph, nullptr, 0, &array, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMCPY3D nowhere = swcu::test::copy_1d(d, d, 4);
    nowhere.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    nowhere.srcDevice = 0x1000;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemcpyNode(&bad, graph, nullptr, 0, &nowhere, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphHostNodeGetParams(fill, nullptr), CUDA_ERROR_INVALID_VALUE);

    // Freed memory: the launch fails when it gets there, as on a GPU (sticky).
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(second));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
  }

  TEST_CASE_FIXTURE(GraphTest, "kernel nodes copy their arguments and run like cuLaunchKernel") {
    constexpr int n = 100;
    std::vector<float> x(n), y(n, 1.0f);
    std::iota(x.begin(), x.end(), 0.0f);
    CUdeviceptr dx = alloc(n * 4), dy = alloc(n * 4);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoD_v2(dx, x.data(), n * 4));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoD_v2(dy, y.data(), n * 4));
    float a = 2.0f;
    int count = n;
    void* args[] = {&a, &dx, &dy, &count};
    CUgraph graph = swcu::test::create_graph();
    CUgraphNode k = nullptr;
    const CUDA_KERNEL_NODE_PARAMS p = saxpy_params(args, n);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode(&k, graph, nullptr, 0, &p));
    a = 100.0f;  // the node copied the values
    CHECK(swcu::test::type_of(k) == CU_GRAPH_NODE_TYPE_KERNEL);
    CUDA_KERNEL_NODE_PARAMS back{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphKernelNodeGetParams(k, &back));
    CHECK(back.func == p.func);
    CHECK(back.gridDimX == 2);
    REQUIRE(back.kernelParams != nullptr);
    CHECK(*static_cast<float*>(back.kernelParams[0]) == 2.0f);
    CHECK(*static_cast<int*>(back.kernelParams[3]) == n);

    ctl.clear_launch_log();
    const CUgraphExec exec = swcu::test::instantiate(graph);
    CHECK(ctl.launch_log_size() == 0);
    run(exec);
    std::vector<float> result(n);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoH_v2(result.data(), dy, n * 4));
    for (int i = 0; i < n; ++i)
      REQUIRE(result[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i) + 1.0f);
    REQUIRE(ctl.launch_log_size() == 1);
    const swcu_launch logged = last_launch();
    CHECK(std::string(logged.kernel) == "saxpy");
    CHECK(logged.grid[0] == 2);
    CHECK(logged.block[0] == 64);
    CHECK(logged.stream == stream);
    run(exec);  // each replay is a launch of its own
    CHECK(ctl.launch_log_size() == 2);

    // The legacy ABI and a packed buffer through `extra`.
    struct {
      float a;
      int pad;
      CUdeviceptr x, y;
      int n;
    } packed{1.0f, 0, dx, dy, n};
    std::size_t size = 28;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CUDA_KERNEL_NODE_PARAMS_v1 v1{};
    v1.func = p.func;
    v1.gridDimX = v1.gridDimY = v1.gridDimZ = 1;
    v1.blockDimX = v1.blockDimY = v1.blockDimZ = 1;
    v1.extra = extra;
    CUgraphNode k1 = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode_v1(&k1, graph, nullptr, 0, &v1), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphKernelNodeGetParams(k1, &back));
    CHECK(back.kernelParams == nullptr);
    CHECK(back.extra != nullptr);

    // What a kernel node refuses.
    CUDA_KERNEL_NODE_PARAMS wrong = p;
    wrong.gridDimX = 0;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode(&k1, graph, nullptr, 0, &wrong),
                           CUDA_ERROR_INVALID_VALUE);
    wrong = p;
    wrong.blockDimX = 2048;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode(&k1, graph, nullptr, 0, &wrong),
                           CUDA_ERROR_INVALID_VALUE);
    wrong = p;
    wrong.func = reinterpret_cast<CUfunction>(&wrong);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode(&k1, graph, nullptr, 0, &wrong),
                           CUDA_ERROR_INVALID_VALUE);
    wrong = p;
    wrong.extra = extra;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddKernelNode(&k1, graph, nullptr, 0, &wrong),
                           CUDA_ERROR_INVALID_VALUE);  // both kernelParams and extra

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dy));
  }

  TEST_CASE_FIXTURE(GraphTest, "event nodes record and wait, child graphs and clones are copies") {
    // An event wait node holds the graph back until the event's work is done.
    CUstream other = swcu::test::create_stream();
    swcu::test::Gate gate;
    gate.start(ctx, other);
    CUevent e = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(e, other));
    int ran = 0;
    CUgraph graph = swcu::test::create_graph();
    CUgraphNode wait = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEventWaitNode(&wait, graph, nullptr, 0, e));
    CHECK(swcu::test::type_of(wait) == CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    const CUgraphNode host = swcu::test::add_host(graph, &count, &ran, {wait});
    CUevent done = swcu::test::create_event();
    CUgraphNode record = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEventRecordNode(&record, graph, &host, 1, done));
    CUevent got = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphEventRecordNodeGetEvent(record, &got));
    CHECK(got == done);
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, stream));
    CHECK(ran == 0);
    SWCU_TEST_CHECK_RESULT(api().cuEventQuery(done), CUDA_ERROR_NOT_READY);
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventSynchronize(done));
    CHECK(ran == 1);
    SWCU_TEST_CHECK_RESULT(api().cuEventQuery(done), CUDA_SUCCESS);

    // A child graph node holds a copy of the child; its graph is a handle of its own.
    CUgraph child = swcu::test::create_graph();
    (void)swcu::test::add_host(child, &count, &ran);
    CUgraphNode child_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddChildGraphNode(&child_node, graph, &record, 1, child));
    (void)swcu::test::add_host(child, &count, &ran);  // not in the node
    CUgraph embedded = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphChildGraphNodeGetGraph(child_node, &embedded));
    CHECK(embedded != child);
    CHECK(swcu::test::nodes_of(embedded).size() == 1);
    CHECK(ctl.live_handles(SWCU_GRAPH) == 2);  // an embedded graph is not a program's graph
    SWCU_TEST_CHECK_RESULT(gr().cuGraphDestroy(embedded), CUDA_ERROR_INVALID_VALUE);

    // A clone copies everything; its nodes map back to the original's.
    CUgraph clone = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphClone(&clone, graph));
    CHECK(swcu::test::nodes_of(clone).size() == 4);
    CHECK(swcu::test::edges_of(clone).size() == 3);
    CUgraphNode mapped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeFindInClone(&mapped, host, clone));
    CHECK(mapped != host);
    CHECK(swcu::test::type_of(mapped) == CU_GRAPH_NODE_TYPE_HOST);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphNodeFindInClone(&mapped, host, child),
                           CUDA_ERROR_INVALID_VALUE);

    const CUgraphExec cloned = swcu::test::instantiate(clone);
    run(cloned);
    CHECK(ran == 3);  // the host node and the child's one

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(cloned));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    for (CUgraph gph : {graph, child, clone}) SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(gph));
    api().cuEventDestroy_v2(e);
    api().cuEventDestroy_v2(done);
    api().cuStreamDestroy_v2(other);
  }

  TEST_CASE_FIXTURE(GraphTest, "instantiation validates its flags and the graph") {
    CUgraph graph = swcu::test::create_graph();
    int ran = 0;
    const CUgraphNode host = swcu::test::add_host(graph, &count, &ran);
    CUgraphExec exec = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiate(&exec, graph, 1ULL << 10),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphInstantiate(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD),
        CUDA_ERROR_INVALID_VALUE);  // only with parameters
    SWCU_TEST_CHECK_RESULT(
        gr().cuGraphInstantiate(&exec, graph,
                                CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiate(&exec, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    params.flags = CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiateWithParams(&exec, graph, &params),
                           CUDA_ERROR_INVALID_VALUE);  // a host node cannot run on the device
    CHECK(params.result_out == CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED);
    CHECK(params.hErrNode_out == host);
    params = {};
    params.flags =
        CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    params.hUploadStream = stream;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphInstantiateWithParams(&exec, graph, &params));
    CHECK(params.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
    CHECK(params.hErrNode_out == nullptr);
    cuuint64_t flags = 0;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecGetFlags(exec, &flags));
    CHECK(flags == CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);  // UPLOAD is not kept
    SWCU_TEST_CHECK_RESULT(gr().cuGraphUpload(exec, stream), CUDA_SUCCESS);
    CHECK(ran == 0);  // an upload runs nothing
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));

    // The legacy ABI with its error node and log.
    char log[16] = "x";
    CUgraphNode error_node = host;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphInstantiate_v1(&exec, graph, &error_node, log, sizeof log));
    CHECK(log[0] == '\0');
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
  }

  TEST_CASE_FIXTURE(GraphTest, "a whole-graph update takes new parameters or names what changed") {
    constexpr std::size_t n = 16;
    const CUdeviceptr d = alloc(n * 4);
    std::vector<unsigned> host(n);
    const auto build = [&](unsigned value) {
      CUgraph g = swcu::test::create_graph();
      const CUgraphNode f = swcu::test::add_fill32(g, d, value, n, ctx);
      (void)swcu::test::add_copy(g, swcu::test::address(host.data()), d, n * 4, ctx, {f});
      return g;
    };
    CUgraph first = build(1);
    const CUgraphExec exec = swcu::test::instantiate(first);
    CUgraph same = build(4);
    CUgraphExecUpdateResultInfo info{};
    info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, same, &info), CUDA_SUCCESS);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    run(exec);
    CHECK(host == std::vector<unsigned>(n, 4));

    CUgraph more = build(5);
    (void)swcu::test::add_empty(more);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, more, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CHECK(info.errorNode == nullptr);

    CUgraph kinds = swcu::test::create_graph();
    const CUgraphNode empty = swcu::test::add_empty(kinds);
    (void)swcu::test::add_copy(kinds, swcu::test::address(host.data()), d, n * 4, ctx, {empty});
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, kinds, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    CHECK(info.errorNode == empty);

    CUgraph edges = swcu::test::create_graph();  // the same nodes, the copy first
    const CUgraphNode fill2 = swcu::test::add_fill32(edges, d, 6, n, ctx);
    const CUgraphNode copy2 =
        swcu::test::add_copy(edges, swcu::test::address(host.data()), d, n * 4, ctx);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddDependencies(edges, &copy2, &fill2, nullptr, 1));
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, edges, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CHECK(info.errorNode == fill2);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphRemoveDependencies(edges, &copy2, &fill2, nullptr, 1));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddDependencies(edges, &fill2, &copy2, nullptr, 1));
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, edges, &info), CUDA_SUCCESS);

    // A copy whose source moves from device to host memory cannot be updated.
    std::vector<unsigned> source(n, 9);
    CUgraph moved = swcu::test::create_graph();
    const CUgraphNode fill3 = swcu::test::add_fill32(moved, d, 6, n, ctx);
    const CUgraphNode copy3 =
        swcu::test::add_copy(moved, swcu::test::address(host.data()),
                             swcu::test::address(source.data()), n * 4, ctx, {fill3});
    CUgraphNode error_node = nullptr;
    CUgraphExecUpdateResult result{};
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate_v1(exec, moved, &error_node, &result),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(result == CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
    CHECK(error_node == copy3);

    run(exec);
    CHECK(host == std::vector<unsigned>(n, 6));  // the last successful update
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    for (CUgraph g : {first, same, more, kinds, edges, moved}) {
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));
    }
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
  }

  TEST_CASE_FIXTURE(GraphTest, "per-node updates and disabled nodes change later launches only") {
    constexpr int n = 32;
    std::vector<float> ones(n, 1.0f);
    CUdeviceptr dx = alloc(n * 4), dy = alloc(n * 4);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoD_v2(dx, ones.data(), n * 4));
    float a = 2.0f;
    int count_n = n;
    void* args[] = {&a, &dx, &dy, &count_n};
    CUgraph graph = swcu::test::create_graph();
    CUDA_MEMSET_NODE_PARAMS zero{};
    zero.dst = dy;
    zero.elementSize = 4;
    zero.width = n;
    zero.height = 1;
    CUgraphNode fill = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemsetNode(&fill, graph, nullptr, 0, &zero, ctx));
    CUgraphNode kernel = nullptr;
    const CUDA_KERNEL_NODE_PARAMS kp = saxpy_params(args, n);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddKernelNode(&kernel, graph, &fill, 1, &kp));
    int first = 0, second = 0;
    const CUgraphNode host = swcu::test::add_host(graph, &count, &first, {kernel});
    const CUgraphExec exec = swcu::test::instantiate(graph);
    const auto y = [&] {
      std::vector<float> out(n);
      REQUIRE(api().cuMemcpyDtoH_v2(out.data(), dy, n * 4) == CUDA_SUCCESS);
      return out;
    };

    a = 5.0f;
    const CUDA_KERNEL_NODE_PARAMS kp5 = saxpy_params(args, n);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecKernelNodeSetParams(exec, kernel, &kp5));
    zero.value = 0x3f800000u;  // 1.0f
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecMemsetNodeSetParams(exec, fill, &zero, ctx));
    run(exec);
    CHECK(y() == std::vector<float>(n, 6.0f));
    CUDA_KERNEL_NODE_PARAMS back{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphKernelNodeGetParams(kernel, &back));
    CHECK(*static_cast<float*>(back.kernelParams[0]) == 2.0f);  // the graph's node is unchanged

    // A disabled node acts as an empty node.
    unsigned on = 7;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetEnabled(exec, kernel, &on));
    CHECK(on == 1);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeSetEnabled(exec, kernel, 0));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetEnabled(exec, kernel, &on));
    CHECK(on == 0);
    run(exec);
    CHECK(y() == std::vector<float>(n, 1.0f));
    CHECK(first == 2);

    // An update applies to launches made after it: one enqueued behind a gate keeps the old one.
    swcu::test::Gate gate;
    gate.start(ctx, stream);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, stream));
    const CUDA_HOST_NODE_PARAMS other{&count, &second};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecHostNodeSetParams(exec, host, &other));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeSetEnabled(exec, kernel, 1));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, stream));
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(stream));
    CHECK(first == 3);
    CHECK(second == 1);

    // What per-node updates refuse.
    CUDA_MEMSET_NODE_PARAMS taller = zero;
    taller.height = 2;
    taller.pitch = n * 4;
    taller.width = n / 2;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemsetNodeSetParams(exec, fill, &taller, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemsetNodeSetParams(exec, kernel, &zero, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // not a memset node
    CUgraph stranger = swcu::test::create_graph();
    const CUgraphNode foreign = swcu::test::add_fill32(stranger, dy, 0, n, ctx);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemsetNodeSetParams(exec, foreign, &zero, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // not a node of the instantiated graph
    SWCU_TEST_CHECK_RESULT(gr().cuGraphNodeSetEnabled(exec, foreign, 0), CUDA_ERROR_INVALID_VALUE);
    const CUDA_HOST_NODE_PARAMS null_fn{nullptr, nullptr};
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecHostNodeSetParams(exec, host, &null_fn),
                           CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(stranger));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dy));
  }

  TEST_CASE_FIXTURE(
      GraphTest, "user objects live while the program, a graph or an executable graph holds them") {
    struct Tracked {
      int destroyed = 0;
      CUresult driver_call = CUDA_SUCCESS;
      static void CUDA_CB destroy(void* p) {
        auto* t = static_cast<Tracked*>(p);
        ++t->destroyed;
        int count = 0;
        t->driver_call = api().cuDeviceGetCount(&count);  // not permitted from a destructor
      }
    } tracked;
    const auto& g = gr();
    CUuserObject object = nullptr;
    SWCU_TEST_CHECK_RESULT(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 1, 0),
                           CUDA_ERROR_INVALID_VALUE);  // the flag is required
    SWCU_TEST_CHECK_RESULT(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 0,
                                                CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        g.cuUserObjectCreate(&object, &tracked, nullptr, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
        CUDA_ERROR_INVALID_VALUE);

    SUBCASE("the program's references") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 2,
                                                     CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
      CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 1);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectRetain(object, 1));
      SWCU_TEST_CHECK_RESULT(g.cuUserObjectRelease(object, 4), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(g.cuUserObjectRetain(object, 0), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectRelease(object, 2));
      CHECK(tracked.destroyed == 0);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectRelease(object, 1));
      CHECK(tracked.destroyed == 1);
      CHECK(tracked.driver_call == CUDA_ERROR_NOT_PERMITTED);
      CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 0);
      SWCU_TEST_CHECK_RESULT(g.cuUserObjectRelease(object, 1), CUDA_ERROR_INVALID_VALUE);  // stale
    }

    SUBCASE("a graph's references: moved, released, cloned") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 1,
                                                     CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
      CUgraph graph = swcu::test::create_graph();
      SWCU_TEST_CHECK_RESULT(g.cuGraphRetainUserObject(graph, object, 1, 2),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphRetainUserObject(graph, object, 2, 0));
      SWCU_TEST_CHECK_RESULT(g.cuGraphReleaseUserObject(graph, object, 4),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphReleaseUserObject(graph, object, 2));
      CUgraph clone = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphClone(&clone, graph));  // takes its own reference
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      CHECK(tracked.destroyed == 0);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(clone));
      CHECK(tracked.destroyed == 1);
      CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 0);
    }

    SUBCASE("an executable graph's references outlive its graph") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 1,
                                                     CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
      CUgraph graph = swcu::test::create_graph();
      CUgraph child = swcu::test::create_graph();
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphRetainUserObject(child, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
      CUgraphNode node = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddChildGraphNode(&node, graph, nullptr, 0, child));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(child));  // the node's copy holds a reference
      CHECK(tracked.destroyed == 0);
      const CUgraphExec exec = swcu::test::instantiate(graph);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      CHECK(tracked.destroyed == 0);
      CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 1);
      run(exec);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
      CHECK(tracked.destroyed == 1);
    }

    SUBCASE("a launch in flight keeps them after its executable graph is destroyed") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 1,
                                                     CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
      CUgraph graph = swcu::test::create_graph();
      int ran = 0;
      (void)swcu::test::add_host(graph, &count, &ran);
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
      const CUgraphExec exec = swcu::test::instantiate(graph);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      swcu::test::Gate gate;
      gate.start(ctx, stream);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
      CHECK(tracked.destroyed == 0);
      CHECK(ran == 0);
      gate.finish();
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(stream));
      CHECK(ran == 1);
      CHECK(tracked.destroyed == 1);
      CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 0);
    }

    SUBCASE("an update replaces the executable graph's references") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(&object, &tracked, &Tracked::destroy, 1,
                                                     CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
      CUgraph graph = swcu::test::create_graph();
      (void)swcu::test::add_empty(graph);
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
      const CUgraphExec exec = swcu::test::instantiate(graph);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      CUgraph plain = swcu::test::create_graph();
      (void)swcu::test::add_empty(plain);
      CUgraphExecUpdateResultInfo info{};
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecUpdate(exec, plain, &info));
      CHECK(tracked.destroyed == 1);  // nothing held it any more
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(plain));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    }
    CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 0);
  }
}
