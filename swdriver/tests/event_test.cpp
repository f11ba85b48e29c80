// Events in the default (immediate) mode: creation, records, queries, host and simulated time.
#include <chrono>
#include <thread>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_event;
using swcu::test::create_stream;

// The simulated cost of one host function (sched.hpp): 1 us.
constexpr float kHostFunctionMs = 0.001f;

void nothing(void*) {}

}  // namespace

TEST_SUITE("events") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "creating an event needs a current context and valid flags") {
    CUevent e = reinterpret_cast<CUevent>(0x10);
    SWCU_TEST_CHECK_RESULT(cu.cuEventCreate(&e, 0), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuEventCreate(&e, 0x100), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventCreate(&e, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(e == reinterpret_cast<CUevent>(0x10));
    for (const unsigned flags : {unsigned{CU_EVENT_DEFAULT}, unsigned{CU_EVENT_BLOCKING_SYNC},
                                 unsigned{CU_EVENT_DISABLE_TIMING},
                                 unsigned{CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING},
                                 unsigned{CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING}}) {
      INFO("flags ", flags);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&e, flags));
      CHECK(ctl.live_handles(SWCU_EVENT) == 1);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "an event never recorded is complete but has no time") {
    const CUcontext ctx = create_context();
    const CUevent a = create_event();
    const CUevent b = create_event();
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(a), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuEventSynchronize(a), CUDA_SUCCESS);
    float ms = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(b, nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, b, a), CUDA_ERROR_INVALID_HANDLE);
    CHECK(ms == -1);
    for (const CUevent e : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "elapsed time follows the simulated clock" *
                                                doctest::test_suite("simulated time")) {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = create_event();
    const CUevent stop = create_event(CU_EVENT_BLOCKING_SYNC);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    for (int i = 0; i < 3; ++i) SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(s, nothing, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecordWithFlags(stop, s, CU_EVENT_RECORD_DEFAULT));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(stop));
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(3 * kHostFunctionMs));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v1(&ms, stop, start));
    CHECK(ms == doctest::Approx(-3 * kHostFunctionMs));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, start));
    CHECK(ms == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(nullptr, start, stop),
                           CUDA_ERROR_INVALID_VALUE);
    // Another stream of the same device shares the clock.
    const CUstream other = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(other, nothing, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, stop, start));
    CHECK(ms == doctest::Approx(kHostFunctionMs));
    for (const CUstream x : {s, other}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(x));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // CUDA driver API reference, cuEventElapsedTime: "Computes the elapsed time between two events
  // (in milliseconds with a resolution of around 0.5 microseconds)", and "the cuEventRecord()
  // operation takes place asynchronously": a record is stamped when its stream reaches it, so
  // time the stream spends waiting, or the host spends between records, shows.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "by default elapsed time is host time: a sleep shows") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = create_event();
    const CUevent stop = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(stop));
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms >= 400);  // slept 500 ms; generous bounds: the machine may be slow
    CHECK(ms < 5000);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v1(&ms, stop, start));
    CHECK(ms <= -400);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a record is stamped when the stream reaches it, not when it is made") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = create_event();
    const CUevent stop = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    swcu::test::Gate gate;  // the stream waits in a host function until the gate opens
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, s));  // made now, reached after the wait
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(stop));
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms >= 400);
    CHECK(ms < 5000);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "elapsed time needs timing on both events") {
    const CUcontext ctx = create_context();
    const CUevent timed = create_event();
    const CUevent untimed = create_event(CU_EVENT_DISABLE_TIMING);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(timed, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(untimed, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    float ms = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, timed, untimed),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, untimed, timed),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v1(&ms, untimed, untimed),
                           CUDA_ERROR_INVALID_HANDLE);
    for (const CUevent e : {timed, untimed}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "elapsed time is not ready while a record is pending" *
                                                doctest::test_suite("simulated time")) {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = create_event();
    const CUevent stop = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, s));
    float ms = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, start, stop), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(stop), CUDA_ERROR_NOT_READY);
    CHECK(ms == -1);
    gate.finish();
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(stop), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(kHostFunctionMs));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an event records in a stream of its own context only, with default flags") {
    const CUcontext first = create_context();
    const CUevent e = create_event();
    const CUcontext second = create_context();
    const CUstream s = create_stream();
    SWCU_TEST_CHECK_RESULT(cu.cuEventRecord(e, s), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventRecord(e, nullptr), CUDA_ERROR_INVALID_HANDLE);  // second's
    // Waiting works across contexts.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(s, e, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(second));
    SWCU_TEST_CHECK_RESULT(cu.cuEventRecordWithFlags(e, nullptr, CU_EVENT_RECORD_EXTERNAL),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventRecordWithFlags(e, nullptr, 0x10), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord_ptsz(e, nullptr));  // the per-thread stream
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(first));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a record in the legacy stream captures blocking streams") {
    const CUcontext ctx = create_context();
    const CUstream blocking = create_stream(CU_STREAM_DEFAULT);
    const CUstream non_blocking = create_stream(CU_STREAM_NON_BLOCKING);
    const CUevent e = create_event();
    swcu::test::Gate blocked;
    blocked.start(ctx, blocking);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, CU_STREAM_LEGACY));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    blocked.finish();
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    swcu::test::Gate independent;
    independent.start(ctx, non_blocking);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, CU_STREAM_LEGACY));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    independent.finish();
    for (const CUstream s : {blocking, non_blocking})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "stale and wrong-kind event handles are refused") {
    const CUcontext ctx = create_context();
    const CUevent stale = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(stale));
    const CUstream s = create_stream();
    const auto stream_as_event = reinterpret_cast<CUevent>(s);
    const CUevent good = create_event();
    for (const CUevent bad : {stale, stream_as_event, CUevent{}}) {
      float ms = 0;
      SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(bad), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuEventSynchronize(bad), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuEventRecord(bad, s), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitEvent(s, bad, 0), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, bad, good), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuEventDestroy_v2(bad), CUDA_ERROR_INVALID_HANDLE);
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(good));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
