// Stream capture as NVIDIA's driver does it: capturing into conditional bodies, destroying a
// forked stream that joined back, and ':async' fault rules on captured calls.
#include <string>
#include <vector>

#include "graph_fixture.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::api;
using swcu::test::count;
using swcu::test::gr;
using swcu::test::mod;
using swcu::test::Order;

// A host node that sets a conditional handle's value while the graph runs.
struct Setter {
  CUgraphConditionalHandle handle = 0;
  unsigned value = 0;
  static void CUDA_CB run(void* p) {
    auto* s = static_cast<Setter*>(p);
    REQUIRE(swcu::test::control().set_conditional(s->handle, s->value) == 0);
  }
};

// The graph fixture, with conditional nodes and captures into a given graph.
struct CaptureTest : swcu::test::GraphTest {
  // A conditional node of `graph` after `deps`; its bodies in `bodies`.
  CUgraphNode add_conditional(CUgraph graph, CUgraphConditionalHandle cond,
                              CUgraphConditionalNodeType type, unsigned size,
                              std::vector<CUgraphNode> deps, std::vector<CUgraph>& bodies) {
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = cond;
    p.conditional.type = type;
    p.conditional.size = size;
    p.conditional.ctx = ctx;
    CUgraphNode node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphAddNode(&node, graph, deps.data(), nullptr, deps.size(), &p));
    bodies.assign(p.conditional.phGraph_out, p.conditional.phGraph_out + size);
    return node;
  }
  // Captures `work(stream)` into `body` with cuStreamBeginCaptureToGraph.
  template <class Work>
  void capture_into(CUgraph body, Work work) {
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamBeginCaptureToGraph(stream, body, nullptr, nullptr, 0,
                                                               CU_STREAM_CAPTURE_MODE_GLOBAL));
    work(stream);
    CUgraph out = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamEndCapture(stream, &out));
    CHECK(out == body);
  }
};

}  // namespace

