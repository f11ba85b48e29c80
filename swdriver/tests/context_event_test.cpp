// cuCtxRecordEvent and cuCtxWaitEvent (CUDA 12.5): an event that captures all the work of a
// context, and a context all of whose later work waits for an event.
#include "graph_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_event;
using swcu::test::create_stream;
using swcu::test::Gate;
using swcu::test::Log;

}  // namespace

TEST_SUITE("context events") {
  // "Captures in hEvent all the activities of the context hCtx at the time of this call":
  // the record is done only when the work of every stream of the context is.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxRecordEvent captures the work of every stream of the context") {
    const CUcontext ctx = create_context();
    const CUstream busy = create_stream(CU_STREAM_NON_BLOCKING);
    const CUstream idle = create_stream(CU_STREAM_DEFAULT);
    const CUevent e = create_event();
    {
      Gate gate;
      gate.start(ctx, busy);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxRecordEvent(ctx, e));
      SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
      gate.finish();
    }
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    // "Uses of hCtx after this call do not modify hEvent": work enqueued later is not in it.
    {
      Gate gate;
      gate.start(ctx, idle);
      SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxRecordEvent(ctx, e));
      SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
      gate.finish();
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    for (const CUstream s : {busy, idle}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // "hEvent and hCtx must be from the same CUDA context, otherwise CUDA_ERROR_INVALID_HANDLE".
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxRecordEvent needs a live context and an event of that context") {
    const CUcontext first = create_context();
    const CUevent e = create_event();
    const CUcontext second = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuCtxRecordEvent(second, e), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxRecordEvent(first, reinterpret_cast<CUevent>(0x10)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxRecordEvent(nullptr, e), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxRecordEvent(reinterpret_cast<CUcontext>(0x10), e),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxRecordEvent(first, e));  // from any current context
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(second));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(first));
  }

  // "Makes all future work submitted to context hCtx wait for all work captured in hEvent ...
  // hEvent may be from a different context or device than hCtx."
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxWaitEvent makes later work of every stream of the context wait") {
    const CUcontext producer = create_context();
    const CUstream upstream = create_stream();
    const CUevent e = create_event();
    const CUcontext consumer = create_context();
    const CUstream a = create_stream(CU_STREAM_NON_BLOCKING);
    const CUstream b = create_stream(CU_STREAM_DEFAULT);
    Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 1));  // before the wait: not held back
    {
      Gate gate;
      gate.start(producer, upstream);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxRecordEvent(producer, e));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxWaitEvent(consumer, e));
      SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 2));
      SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(b, 3));
      SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(nullptr, 4));  // the legacy default stream too
      CHECK(log.order() == std::vector<int>{1});
      SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(a), CUDA_ERROR_NOT_READY);
      gate.finish();
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(log.order() == std::vector<int>{1, 2, 3, 4});
    // A completed event holds nothing back.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxWaitEvent(consumer, e));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 5));
    CHECK(log.order() == std::vector<int>{1, 2, 3, 4, 5});
    for (const CUstream s : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(consumer));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(upstream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(producer));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuCtxWaitEvent needs a live context and event") {
    const CUcontext ctx = create_context();
    const CUevent e = create_event();
    SWCU_TEST_CHECK_RESULT(cu.cuCtxWaitEvent(nullptr, e), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxWaitEvent(ctx, reinterpret_cast<CUevent>(0x10)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxWaitEvent(ctx, e));  // never recorded: nothing to wait for
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // "The API will return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED if the specified context hCtx
  // has a stream in the capture mode. In such a case, the call will invalidate all the
  // conflicting captures." cuCtxWaitEvent also refuses an event "part of an ongoing capture".
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "context records and waits refuse and invalidate stream captures") {
    const auto& g = swcu::test::gr();
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent e = create_event();
    CUgraph graph = nullptr;
    for (const bool record : {true, false}) {
      INFO((record ? "cuCtxRecordEvent" : "cuCtxWaitEvent"));
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
      SWCU_TEST_CHECK_RESULT(record ? cu.cuCtxRecordEvent(ctx, e) : cu.cuCtxWaitEvent(ctx, e),
                             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(s, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CHECK(graph == nullptr);
    }
    // An event recorded into a capture of another context's stream.
    const CUcontext other = create_context();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxWaitEvent(other, e), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(s, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a fault rule fails cuCtxRecordEvent") {
    const CUcontext ctx = create_context();
    const CUevent e = create_event();
    CHECK(ctl.add_fault_rule("cuCtxRecordEvent:1:CUDA_ERROR_LAUNCH_FAILED") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxRecordEvent(ctx, e), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxRecordEvent(ctx, e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
