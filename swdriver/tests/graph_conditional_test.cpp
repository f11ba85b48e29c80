// Conditional nodes, memory nodes, DOT output, reclaiming with a context, graph launches as
// stream operations, and deferred execution.
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
  TEST_CASE_FIXTURE(GraphTest,
                    "conditional nodes run their bodies if or while their condition holds") {
    const auto& g = gr();
    struct Loop {
      CUgraphConditionalHandle handle = 0;
      int remaining = 0;
      int runs = 0;
      static void kernel(const swcu_launch*, void* user) {  // decrements, then sets the condition
        auto* l = static_cast<Loop*>(user);
        ++l->runs;
        --l->remaining;
        REQUIRE(swcu::test::control().set_conditional(l->handle, l->remaining > 0 ? 1 : 0) == 0);
      }
    } loop;
    REQUIRE(ctl.register_kernel("no_params", &Loop::kernel, &loop) == 0);
    const CUfunction body_kernel = function(m, "no_params");
    CUgraphConditionalHandle cond = 0;
    CUgraph graph = swcu::test::create_graph();
    SWCU_TEST_CHECK_RESULT(g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 0, 2),
                           CUDA_ERROR_INVALID_VALUE);

    SUBCASE("while") {
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
      loop.handle = cond;
      CUgraphNodeParams p{};
      p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
      p.conditional.handle = cond;
      p.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
      p.conditional.size = 1;
      p.conditional.ctx = ctx;
      CUgraphNode node = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddNode(&node, graph, nullptr, nullptr, 0, &p));
      CHECK(swcu::test::type_of(node) == CU_GRAPH_NODE_TYPE_CONDITIONAL);
      REQUIRE(p.conditional.phGraph_out != nullptr);
      const CUgraph body = p.conditional.phGraph_out[0];
      CUDA_KERNEL_NODE_PARAMS k{};
      k.func = body_kernel;
      k.gridDimX = k.gridDimY = k.gridDimZ = 1;
      k.blockDimX = k.blockDimY = k.blockDimZ = 1;
      CUgraphNode kn = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddKernelNode(&kn, body, nullptr, 0, &k));
      int ran = 0;
      const CUDA_HOST_NODE_PARAMS host{&count, &ran};
      CUgraphNode hn = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddHostNode(&hn, body, nullptr, 0, &host),
                             CUDA_ERROR_INVALID_VALUE);  // not in a body
      CUgraph clone = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphClone(&clone, graph), CUDA_ERROR_INVALID_VALUE);

      const CUgraphExec exec = swcu::test::instantiate(graph);
      CUgraphExec second = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphInstantiate(&second, graph, 0), CUDA_ERROR_INVALID_VALUE);
      loop.remaining = 3;
      run(exec);
      CHECK(loop.runs == 3);
      loop.remaining = 2;  // the default (1) applies again at each launch
      run(exec);
      CHECK(loop.runs == 5);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    }

    SUBCASE("if, with a host node setting the condition") {
      SWCU_TEST_REQUIRE_SUCCESS(
          g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
      struct Setter {
        CUgraphConditionalHandle handle;
        unsigned value;
        int result = 1;
        static void CUDA_CB run(void* p) {
          auto* s = static_cast<Setter*>(p);
          s->result = swcu::test::control().set_conditional(s->handle, s->value);
        }
      } setter{cond, 1};
      const CUgraphNode set = swcu::test::add_host(graph, &Setter::run, &setter);
      CUgraphNodeParams p{};
      p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
      p.conditional.handle = cond;
      p.conditional.type = CU_GRAPH_COND_TYPE_IF;
      p.conditional.size = 2;  // an else branch too
      p.conditional.ctx = ctx;
      CUgraphNode node = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddNode(&node, graph, &set, nullptr, 1, &p));
      const CUdeviceptr d = alloc(16);
      (void)swcu::test::add_fill32(p.conditional.phGraph_out[0], d, 1, 4, ctx);
      (void)swcu::test::add_fill32(p.conditional.phGraph_out[1], d, 2, 4, ctx);
      const CUgraphExec exec = swcu::test::instantiate(graph);
      run(exec);
      CHECK(setter.result == 0);
      CHECK(read32(d, 4) == std::vector<unsigned>(4, 1));
      setter.value = 0;
      run(exec);
      CHECK(read32(d, 4) == std::vector<unsigned>(4, 2));
      // Outside a graph launch there is nothing to set.
      CHECK(ctl.set_conditional(cond, 1) == -1);
      CHECK(std::string(ctl.last_error()).find("set_conditional") != std::string::npos);
      // A handle of another context, a size that the type does not allow.
      p.conditional.size = 3;
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddNode(&node, graph, nullptr, nullptr, 0, &p),
                             CUDA_ERROR_INVALID_VALUE);
      p.conditional.size = 1;
      p.conditional.handle = cond + 1000;
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddNode(&node, graph, nullptr, nullptr, 0, &p),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
    }
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    ctl.register_kernel("no_params", nullptr, nullptr);
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "memory nodes give an address that is usable between alloc and free") {
    const auto& g = gr();
    constexpr std::size_t n = 32;
    std::vector<unsigned> host(n);
    CUgraph graph = swcu::test::create_graph();
    CUDA_MEM_ALLOC_NODE_PARAMS ap{};
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    ap.bytesize = n * 4;
    CUgraphNode alloc_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &ap));
    const CUdeviceptr d = ap.dptr;
    REQUIRE(d != 0);
    CUDA_MEM_ALLOC_NODE_PARAMS back{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphMemAllocNodeGetParams(alloc_node, &back));
    CHECK(back.dptr == d);
    CHECK(back.bytesize == n * 4);
    SWCU_TEST_CHECK_RESULT(api().cuMemsetD8_v2(d, 0, n), CUDA_ERROR_INVALID_VALUE);  // not yet
    const CUgraphNode fill = swcu::test::add_fill32(graph, d, 0x77, n, ctx, {alloc_node});
    const CUgraphNode out =
        swcu::test::add_copy(graph, swcu::test::address(host.data()), d, n * 4, ctx, {fill});

    SUBCASE("freed in the graph") {
      CUgraphNode free_node = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddMemFreeNode(&free_node, graph, &out, 1, d));
      CUdeviceptr freed = 0;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphMemFreeNodeGetParams(free_node, &freed));
      CHECK(freed == d);
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddMemFreeNode(&free_node, graph, &out, 1, d),
                             CUDA_ERROR_INVALID_VALUE);  // twice
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddMemFreeNode(&free_node, graph, nullptr, 0, d + 4),
                             CUDA_ERROR_INVALID_VALUE);  // not an allocation's address
      CUgraph clone = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphClone(&clone, graph), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(g.cuGraphDestroyNode(fill), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(g.cuGraphRemoveDependencies(graph, &alloc_node, &fill, nullptr, 1),
                             CUDA_ERROR_INVALID_VALUE);
      CUgraph parent = swcu::test::create_graph();
      CUgraphNode child = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphAddChildGraphNode(&child, parent, nullptr, 0, graph),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(parent));

      const CUgraphExec exec = swcu::test::instantiate(graph);
      CUgraphExec second = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuGraphInstantiate(&second, graph, 0), CUDA_ERROR_INVALID_VALUE);
      run(exec);
      CHECK(host == std::vector<unsigned>(n, 0x77));
      SWCU_TEST_CHECK_RESULT(api().cuMemsetD8_v2(d, 0, n),
                             CUDA_ERROR_INVALID_VALUE);  // freed again
      host.assign(n, 0);
      run(exec);  // each launch allocates and frees again
      CHECK(host == std::vector<unsigned>(n, 0x77));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
      const CUgraphExec again = swcu::test::instantiate(graph);  // the first one is gone
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(again));
    }

    SUBCASE("left allocated by a launch") {
      const CUgraphExec exec = swcu::test::instantiate(graph);
      run(exec);
      std::vector<unsigned> after(n);
      SWCU_TEST_CHECK_RESULT(api().cuMemcpyDtoH_v2(after.data(), d, n * 4), CUDA_SUCCESS);
      CHECK(after == std::vector<unsigned>(n, 0x77));
      SWCU_TEST_CHECK_RESULT(g.cuGraphLaunch(exec, stream), CUDA_ERROR_INVALID_VALUE);  // not freed
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));                            // frees it
      SWCU_TEST_CHECK_RESULT(api().cuMemcpyDtoH_v2(after.data(), d, n * 4),
                             CUDA_ERROR_INVALID_VALUE);
      const CUgraphExec auto_free =
          swcu::test::instantiate(graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
      run(auto_free);
      run(auto_free);  // frees what the last launch left, then allocates again
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(auto_free));
    }

    SUBCASE("captured from stream-ordered allocation") {
      CUgraph captured = nullptr;
      CUdeviceptr p = 0;
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAllocAsync(&p, 64, stream));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemsetD8Async(p, 5, 64, stream));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoHAsync_v2(host.data(), p, 64, stream));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFreeAsync(p, stream));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &captured));
      const auto nodes = swcu::test::nodes_of(captured);
      REQUIRE(nodes.size() == 4);
      CHECK(swcu::test::type_of(nodes[0]) == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
      CHECK(swcu::test::type_of(nodes[3]) == CU_GRAPH_NODE_TYPE_MEM_FREE);
      CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);  // graph memory is the graph's
      const CUgraphExec exec = swcu::test::instantiate(captured);
      run(exec);
      CHECK(host[0] == 0x05050505u);
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(captured));
    }
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "cuGraphDebugDotPrint writes a DOT graph of nodes, kinds and edges") {
    const auto& g = gr();
    const CUdeviceptr d = alloc(256);
    float a = 1.0f;
    int count_n = 64;
    void* args[] = {const_cast<CUdeviceptr*>(&d), &a, &count_n};
    void* saxpy_args[] = {&a, const_cast<CUdeviceptr*>(&d), const_cast<CUdeviceptr*>(&d), &count_n};
    (void)args;
    CUgraph graph = swcu::test::create_graph();
    const CUgraphNode fill = swcu::test::add_fill32(graph, d, 0, 64, ctx);
    CUgraphNode kernel = nullptr;
    const CUDA_KERNEL_NODE_PARAMS kp = saxpy_params(saxpy_args, 64);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddKernelNode(&kernel, graph, &fill, 1, &kp));
    std::vector<unsigned> host(64);
    (void)swcu::test::add_copy(graph, swcu::test::address(host.data()), d, 256, ctx, {kernel});
    CUgraph child = swcu::test::create_graph();
    (void)swcu::test::add_empty(child);
    CUgraphNode child_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddChildGraphNode(&child_node, graph, &kernel, 1, child));

    swcu::test::TempFile file;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDebugDotPrint(graph, file.path(), 0));
    const std::string dot = file.read();
    CHECK(dot.rfind("digraph", 0) == 0);
    for (const char* part : {"MEMSET", "KERNEL", "saxpy", "<<<{1,1,1},{64,1,1},0>>>", "MEMCPY",
                             "DtoH", "CHILD_GRAPH", "EMPTY", "->", "cluster_2"}) {
      INFO(part);
      CHECK(dot.find(part) != std::string::npos);
    }
    CHECK(dot.find("dst 0x") == std::string::npos);
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphDebugDotPrint(graph, file.path(), CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
    CHECK(file.read().find("dst 0x") != std::string::npos);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDebugDotPrint(graph, "/nonexistent/dir/g.dot", 0),
                           CUDA_ERROR_OPERATING_SYSTEM);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDebugDotPrint(graph, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.cuGraphDebugDotPrint(nullptr, file.path(), 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(child));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a context's destruction reclaims its graphs, executable graphs and captures") {
    const auto& g = gr();
    const std::size_t graphs = ctl.reclaimed_handles(SWCU_GRAPH);
    const std::size_t execs = ctl.reclaimed_handles(SWCU_GRAPH_EXEC);
    CUcontext ctx = swcu::test::create_context();
    int destroyed = 0;
    CUuserObject object = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuUserObjectCreate(
        &object, &destroyed, [](void* p) { ++*static_cast<int*>(p); }, 1,
        CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CUgraph graph = swcu::test::create_graph();  // the current context's
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
    (void)swcu::test::add_empty(graph);
    (void)swcu::test::instantiate(graph);
    CUstream s = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(ctl.live_handles(SWCU_GRAPH) == 2);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_GRAPH) == 0);
    CHECK(ctl.live_handles(SWCU_GRAPH_EXEC) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_GRAPH) == graphs + 2);
    CHECK(ctl.reclaimed_handles(SWCU_GRAPH_EXEC) == execs + 1);
    CHECK(destroyed == 1);  // the destructor ran after the call
    CHECK(ctl.live_handles(SWCU_USER_OBJECT) == 0);
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "a graph launch is a stream operation: faults, sticky errors, order") {
    const auto& g = gr();
    int ran = 0;
    CUgraph graph = swcu::test::create_graph();
    (void)swcu::test::add_host(graph, &count, &ran);
    const CUgraphExec exec = swcu::test::instantiate(graph);
    REQUIRE(ctl.add_fault_rule("cuGraphLaunch:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    SWCU_TEST_CHECK_RESULT(g.cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(ran == 0);
    run(exec);
    CHECK(ran == 1);
    REQUIRE(ctl.add_fault_rule("cuGraphInstantiateWithFlags:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUgraphExec failed = nullptr;
    SWCU_TEST_CHECK_RESULT(g.cuGraphInstantiate(&failed, graph, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(failed == nullptr);
    CHECK(ctl.live_handles(SWCU_GRAPH_EXEC) == 1);

    // Launches of one executable graph are serialized across streams.
    Order order;
    CUgraph ordered = swcu::test::create_graph();
    (void)swcu::test::add_host(ordered, &Order::run, order.mark(1));
    const CUgraphExec one = swcu::test::instantiate(ordered);
    CUstream other = swcu::test::create_stream();
    swcu::test::Gate gate;
    gate.start(ctx, stream);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(one, stream));  // behind the gate
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(one, other));   // behind the first launch
    CHECK(order.seen.empty());
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSynchronize());
    CHECK(order.seen == std::vector{1, 1});

    // A bad address breaks the context when the node runs, as on a GPU.
    CUdeviceptr d = alloc(64);
    CUgraph bad = swcu::test::create_graph();
    (void)swcu::test::add_fill32(bad, d, 1, 16, ctx);
    const CUgraphExec bad_exec = swcu::test::instantiate(bad);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
    SWCU_TEST_CHECK_RESULT(g.cuGraphLaunch(bad_exec, stream), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(stream), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(g.cuGraphLaunch(exec, stream), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky

    for (CUgraphExec e : {exec, one, bad_exec}) SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(e));
    for (CUgraph gph : {graph, ordered, bad}) SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(gph));
    api().cuStreamDestroy_v2(other);
  }

  TEST_CASE_FIXTURE(GraphTest,
                    "cuGraphExecNodeSetParams changes a conditional body's nodes, not the node") {
    // cuda.h: cuGraphExecNodeSetParams' table of allowed changes has no row for conditional
    // nodes, and cuGraphExecUpdate says "Conditional nodes: Changing node parameters is not
    // supported. Changing parameters of nodes within the conditional body graph is subject to
    // the rules above": the node itself is CUDA_ERROR_NOT_SUPPORTED, a node of a body is
    // changed by the rules of its kind, for the launches that follow.
    const auto& g = gr();
    const CUdeviceptr d = alloc(16 * 4);
    CUgraph graph = swcu::test::create_graph();
    CUgraphConditionalHandle cond = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphConditionalHandleCreate(&cond, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = cond;
    p.conditional.type = CU_GRAPH_COND_TYPE_IF;
    p.conditional.size = 1;
    p.conditional.ctx = ctx;
    CUgraphNode node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddNode(&node, graph, nullptr, nullptr, 0, &p));
    const CUgraph body = p.conditional.phGraph_out[0];
    const CUgraphNode fill = swcu::test::add_fill32(body, d, 3, 16, ctx);
    const CUgraphExec exec = swcu::test::instantiate(graph);
    run(exec);
    CHECK(read32(d, 16) == std::vector<unsigned>(16, 3));

    // The body's memset takes a new value through the generic call.
    CUgraphNodeParams f{};
    f.type = CU_GRAPH_NODE_TYPE_MEMSET;
    f.memset.dst = d;
    f.memset.value = 8;
    f.memset.elementSize = 4;
    f.memset.width = 16;
    f.memset.height = 1;
    f.memset.ctx = ctx;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecNodeSetParams(exec, fill, &f));
    run(exec);
    CHECK(read32(d, 16) == std::vector<unsigned>(16, 8));

    // The conditional node: no change is supported, not even to the same parameters.
    CUgraphNodeParams same{};
    same.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    same.conditional = p.conditional;
    SWCU_TEST_CHECK_RESULT(g.cuGraphExecNodeSetParams(exec, node, &same), CUDA_ERROR_NOT_SUPPORTED);
    same.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
    SWCU_TEST_CHECK_RESULT(g.cuGraphExecNodeSetParams(exec, node, &same), CUDA_ERROR_NOT_SUPPORTED);
    // A kind that is not the node's is CUDA_ERROR_INVALID_VALUE.
    SWCU_TEST_CHECK_RESULT(g.cuGraphExecNodeSetParams(exec, node, &f), CUDA_ERROR_INVALID_VALUE);
    run(exec);  // the node still runs its body, with the new value
    CHECK(read32(d, 16) == std::vector<unsigned>(16, 8));

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(d));
  }
}

