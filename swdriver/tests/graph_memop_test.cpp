// Batch memory operation nodes (CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) and what a graph launch does
// with nodes that wait: cuda.h's cuGraphAddBatchMemOpNode, cuGraphBatchMemOpNodeGet/SetParams,
// cuGraphExecBatchMemOpNodeSetParams, the generic node functions, stream capture of
// cuStreamWaitValue*/WriteValue*/BatchMemOp, and a launch that holds back only what follows a
// wait (an event wait, an external semaphore wait, a memory wait) while other streams go on.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::api;
using swcu::test::create_context;
using swcu::test::create_graph;
using swcu::test::create_stream;
using swcu::test::gr;
using swcu::test::instantiate;

// Page-locked words the host writes and reads directly (and the device reaches).
struct HostWords {
  explicit HostWords(std::size_t count) {
    void* p = nullptr;
    REQUIRE(api().cuMemHostAlloc(&p, count * 8, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS);
    std::memset(p, 0, count * 8);
    words = static_cast<std::uint32_t*>(p);
  }

  [[nodiscard]] CUdeviceptr at(std::size_t i) const {
    return reinterpret_cast<CUdeviceptr>(words + i);
  }
  [[nodiscard]] std::uint32_t load(std::size_t i) const {
    return std::atomic_ref<std::uint32_t>(words[i]).load();
  }
  void store(std::size_t i, std::uint32_t v) const {
    std::atomic_ref<std::uint32_t>(words[i]).store(v);
  }

  std::uint32_t* words = nullptr;
};

// A context with page-locked words, a graph and a stream; the executable graphs exec() makes
// are destroyed with it.
struct MemopTest : swcu::test::DriverTest {
  CUcontext ctx = create_context();
  HostWords w{4};
  CUgraph g = create_graph();
  CUstream s = create_stream();
  std::vector<CUgraphExec> execs;

  MemopTest() = default;
  ~MemopTest() {  // after a fault broke the context, these may fail: destroying it reclaims all
    for (CUgraphExec e : execs) gr().cuGraphExecDestroy(e);
    gr().cuGraphDestroy(g);
    api().cuStreamDestroy_v2(s);
    api().cuMemFreeHost(w.words);
    api().cuCtxDestroy_v2(ctx);
  }
  MemopTest(const MemopTest&) = delete;
  MemopTest& operator=(const MemopTest&) = delete;

  CUgraphExec exec() { return execs.emplace_back(instantiate(g)); }
  // Launches `e` on the fixture's stream and waits for it.
  void run(CUgraphExec e) const {
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(s));
  }
};

CUstreamBatchMemOpParams write32(CUdeviceptr address, std::uint32_t value) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = address;
  p.writeValue.value = value;
  return p;
}

CUstreamBatchMemOpParams wait32(CUdeviceptr address, std::uint32_t value,
                                unsigned flags = CU_STREAM_WAIT_VALUE_GEQ) {
  CUstreamBatchMemOpParams p{};
  p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  p.waitValue.address = address;
  p.waitValue.value = value;
  p.waitValue.flags = flags;
  return p;
}

CUgraphNode add_memops(CUgraph g, std::vector<CUstreamBatchMemOpParams> ops, CUcontext ctx,
                       std::vector<CUgraphNode> deps = {}) {
  const CUDA_BATCH_MEM_OP_NODE_PARAMS p{ctx, static_cast<unsigned>(ops.size()), ops.data(), 0};
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddBatchMemOpNode(&n, g, deps.data(), deps.size(), &p));
  return n;
}

CUresult add_memops_result(CUgraph g, std::vector<CUstreamBatchMemOpParams> ops, CUcontext ctx,
                           unsigned flags = 0) {
  const CUDA_BATCH_MEM_OP_NODE_PARAMS p{ctx, static_cast<unsigned>(ops.size()), ops.data(), flags};
  CUgraphNode n = nullptr;
  return gr().cuGraphAddBatchMemOpNode(&n, g, nullptr, 0, &p);
}

}  // namespace

