// Stream capture into graphs: chains of nodes, what a capture refuses, forks and joins, changed
// dependencies and captures that add to a graph.
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
  TEST_CASE_FIXTURE(GraphTest, "a capturing stream records its operations as a chain of nodes") {
    const auto& g = gr();
    constexpr int n = 64;
    std::vector<float> x(n, 1.0f), y(n, 0.0f);
    CUdeviceptr dx = alloc(n * 4), dy = alloc(n * 4);
    int host_runs = 0;
    CUstreamCaptureStatus status{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);

    SWCU_TEST_CHECK_RESULT(
        g.cuStreamBeginCapture(stream, swcu::test::invalid_enum<CUstreamCaptureMode>(7)),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_CHECK_RESULT(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                           CUDA_ERROR_INVALID_VALUE);  // already capturing
    CHECK(ctl.live_handles(SWCU_GRAPH) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyHtoDAsync_v2(dx, x.data(), n * 4, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(dy, 0x40000000u, n, stream));  // 2.0f
    float a = 3.0f;
    int count_n = n;
    void* args[] = {&a, &dx, &dy, &count_n};
    ctl.clear_launch_log();
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(function(m, "saxpy"), 1, 1, 1, 64, 1,
                                                               1, 0, stream, args, nullptr));
    CHECK(ctl.launch_log_size() == 0);  // captured, not launched
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoHAsync_v2(y.data(), dy, n * 4, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &host_runs));
    CHECK(host_runs == 0);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    cuuint64_t id = 0, id2 = 0;
    CUgraph capturing = nullptr;
    const CUgraphNode* deps = nullptr;
    const CUgraphEdgeData* edge_data = nullptr;
    std::size_t ndeps = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuStreamGetCaptureInfo(stream, &status, &id, &capturing, &deps, &edge_data, &ndeps));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK(id != 0);
    REQUIRE(ndeps == 1);
    CHECK(swcu::test::type_of(deps[0]) == CU_GRAPH_NODE_TYPE_HOST);
    CHECK(edge_data[0].type == 0);
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuStreamGetCaptureInfo_v2(stream, &status, &id2, nullptr, nullptr, nullptr));
    CHECK(id2 == id);
    SWCU_TEST_CHECK_RESULT(
        g.cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr, nullptr, &edge_data, nullptr),
        CUDA_ERROR_INVALID_VALUE);

    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    CHECK(graph == capturing);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
    const auto nodes = swcu::test::nodes_of(graph);
    REQUIRE(nodes.size() == 5);
    CHECK(swcu::test::type_of(nodes[0]) == CU_GRAPH_NODE_TYPE_MEMCPY);
    CHECK(swcu::test::type_of(nodes[1]) == CU_GRAPH_NODE_TYPE_MEMSET);
    CHECK(swcu::test::type_of(nodes[2]) == CU_GRAPH_NODE_TYPE_KERNEL);
    CHECK(swcu::test::type_of(nodes[3]) == CU_GRAPH_NODE_TYPE_MEMCPY);
    CHECK(swcu::test::type_of(nodes[4]) == CU_GRAPH_NODE_TYPE_HOST);
    CHECK(swcu::test::edges_of(graph).size() == 4);  // a chain
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph), CUDA_ERROR_INVALID_VALUE);

    x.assign(n, 10.0f);  // a captured copy reads its source when it runs
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(y == std::vector<float>(n, 32.0f));
    CHECK(host_runs == 1);
    CHECK(ctl.launch_log_size() == 1);

    // The legacy stream cannot capture; a per-thread stream can.
    SWCU_TEST_CHECK_RESULT(g.cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
                           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture_ptsz(nullptr, CU_STREAM_CAPTURE_MODE_RELAXED));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch_ptsz(exec, nullptr));  // a child graph node
    CUgraph pt = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture_ptsz(nullptr, &pt));
    REQUIRE(swcu::test::nodes_of(pt).size() == 1);
    CHECK(swcu::test::type_of(swcu::test::nodes_of(pt)[0]) == CU_GRAPH_NODE_TYPE_GRAPH);
    CHECK(host_runs == 1);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(pt));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(dy));
  }

  TEST_CASE_FIXTURE(GraphTest, "what a capture refuses invalidates it") {
    const auto& g = gr();
    CUstreamCaptureStatus status{};
    CUgraph graph = nullptr;
    int ran = 0;

    SUBCASE("synchronizing or querying the capturing stream") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &ran));
      SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
      CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      SWCU_TEST_CHECK_RESULT(api().cuLaunchHostFunc(stream, &count, &ran),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(stream), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      graph = reinterpret_cast<CUgraph>(&ran);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CHECK(graph == nullptr);
      SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_SUCCESS);  // usable again
      CHECK(ran == 0);
    }

    SUBCASE("the legacy stream while a blocking stream captures") {
      CUstream blocking = swcu::test::create_stream(CU_STREAM_DEFAULT);
      const CUdeviceptr d = alloc(64);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
      SWCU_TEST_CHECK_RESULT(g.cuStreamIsCapturing(CU_STREAM_LEGACY, &status),
                             CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(blocking, &status));
      CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);  // asking does not invalidate
      SWCU_TEST_CHECK_RESULT(api().cuMemsetD8_v2(d, 1, 64), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(blocking, &status));
      CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(blocking, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      // A non-blocking stream's capture leaves the legacy stream alone.
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(api().cuMemsetD8_v2(d, 1, 64), CUDA_SUCCESS);
      SWCU_TEST_CHECK_RESULT(api().cuLaunchHostFunc(CU_STREAM_LEGACY, &count, &ran), CUDA_SUCCESS);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      CHECK(ran == 1);
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
      api().cuStreamDestroy_v2(blocking);
    }

    SUBCASE("a dependency on work outside the capture") {
      CUevent outside = swcu::test::create_event();
      SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(outside, stream));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(api().cuStreamWaitEvent(stream, outside, 0),
                             CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      // As an external wait it is a node.
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(stream, outside, CU_EVENT_WAIT_EXTERNAL));
      SWCU_TEST_REQUIRE_SUCCESS(
          api().cuEventRecordWithFlags(outside, stream, CU_EVENT_RECORD_EXTERNAL));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
      const auto nodes = swcu::test::nodes_of(graph);
      REQUIRE(nodes.size() == 2);
      CHECK(swcu::test::type_of(nodes[0]) == CU_GRAPH_NODE_TYPE_WAIT_EVENT);
      CHECK(swcu::test::type_of(nodes[1]) == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      SWCU_TEST_CHECK_RESULT(api().cuStreamWaitEvent(stream, outside, CU_EVENT_WAIT_EXTERNAL),
                             CUDA_ERROR_INVALID_VALUE);  // only while capturing
      api().cuEventDestroy_v2(outside);
    }

    SUBCASE("an event recorded in a capture cannot be queried") {
      CUevent inside = swcu::test::create_event();
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(inside, stream));
      SWCU_TEST_CHECK_RESULT(api().cuEventQuery(inside), CUDA_ERROR_CAPTURED_EVENT);
      SWCU_TEST_CHECK_RESULT(api().cuEventSynchronize(inside), CUDA_ERROR_CAPTURED_EVENT);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      SWCU_TEST_CHECK_RESULT(api().cuEventQuery(inside), CUDA_ERROR_CAPTURED_EVENT);
      SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(inside, stream));  // an ordinary record again
      SWCU_TEST_CHECK_RESULT(api().cuEventSynchronize(inside), CUDA_SUCCESS);
      api().cuEventDestroy_v2(inside);
    }

    SUBCASE("ending from another thread, or in another stream") {
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
      CUresult other_thread = CUDA_SUCCESS;
      std::thread([&] { other_thread = g.cuStreamEndCapture(stream, &graph); }).join();
      CHECK(swcu::test::error_name(other_thread) ==
            swcu::test::error_name(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
      CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
      std::thread([&] { other_thread = g.cuStreamEndCapture(stream, &graph); }).join();
      CHECK(other_thread == CUDA_SUCCESS);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));

      CUstream joined = swcu::test::create_stream();
      CUevent fork = swcu::test::create_event();
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(joined, fork, 0));
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(joined, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));  // nothing forked: joined
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
      api().cuEventDestroy_v2(fork);
      api().cuStreamDestroy_v2(joined);
    }

    SUBCASE("callbacks, and destroying the capturing stream") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(api().cuStreamAddCallback(
                                 stream, [](CUstream, CUresult, void*) {}, nullptr, 0),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      CUstream doomed = swcu::test::create_stream();
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(doomed, CU_STREAM_CAPTURE_MODE_GLOBAL));
      CHECK(ctl.live_handles(SWCU_GRAPH) == 2);
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(doomed));  // its capture goes with it
      CHECK(ctl.live_handles(SWCU_GRAPH) == 1);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    CHECK(ctl.live_handles(SWCU_GRAPH) == 0);
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "a capture spreads to streams that wait on its events and joins back") {
    const auto& g = gr();
    Order order;
    CUstream side = swcu::test::create_stream();
    CUevent fork = swcu::test::create_event(), join = swcu::test::create_event();
    CUgraph graph = nullptr;
    CUstreamCaptureStatus status{};

    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(1)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(side, fork, 0));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(side, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(side, &Order::run, order.mark(2)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(3)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(join, side));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(stream, join, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(4)));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(side, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
    CHECK(order.seen.empty());

    const auto nodes = swcu::test::nodes_of(graph);
    REQUIRE(nodes.size() == 4);  // 1 -> {2, 3} -> 4
    using Edge = std::pair<CUgraphNode, CUgraphNode>;
    CHECK(swcu::test::edges_of(graph) == std::vector<Edge>{{nodes[0], nodes[1]},
                                                           {nodes[0], nodes[2]},
                                                           {nodes[2], nodes[3]},
                                                           {nodes[1], nodes[3]}});
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(order.seen == std::vector{1, 2, 3, 4});
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));

    // Forked and never joined.
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(side, fork, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(side, &Order::run, order.mark(5)));
    graph = reinterpret_cast<CUgraph>(&order);
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                           CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    CHECK(graph == nullptr);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(side, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);

    // Two captures cannot merge.
    CUstream third = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(third, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
    SWCU_TEST_CHECK_RESULT(api().cuStreamWaitEvent(third, fork, 0),
                           CUDA_ERROR_STREAM_CAPTURE_MERGE);
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                           CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(third, &graph),
                           CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(ctl.live_handles(SWCU_GRAPH) == 0);

    for (CUevent e : {fork, join}) api().cuEventDestroy_v2(e);
    for (CUstream s : {side, third}) api().cuStreamDestroy_v2(s);
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "capture dependencies can be changed and captures can add to a graph") {
    const auto& g = gr();
    CUgraph graph = nullptr;
    SWCU_TEST_CHECK_RESULT(g.cuStreamUpdateCaptureDependencies(stream, nullptr, nullptr, 0, 0),
                           CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    int ran = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &ran));
    CUstreamCaptureStatus status{};
    CUgraph capturing = nullptr;
    const CUgraphNode* deps = nullptr;
    std::size_t ndeps = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuStreamGetCaptureInfo(stream, &status, nullptr, &capturing, &deps, nullptr, &ndeps));
    REQUIRE(ndeps == 1);
    const CUgraphNode first = deps[0];
    // A node added to the graph by hand, then made the stream's dependency.
    CUgraphNode manual = swcu::test::add_empty(capturing);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamUpdateCaptureDependencies(
        stream, &manual, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr, &ndeps));
    CHECK(ndeps == 2);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamUpdateCaptureDependencies(
        stream, &manual, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    SWCU_TEST_CHECK_RESULT(g.cuStreamUpdateCaptureDependencies(stream, &manual, nullptr, 1, 5),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(capturing), CUDA_ERROR_INVALID_VALUE);  // in use
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroyNode(manual), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &ran));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    const auto nodes = swcu::test::nodes_of(graph);
    REQUIRE(nodes.size() == 3);
    using Edge = std::pair<CUgraphNode, CUgraphNode>;
    CHECK(swcu::test::edges_of(graph) == std::vector<Edge>{{manual, nodes[2]}});
    CHECK(nodes[0] == first);

    // Capturing into an existing graph, after one of its nodes.
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCaptureToGraph(stream, graph, &first, nullptr, 1,
                                                            CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &ran));
    CUgraph same = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &same));
    CHECK(same == graph);
    CHECK(swcu::test::nodes_of(graph).size() == 4);
    CHECK(swcu::test::edges_of(graph).size() == 2);
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(ran == 3);

    // The thread's capture mode.
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuThreadExchangeStreamCaptureMode(&mode));
    CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuThreadExchangeStreamCaptureMode(&mode));
    CHECK(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
    mode = swcu::test::invalid_enum<CUstreamCaptureMode>(9);
    SWCU_TEST_CHECK_RESULT(g.cuThreadExchangeStreamCaptureMode(&mode), CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
  }
}