// Each test case of this suite runs in a process of its own with SWCUDA_EXEC=deferred
// (CMakeLists.txt).
TEST_SUITE("deferred") {
  TEST_CASE_FIXTURE(GraphTest, "deferred: a graph launch runs when its stream is synchronized") {
    const auto& g = gr();
    Order order;
    CUgraph graph = swcu::test::create_graph();
    const CUgraphNode a = swcu::test::add_host(graph, &Order::run, order.mark(1));
    CUevent done = swcu::test::create_event();
    CUgraphNode record = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddEventRecordNode(&record, graph, &a, 1, done));
    (void)swcu::test::add_host(graph, &Order::run, order.mark(2), {record});
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(stream, &Order::run, order.mark(3)));
    CHECK(order.seen.empty());
    SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(api().cuEventQuery(done), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventSynchronize(done));  // runs the launch
    CHECK(order.seen == std::vector{1, 2});
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(stream));
    CHECK(order.seen == std::vector{1, 2, 3});
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    api().cuEventDestroy_v2(done);
  }

  TEST_CASE_FIXTURE(GraphTest, "deferred: a graph waits for the events its wait nodes name") {
    const auto& g = gr();
    Order order;
    CUstream producer = swcu::test::create_stream();
    CUevent e = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuLaunchHostFunc(producer, &Order::run, order.mark(1)));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(e, producer));
    CUgraph graph = swcu::test::create_graph();
    CUgraphNode wait = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddEventWaitNode(&wait, graph, nullptr, 0, e));
    (void)swcu::test::add_host(graph, &Order::run, order.mark(2), {wait});
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(stream));  // runs the producer first
    CHECK(order.seen == std::vector{1, 2});
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    api().cuEventDestroy_v2(e);
    api().cuStreamDestroy_v2(producer);
  }
}