TEST_SUITE("graph memory operation nodes") {
  TEST_CASE_FIXTURE(MemopTest, "a batch memop node keeps a copy of its operations and reports it") {
    std::vector<CUstreamBatchMemOpParams> ops{write32(w.at(0), 7), wait32(w.at(1), 3)};
    const CUgraphNode n = add_memops(g, ops, ctx);
    ops[0].writeValue.value = 99;  // "the paramArray inside nodeParams is copied"
    CUgraphNodeType type{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetType(n, &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    CUDA_BATCH_MEM_OP_NODE_PARAMS out{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeGetParams(n, &out));
    CHECK(out.ctx == ctx);
    REQUIRE(out.count == 2);
    CHECK(out.flags == 0);
    CHECK(out.paramArray[0].writeValue.operation == CU_STREAM_MEM_OP_WRITE_VALUE_32);
    CHECK(out.paramArray[0].writeValue.value == 7);
    CHECK(out.paramArray[1].waitValue.address == w.at(1));
    CHECK(out.paramArray[1].waitValue.value == 3);

    // cuGraphBatchMemOpNodeSetParams replaces them; a NULL context is the current one.
    std::vector<CUstreamBatchMemOpParams> next{write32(w.at(1), 5)};
    const CUDA_BATCH_MEM_OP_NODE_PARAMS set{nullptr, 1, next.data(), 0};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeSetParams(n, &set));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeGetParams(n, &out));
    CHECK(out.ctx == ctx);
    REQUIRE(out.count == 1);
    CHECK(out.paramArray[0].writeValue.address == w.at(1));

    // Launched, the write lands.
    const CUgraphExec e = exec();
    run(e);
    CHECK(w.load(1) == 5);
    CHECK(w.load(0) == 0);
  }

  TEST_CASE_FIXTURE(
      MemopTest, "bad batch memop node parameters are refused as cuStreamBatchMemOp refuses them") {
    CUgraphNode n = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphAddBatchMemOpNode(&n, g, nullptr, 0, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {}, ctx), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {write32(w.at(0), 1)}, ctx, 1),
                           CUDA_ERROR_INVALID_VALUE);  // flags
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {write32(w.at(0) + 2, 1)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // misaligned
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {wait32(w.at(0), 1, 0x7)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // no such condition
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {write32(0x1000, 1)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // not memory the device reaches
    CUdeviceptr managed = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAllocManaged(&managed, 64, CU_MEM_ATTACH_GLOBAL));
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {write32(managed, 1)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // "cannot be used with managed memory"
    CUstreamBatchMemOpParams unknown{};
    unknown.operation = swcu::test::invalid_enum<CUstreamBatchMemOpType>(77);
    SWCU_TEST_CHECK_RESULT(add_memops_result(g, {unknown}, ctx), CUDA_ERROR_INVALID_VALUE);
    std::size_t count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphGetNodes(g, nullptr, &count));
    CHECK(count == 0);  // nothing half-made

    // Not in a conditional body (kernel, empty, child graph, memset, memcpy, conditional only).
    CUgraphConditionalHandle handle = 0;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphConditionalHandleCreate(&handle, g, ctx, 0, 0));
    CUgraphNodeParams cond{};
    cond.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    cond.conditional.handle = handle;
    cond.conditional.type = CU_GRAPH_COND_TYPE_IF;
    cond.conditional.size = 1;
    cond.conditional.ctx = ctx;
    CUgraphNode c = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddNode(&c, g, nullptr, nullptr, 0, &cond));
    SWCU_TEST_CHECK_RESULT(
        add_memops_result(cond.conditional.phGraph_out[0], {write32(w.at(0), 1)}, ctx),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(managed));
  }

  // A wait in a graph holds back what depends on it, not the streams around it: the launch's
  // work before the wait is done, another stream's work runs, and the host's store releases it.
  TEST_CASE_FIXTURE(MemopTest, "a memory wait node holds back only the rest of its launch") {
    const CUgraphNode before = add_memops(g, {write32(w.at(0), 1)}, ctx);
    const CUgraphNode wait = add_memops(g, {wait32(w.at(1), 2)}, ctx, {before});
    add_memops(g, {write32(w.at(2), 3)}, ctx, {wait});
    const CUgraphExec e = exec();
    const CUstream other = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CHECK(w.load(0) == 1);  // the node before the wait ran
    CHECK(w.load(2) == 0);  // the node after it did not
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWriteValue32(other, w.at(3), 9, 0));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(other));  // other streams go on
    CHECK(w.load(3) == 9);
    w.store(1, 2);  // release it
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(s));
    CHECK(w.load(2) == 3);

    // A second launch waits again (the value is reset first).
    w.store(1, 0);
    w.store(2, 0);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(
        api().cuStreamWriteValue32(other, w.at(1), 2, 0));  // a stream releases it
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(s));
    CHECK(w.load(2) == 3);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(other));
  }

  // On a GPU independent branches of a graph run concurrently: a branch that does not depend on
  // a wait may release it. Here a wait runs as late as its dependents allow.
  TEST_CASE_FIXTURE(MemopTest, "an independent branch of the same graph releases its wait") {
    const CUgraphNode wait = add_memops(g, {wait32(w.at(0), 1, CU_STREAM_WAIT_VALUE_EQ)}, ctx);
    add_memops(g, {write32(w.at(1), 4)}, ctx, {wait});
    add_memops(g, {write32(w.at(0), 1)}, ctx);  // added last, no dependency
    const CUgraphExec e = exec();
    run(e);
    CHECK(w.load(1) == 4);
  }

  // An event wait node in the middle of a graph: the nodes before it run at once.
  TEST_CASE_FIXTURE(MemopTest, "an event wait node holds back only the nodes after it") {
    const CUstream producer = create_stream();
    CUevent ev = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    // The producer's record waits for the host.
    SWCU_TEST_REQUIRE_SUCCESS(
        api().cuStreamWaitValue32(producer, w.at(0), 1, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventRecord(ev, producer));
    const CUgraphNode first = add_memops(g, {write32(w.at(1), 1)}, ctx);
    CUgraphNode wait = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEventWaitNode(&wait, g, &first, 1, ev));
    add_memops(g, {write32(w.at(2), 2)}, ctx, {wait});
    const CUgraphExec e = exec();
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CHECK(w.load(1) == 1);
    CHECK(w.load(2) == 0);
    w.store(0, 1);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(s));
    CHECK(w.load(2) == 2);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuEventDestroy_v2(ev));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(producer));
  }

  // Capturing cuStreamWaitValue32, cuStreamWriteValue32 and cuStreamBatchMemOp records batch
  // memop nodes (one per call), which the launches then run.
  TEST_CASE_FIXTURE(MemopTest, "stream capture records memory operations as nodes") {
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWaitValue32(s, w.at(0), 1, CU_STREAM_WAIT_VALUE_GEQ));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamWriteValue32(s, w.at(1), 5, 0));
    std::vector<CUstreamBatchMemOpParams> batch{write32(w.at(2), 6), write32(w.at(3), 7)};
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamBatchMemOp(s, 2, batch.data(), 0));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));  // the capture's graph replaces it
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamEndCapture(s, &g));
    CHECK(w.load(1) == 0);  // captured, not run
    const std::vector<CUgraphNode> nodes = swcu::test::nodes_of(g);
    REQUIRE(nodes.size() == 3);
    std::vector<unsigned> counts;
    for (CUgraphNode n : nodes) {
      CUgraphNodeType type{};
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetType(n, &type));
      CHECK(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
      CUDA_BATCH_MEM_OP_NODE_PARAMS p{};
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeGetParams(n, &p));
      CHECK(p.ctx == ctx);
      counts.push_back(p.count);
    }
    CHECK(counts == std::vector<unsigned>{1, 1, 2});
    CUDA_BATCH_MEM_OP_NODE_PARAMS first{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeGetParams(nodes[0], &first));
    CHECK(first.paramArray[0].waitValue.operation == CU_STREAM_MEM_OP_WAIT_VALUE_32);
    CHECK(first.paramArray[0].waitValue.address == w.at(0));
    CHECK(first.paramArray[0].waitValue.flags == CU_STREAM_WAIT_VALUE_GEQ);
    const CUgraphExec e = exec();
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_CHECK_RESULT(api().cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    w.store(0, 1);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(s));
    CHECK(w.load(1) == 5);
    CHECK(w.load(2) == 6);
    CHECK(w.load(3) == 7);
  }

  // cuGraphExecBatchMemOpNodeSetParams: "op.waitValue.address, value, flags bits corresponding
  // to wait type (i.e. CU_STREAM_WAIT_VALUE_FLUSH bit cannot be modified),
  // op.writeValue.address, value" may change; "the context, count or type of operations, and
  // other types of operations such as membars, may not be modified".
  TEST_CASE_FIXTURE(MemopTest,
                    "an executable graph's memop node takes new addresses and values only") {
    const CUgraphNode n = add_memops(g, {wait32(w.at(0), 0), write32(w.at(1), 1)}, ctx);
    const CUgraphExec e = exec();
    const auto exec_set = [&](std::vector<CUstreamBatchMemOpParams> ops, CUcontext c) {
      const CUDA_BATCH_MEM_OP_NODE_PARAMS p{c, static_cast<unsigned>(ops.size()), ops.data(), 0};
      return gr().cuGraphExecBatchMemOpNodeSetParams(e, n, &p);
    };
    SWCU_TEST_REQUIRE_SUCCESS(
        exec_set({wait32(w.at(3), 0, CU_STREAM_WAIT_VALUE_EQ), write32(w.at(2), 8)}, ctx));
    SWCU_TEST_CHECK_RESULT(exec_set({write32(w.at(3), 0), write32(w.at(2), 8)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // an operation's type
    SWCU_TEST_CHECK_RESULT(exec_set({wait32(w.at(3), 0)}, ctx),
                           CUDA_ERROR_INVALID_VALUE);  // the count
    SWCU_TEST_CHECK_RESULT(
        exec_set({wait32(w.at(3), 0, CU_STREAM_WAIT_VALUE_FLUSH), write32(w.at(2), 8)}, ctx),
        CUDA_ERROR_INVALID_VALUE);  // the flush bit
    const CUcontext other = create_context();
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxPopCurrent_v2(&popped));  // `ctx` is current again
    SWCU_TEST_CHECK_RESULT(exec_set({wait32(w.at(3), 0), write32(w.at(2), 8)}, other),
                           CUDA_ERROR_INVALID_VALUE);  // the context
    run(e);
    CHECK(w.load(2) == 8);  // the update's write
    CHECK(w.load(1) == 0);  // not the node's
    // The graph's node is not modified by the call.
    CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeGetParams(n, &got));
    CHECK(got.paramArray[1].writeValue.address == w.at(1));

    // The generic cuGraphExecNodeSetParams takes the same parameters.
    std::vector<CUstreamBatchMemOpParams> ops{wait32(w.at(3), 0), write32(w.at(1), 9)};
    CUgraphNodeParams generic{};
    generic.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    generic.memOp = {ctx, 2, ops.data(), 0};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecNodeSetParams(e, n, &generic));
    run(e);
    CHECK(w.load(1) == 9);

    // A whole-graph update takes changed values, and refuses another count.
    std::vector<CUstreamBatchMemOpParams> node_ops{wait32(w.at(3), 0), write32(w.at(1), 11)};
    const CUDA_BATCH_MEM_OP_NODE_PARAMS node_set{ctx, 2, node_ops.data(), 0};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeSetParams(n, &node_set));
    CUgraphExecUpdateResultInfo info{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecUpdate(e, g, &info));
    run(e);
    CHECK(w.load(1) == 11);
    const CUDA_BATCH_MEM_OP_NODE_PARAMS shorter{ctx, 1, node_ops.data(), 0};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphBatchMemOpNodeSetParams(n, &shorter));
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(e, g, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
    CHECK(info.errorNode == n);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(other));
  }

  TEST_CASE_FIXTURE(MemopTest,
                    "cuGraphAddNode and cuGraphNodeSetParams make and change memop nodes") {
    std::vector<CUstreamBatchMemOpParams> ops{write32(w.at(0), 3)};
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    p.memOp = {ctx, 1, ops.data(), 0};
    CUgraphNode n = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddNode(&n, g, nullptr, nullptr, 0, &p));
    ops[0] = write32(w.at(1), 4);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeSetParams(n, &p));
    p.memOp.flags = 2;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphNodeSetParams(n, &p), CUDA_ERROR_INVALID_VALUE);
    const CUgraphExec e = exec();
    run(e);
    CHECK(w.load(0) == 0);
    CHECK(w.load(1) == 4);
  }

  // A wait on memory freed after the node was made faults when the launch reaches it; the nodes
  // after it do not run, and the context is broken, as by any illegal address.
  TEST_CASE_FIXTURE(MemopTest, "a memop node on freed memory faults its launch") {
    CUdeviceptr gone = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAlloc_v2(&gone, 64));
    const CUgraphNode wait = add_memops(g, {wait32(gone, 0)}, ctx);
    add_memops(g, {write32(w.at(0), 1)}, ctx, {wait});
    const CUgraphExec e = exec();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(gone));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, s));
    SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(w.load(0) == 0);
  }
}