TEST_SUITE("stream capture") {
  // CUDA_CONDITIONAL_NODE_PARAMS::phGraph_out: "These graphs may be populated using graph node
  // creation APIs or cuStreamBeginCaptureToGraph", and their allowed node types are "kernel
  // nodes, empty nodes, child graphs, memsets, memcopies, and conditionals".
  TEST_CASE_FIXTURE(CaptureTest, "a conditional body is built by capture: if and else bodies") {
    const auto& g = gr();
    CUgraph graph = swcu::test::create_graph();
    CUgraphConditionalHandle cond = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
    Setter setter{cond, 1};
    const CUgraphNode set = swcu::test::add_host(graph, &Setter::run, &setter);
    std::vector<CUgraph> bodies;
    (void)add_conditional(graph, cond, CU_GRAPH_COND_TYPE_IF, 2, {set}, bodies);
    const CUdeviceptr d = alloc(16);
    const CUdeviceptr e = alloc(16);
    capture_into(bodies[0], [&](CUstream s) {
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 1, 4, s));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoDAsync_v2(e, d, 16, s));
    });
    capture_into(bodies[1], [&](CUstream s) {
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 2, 4, s));
    });
    const auto then_nodes = swcu::test::nodes_of(bodies[0]);
    REQUIRE(then_nodes.size() == 2);
    CHECK(swcu::test::type_of(then_nodes[0]) == CU_GRAPH_NODE_TYPE_MEMSET);
    CHECK(swcu::test::type_of(then_nodes[1]) == CU_GRAPH_NODE_TYPE_MEMCPY);
    CHECK(swcu::test::edges_of(bodies[0]).size() == 1);

    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 1));
    CHECK(read32(e, 4) == std::vector<unsigned>(4, 1));
    setter.value = 0;  // the else body
    run(exec);
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 2));
    CHECK(read32(e, 4) == std::vector<unsigned>(4, 1));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    for (CUdeviceptr p : {d, e}) SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(p));
  }

  TEST_CASE_FIXTURE(CaptureTest, "a while body built by capture runs while its kernel says so") {
    const auto& g = gr();
    struct Loop {
      CUgraphConditionalHandle handle = 0;
      int remaining = 0;
      int runs = 0;
      static void kernel(const swcu_launch*, void* user) {  // counts down, sets the condition
        auto* l = static_cast<Loop*>(user);
        ++l->runs;
        --l->remaining;
        REQUIRE(swcu::test::control().set_conditional(l->handle, l->remaining > 0 ? 1 : 0) == 0);
      }
    } loop;
    REQUIRE(ctl.register_kernel("no_params", &Loop::kernel, &loop) == 0);
    const CUfunction kernel = function(m, "no_params");
    CUgraph graph = swcu::test::create_graph();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphConditionalHandleCreate(&loop.handle, graph, ctx, 1,
                                                               CU_GRAPH_COND_ASSIGN_DEFAULT));
    std::vector<CUgraph> bodies;
    (void)add_conditional(graph, loop.handle, CU_GRAPH_COND_TYPE_WHILE, 1, {}, bodies);
    const CUdeviceptr d = alloc(16);
    capture_into(bodies[0], [&](CUstream s) {
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 9, 4, s));
      SWCU_TEST_REQUIRE_SUCCESS(
          mod().cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr));
    });
    const auto nodes = swcu::test::nodes_of(bodies[0]);
    REQUIRE(nodes.size() == 2);
    CHECK(swcu::test::type_of(nodes[1]) == CU_GRAPH_NODE_TYPE_KERNEL);

    const CUgraphExec exec = swcu::test::instantiate(graph);
    loop.remaining = 3;
    run(exec);
    CHECK(loop.runs == 3);
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 9));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
    ctl.register_kernel("no_params", nullptr, nullptr);
  }

  // How a conditional node is usually made inside a captured graph: the capturing graph gets
  // the node by hand after the stream's dependencies, a second stream captures its body, the
  // first stream goes on after the node.
  TEST_CASE_FIXTURE(CaptureTest, "a body is captured while its parent graph is being captured") {
    const auto& g = gr();
    Order order;
    CUstream side = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(1)));
    CUstreamCaptureStatus status{};
    CUgraph capturing = nullptr;
    const CUgraphNode* deps = nullptr;
    std::size_t ndeps = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuStreamGetCaptureInfo(stream, &status, nullptr, &capturing, &deps, nullptr, &ndeps));
    CUgraphConditionalHandle cond = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphConditionalHandleCreate(&cond, capturing, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    std::vector<CUgraph> bodies;
    CUgraphNode node = add_conditional(capturing, cond, CU_GRAPH_COND_TYPE_IF, 1,
                                       std::vector<CUgraphNode>(deps, deps + ndeps), bodies);
    const CUdeviceptr d = alloc(16);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCaptureToGraph(side, bodies[0], nullptr, nullptr, 0,
                                                            CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 5, 4, side));
    SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(capturing),
                           CUDA_ERROR_INVALID_VALUE);  // being captured
    CUgraph body = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(side, &body));
    CHECK(body == bodies[0]);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamUpdateCaptureDependencies(
        stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(2)));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    CHECK(graph == capturing);
    CHECK(swcu::test::nodes_of(graph).size() == 3);

    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(order.seen == std::vector{1, 2});
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 5));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
    api().cuStreamDestroy_v2(side);
  }

  TEST_CASE_FIXTURE(CaptureTest, "a capture into a body keeps to the node kinds a body allows") {
    const auto& g = gr();
    CUgraph graph = swcu::test::create_graph();
    CUgraphConditionalHandle cond = 0;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 1, 0));
    std::vector<CUgraph> bodies;
    (void)add_conditional(graph, cond, CU_GRAPH_COND_TYPE_IF, 1, {}, bodies);
    int ran = 0;
    CUgraph out = nullptr;

    SUBCASE("a host function invalidates the capture") {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCaptureToGraph(stream, bodies[0], nullptr, nullptr,
                                                              0, CU_STREAM_CAPTURE_MODE_GLOBAL));
      // While the body captures, its graph cannot be instantiated or destroyed.
      CUgraphExec exec = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphInstantiate(&exec, graph, 0), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(g.cuGraphDestroy(graph), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(api().cuLaunchHostFunc(stream, &count, &ran),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      CUstreamCaptureStatus status{};
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
      CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &out),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CHECK(swcu::test::nodes_of(bodies[0]).empty());
    }

    SUBCASE("stream-ordered allocation and external event nodes are refused too") {
      CUdeviceptr p = 0;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCaptureToGraph(stream, bodies[0], nullptr, nullptr,
                                                              0, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(api().cuMemAllocAsync(&p, 64, stream),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &out),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CUevent ev = swcu::test::create_event();
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCaptureToGraph(stream, bodies[0], nullptr, nullptr,
                                                              0, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(api().cuEventRecordWithFlags(ev, stream, CU_EVENT_RECORD_EXTERNAL),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &out),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CHECK(swcu::test::nodes_of(bodies[0]).empty());
      api().cuEventDestroy_v2(ev);
    }

    SUBCASE("a child graph node's graph is not captured into") {
      CUgraph child = swcu::test::create_graph();
      CUgraphNode child_node = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphAddChildGraphNode(&child_node, bodies[0], nullptr, 0, child));
      CUgraph embedded = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphChildGraphNodeGetGraph(child_node, &embedded));
      SWCU_TEST_CHECK_RESULT(g.cuStreamBeginCaptureToGraph(stream, embedded, nullptr, nullptr, 0,
                                                           CU_STREAM_CAPTURE_MODE_GLOBAL),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(child));
    }
    CHECK(ran == 0);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
  }

  // A forked stream that joined back can go: the capture stays active and ends with its work.
  TEST_CASE_FIXTURE(CaptureTest, "destroying a forked stream that joined back keeps the capture") {
    const auto& g = gr();
    Order order;
    CUstream side = swcu::test::create_stream();
    CUevent fork = swcu::test::create_event(), join = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(1)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(side, fork, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(side, &Order::run, order.mark(2)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(join, side));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(stream, join, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(side));
    CUstreamCaptureStatus status{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(3)));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    CHECK(swcu::test::nodes_of(graph).size() == 3);  // the forked work is in the graph
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(order.seen == std::vector{1, 2, 3});
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));

    // Not joined: the driver API reference does not say; this driver invalidates the capture.
    CUstream unjoined = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(fork, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitEvent(unjoined, fork, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(unjoined, &Order::run, order.mark(4)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(unjoined));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamIsCapturing(stream, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                           CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(ctl.live_handles(SWCU_GRAPH) == 0);
    for (CUevent e : {fork, join}) api().cuEventDestroy_v2(e);
  }

  // An ':async' rule fails the operation a call enqueues when it executes; a captured call's
  // operation is its node, which executes when a launch runs it.
  TEST_CASE_FIXTURE(CaptureTest,
                    "an async fault on a captured call fails the launches that run it") {
    const auto& g = gr();
    const CUdeviceptr d = alloc(16);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32_v2(d, 0, 4));
    int ran = 0;
    REQUIRE(ctl.add_fault_rule("cuMemsetD32Async:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 7, 4, stream));  // captured, not failed
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &count, &ran));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    ctl.clear_fault_rules();
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));  // asynchronous: the launch succeeds
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_SUCCESS);  // reported once
    CHECK(ran == 0);  // the launch stopped there
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 0));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));  // every run of the node fails
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_FAILED);
    // A graph with the same work captured without the rule runs.
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD32Async(d, 7, 4, stream));
    CUgraph clean = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &clean));
    const CUgraphExec clean_exec = swcu::test::instantiate(clean);
    run(clean_exec);
    CHECK(read32(d, 4) == std::vector<unsigned>(4, 7));
    for (CUgraphExec e : {exec, clean_exec}) SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(e));
    for (CUgraph gr_ : {graph, clean}) SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(gr_));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async sticky fault on a captured call breaks the context when it runs") {
    const auto& g = gr();
    const CUcontext ctx = swcu::test::create_context();
    const CUstream s = swcu::test::create_stream();
    int ran = 0;
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_ILLEGAL_ADDRESS:async:sticky") == 0);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(s, &count, &ran));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(s, &graph));
    ctl.clear_fault_rules();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());  // nothing ran yet: the context is fine
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, s));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
    CHECK(ran == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));  // reclaims the stream, graph, exec
  }
}
