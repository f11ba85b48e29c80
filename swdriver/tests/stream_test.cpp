// Streams in the default (immediate) mode: creation, properties, stream order, the legacy and
// per-thread default streams, host functions, stale handles and reclaim by the context.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

unsigned long long stream_id(CUstream s,
                             PFN_cuStreamGetId_v12000 get = swcu::test::api().cuStreamGetId) {
  unsigned long long id = 0;
  REQUIRE(get(s, &id) == CUDA_SUCCESS);
  return id;
}

}  // namespace

TEST_SUITE("streams") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a stream belongs to the current context and reports its properties") {
    const CUcontext ctx = create_context();
    const CUstream a = create_stream(CU_STREAM_NON_BLOCKING);
    const CUstream b = create_stream(CU_STREAM_DEFAULT);
    CHECK(ctl.live_handles(SWCU_STREAM) == 2);
    unsigned flags = 7;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetFlags(a, &flags));
    CHECK(flags == CU_STREAM_NON_BLOCKING);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetFlags(b, &flags));
    CHECK(flags == CU_STREAM_DEFAULT);
    int priority = 7;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetPriority(a, &priority));
    CHECK(priority == 0);
    CUcontext owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetCtx(a, &owner));
    CHECK(owner == ctx);
    CUgreenCtx green = reinterpret_cast<CUgreenCtx>(0x1);
    owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetCtx_v2(b, &owner, &green));
    CHECK(owner == ctx);
    CHECK(green == nullptr);
    CUdevice dev = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetDevice(a, &dev));
    CHECK(dev == 0);
    CHECK(stream_id(a) != stream_id(b));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetFlags(a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetPriority(a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetId(a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetCtx(a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(b));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "creating a stream needs a current context and valid flags") {
    CUstream s = reinterpret_cast<CUstream>(0x10);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreateWithPriority(&s, 0, -1), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreate(&s, 2), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreateWithPriority(&s, 0x10, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(s == reinterpret_cast<CUstream>(0x10));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "priorities outside the context's range are clamped") {
    const CUcontext ctx = create_context();
    int least = 1, greatest = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetStreamPriorityRange(&least, &greatest));
    const std::vector<std::pair<int, int>> cases = {{greatest - 100, greatest},
                                                    {greatest, greatest},
                                                    {-3, -3},
                                                    {least, least},
                                                    {least + 9, least}};
    for (const auto& [asked, kept] : cases) {
      INFO("priority ", asked);
      CUstream s = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, asked));
      int priority = 99;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetPriority(s, &priority));
      CHECK(priority == kept);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "host functions run in stream order, at enqueue time") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Log log;
    for (int i = 0; i < 4; ++i) {
      SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, i));
      CHECK(log.order().size() == static_cast<size_t>(i + 1));  // immediate mode
    }
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(log.order() == std::vector{0, 1, 2, 3});
    SWCU_TEST_CHECK_RESULT(cu.cuLaunchHostFunc(s, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a stream callback gets the stream handle and the status") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    struct Seen {
      CUstream stream = nullptr;
      CUresult status = CUDA_ERROR_UNKNOWN;
      int calls = 0;
    } seen;
    const CUstreamCallback callback = [](CUstream stream, CUresult status, void* data) {
      auto& out = *static_cast<Seen*>(data);
      out.stream = stream;
      out.status = status;
      ++out.calls;
    };
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamAddCallback(s, callback, &seen, 0));
    CHECK(seen.calls == 1);
    CHECK(seen.stream == s);
    CHECK(seen.status == CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamAddCallback(CU_STREAM_LEGACY, callback, &seen, 0));
    CHECK(seen.stream == CU_STREAM_LEGACY);  // the handle as given
    SWCU_TEST_CHECK_RESULT(cu.cuStreamAddCallback(s, callback, &seen, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamAddCallback(s, nullptr, &seen, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(seen.calls == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "waiting on an event holds back later work in the stream") {
    const CUcontext ctx = create_context();
    const CUstream producer = create_stream();
    const CUstream consumer = create_stream();
    const CUevent ready = swcu::test::create_event(CU_EVENT_DISABLE_TIMING);
    swcu::test::Log log;
    swcu::test::Gate gate;
    gate.start(ctx, producer);  // the producer is busy until the gate opens
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(producer, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(ready, producer));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(consumer, ready, 0));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(consumer, 2));
    CHECK(log.order().empty());
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(consumer), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(ready), CUDA_ERROR_NOT_READY);
    // Re-recorded in an idle stream, the event is complete at once; only later waits see that.
    const CUstream other = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(ready, other));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(ready), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(consumer), CUDA_ERROR_NOT_READY);
    const CUstream late = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(late, ready, 0));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(late, 3));
    CHECK(log.order() == std::vector{3});
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(consumer));
    CHECK(log.order() == std::vector{3, 1, 2});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitEvent(consumer, nullptr, 0), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitEvent(consumer, ready, CU_EVENT_WAIT_EXTERNAL),
                           CUDA_ERROR_INVALID_VALUE);
    for (const CUstream s : {producer, consumer, other, late}) {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(ready));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "legacy default stream work waits for blocking streams, not non-blocking") {
    const CUcontext ctx = create_context();
    const CUstream blocking = create_stream(CU_STREAM_DEFAULT);
    const CUstream non_blocking = create_stream(CU_STREAM_NON_BLOCKING);
    swcu::test::Log log;
    swcu::test::Gate gate;
    gate.start(ctx, blocking);
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(nullptr, 1));  // NULL: the legacy default stream
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(non_blocking, 2));
    CHECK(log.order() == std::vector{2});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(non_blocking), CUDA_SUCCESS);
    gate.finish();
    CHECK(log.order() == std::vector{2, 1});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(nullptr), CUDA_SUCCESS);
    for (const CUstream s : {blocking, non_blocking})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "blocking streams wait for earlier legacy default stream work") {
    const CUcontext ctx = create_context();
    const CUstream blocking = create_stream(CU_STREAM_DEFAULT);
    const CUstream non_blocking = create_stream(CU_STREAM_NON_BLOCKING);
    swcu::test::Log log;
    swcu::test::Gate gate;
    gate.start(ctx, CU_STREAM_LEGACY);
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(blocking, 1));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(CU_STREAM_PER_THREAD, 2));  // also blocking
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(non_blocking, 3));
    CHECK(log.order() == std::vector{3});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(blocking), CUDA_ERROR_NOT_READY);
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(log.order() == std::vector{3, 1, 2});
    for (const CUstream s : {blocking, non_blocking})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the per-thread default stream is one queue per thread and context") {
    const CUcontext ctx = create_context();
    const auto per_thread = stream_id(CU_STREAM_PER_THREAD);
    const auto legacy = stream_id(CU_STREAM_LEGACY);
    CHECK(per_thread != legacy);
    CHECK(stream_id(CU_STREAM_PER_THREAD) == per_thread);
    CHECK(stream_id(nullptr) == legacy);  // NULL is the legacy stream for legacy exports...
    CHECK(stream_id(nullptr, cu.cuStreamGetId_ptsz) == per_thread);  // ...not for _ptsz ones
    CHECK(stream_id(CU_STREAM_LEGACY, cu.cuStreamGetId_ptsz) == legacy);
    unsigned long long other_thread = 0;
    std::thread([&] {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
      other_thread = stream_id(CU_STREAM_PER_THREAD);
      CHECK(stream_id(CU_STREAM_LEGACY) == legacy);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    }).join();
    CHECK(other_thread != per_thread);
    const CUcontext second = create_context();
    CHECK(stream_id(CU_STREAM_PER_THREAD) != per_thread);
    CUcontext owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetCtx_ptsz(nullptr, &owner));
    CHECK(owner == second);
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(nullptr, 1, cu.cuLaunchHostFunc_ptsz));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize_ptsz(nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery_ptsz(nullptr), CUDA_SUCCESS);
    CHECK(log.order() == std::vector{1});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(second));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);  // default streams are not handles to leak
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "special stream handles need a current context") {
    for (const CUstream special : {CUstream{}, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
      CUcontext owner = nullptr;
      SWCU_TEST_CHECK_RESULT(cu.cuStreamGetCtx(special, &owner), CUDA_ERROR_INVALID_CONTEXT);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(special), CUDA_ERROR_INVALID_CONTEXT);
      SWCU_TEST_CHECK_RESULT(cu.cuLaunchHostFunc(
                                 special, [](void*) {}, nullptr),
                             CUDA_ERROR_INVALID_CONTEXT);
    }
    const CUcontext ctx = create_context();
    // They cannot be destroyed.
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(nullptr), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(CU_STREAM_PER_THREAD), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a destroyed stream's pending work still completes") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Log log;
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));  // returns at once
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
    CHECK(log.order().empty());
    gate.finish();
    CHECK(log.order() == std::vector{1});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "stale and wrong-kind stream handles are refused") {
    const CUcontext ctx = create_context();
    const CUstream stale = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stale));
    CUevent event = swcu::test::create_event();
    const auto event_as_stream = reinterpret_cast<CUstream>(event);
    int not_a_stream = 0;
    for (const CUstream bad : {stale, event_as_stream, reinterpret_cast<CUstream>(&not_a_stream)}) {
      int priority = 0;
      unsigned flags = 0;
      CUcontext owner = nullptr;
      SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(bad), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(bad), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamGetPriority(bad, &priority), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamGetFlags(bad, &flags), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamGetCtx(bad, &owner), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuLaunchHostFunc(
                                 bad, [](void*) {}, nullptr),
                             CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuEventRecord(event, bad), CUDA_ERROR_INVALID_HANDLE);
      SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(bad), CUDA_ERROR_INVALID_HANDLE);
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(event));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a host function that calls the driver is refused") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    struct Calls {
      CUstream stream;
      PFN_cuGraphicsUnregisterResource_v3000 unimplemented_function;
      CUresult query, current, count, unimplemented, name;
      const char* text = "untouched";
    } calls{s,
            swcu::test::proc<PFN_cuGraphicsUnregisterResource_v3000>("cuGraphicsUnregisterResource",
                                                                     3000),
            CUDA_SUCCESS,
            CUDA_SUCCESS,
            CUDA_SUCCESS,
            CUDA_SUCCESS,
            CUDA_SUCCESS};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(
        s,
        [](void* data) {
          auto& c = *static_cast<Calls*>(data);
          const swcu::test::Api& api = swcu::test::api();
          CUcontext current = nullptr;
          int count = 0;
          c.query = api.cuStreamQuery(c.stream);  // would wait for this very function
          c.current = api.cuCtxGetCurrent(&current);
          c.count = api.cuDeviceGetCount(&count);
          c.unimplemented = c.unimplemented_function(nullptr);
          c.name = api.cuGetErrorName(CUDA_ERROR_UNKNOWN, &c.text);
        },
        &calls));
    for (const CUresult r :
         {calls.query, calls.current, calls.count, calls.unimplemented, calls.name}) {
      SWCU_TEST_CHECK_RESULT(r, CUDA_ERROR_NOT_PERMITTED);
    }
    CHECK(std::string(calls.text) == "untouched");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));  // and nothing is left locked
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(
      swcu::test::DriverTest,
      "other threads use the driver while a host function runs and a synchronize waits") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Gate gate;
    gate.start(ctx, s);
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));  // the state lock is not held
    const CUstream other = create_stream();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(other, 1));
    CHECK(log.order() == std::vector{1});
    std::atomic<bool> synchronized{false};
    std::thread waiter([&] {
      SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
      synchronized = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(synchronized.load());
    gate.finish();
    waiter.join();
    CHECK(synchronized.load());
    for (const CUstream x : {s, other}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "destroying a context reclaims its streams and events") {
    const CUcontext ctx = create_context();
    const CUstream a = create_stream();
    const CUstream b = create_stream(CU_STREAM_DEFAULT);
    const CUevent e = swcu::test::create_event();
    const size_t streams_before = ctl.reclaimed_handles(SWCU_STREAM);
    const size_t events_before = ctl.reclaimed_handles(SWCU_EVENT);
    CHECK(ctl.live_handles(SWCU_STREAM) == 2);  // a leak shows until the context goes
    CHECK(ctl.live_handles(SWCU_EVENT) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    CHECK(ctl.live_handles(SWCU_EVENT) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_STREAM) == streams_before + 2);
    CHECK(ctl.reclaimed_handles(SWCU_EVENT) == events_before + 1);
    const CUcontext next = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(a), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(b), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(next));
  }

  TEST_CASE_FIXTURE(
      swcu::test::DriverTest,
      "the last release of a primary context reclaims its streams, and so does a reset") {
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(primary));
    const CUstream s = create_stream();
    static_cast<void>(s);
    const size_t before = ctl.reclaimed_handles(SWCU_STREAM);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(0));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_STREAM) == before + 1);
    static_cast<void>(create_stream());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_STREAM) == before + 2);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxSynchronize waits for every stream of the context") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Gate gate;
    gate.start(ctx, s);
    std::atomic<bool> synchronized{false};
    std::thread waiter([&] {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
      SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
      synchronized = true;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(synchronized.load());
    gate.finish();
    waiter.join();
    CHECK(synchronized.load());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize_v2(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  }
}
