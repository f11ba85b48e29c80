// SWCUDA_EXEC=deferred: nothing runs until a call synchronizes, and then only what it needs.
// CMakeLists.txt runs each test case of the "deferred" suite in a process of its own with that
// setting (without a filter the suite is left out).
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_event;
using swcu::test::create_stream;

void nothing(void*) {}

}  // namespace

TEST_SUITE("deferred") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "deferred: nothing runs until something synchronizes") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent e = create_event();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 2));
    for (int i = 0; i < 3; ++i) {  // queries never make progress
      SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
      SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    }
    CHECK(log.order().empty());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));  // runs up to the record only
    CHECK(log.order() == std::vector{1});
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(log.order() == std::vector{1, 2});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: synchronizing runs the producers of the events it waits for") {
    const CUcontext ctx = create_context();
    const CUstream a = create_stream();
    const CUstream b = create_stream();
    const CUstream c = create_stream();
    const CUevent a_done = create_event();
    const CUevent b_done = create_event();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(a_done, a));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 4));  // after the record: not needed
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(b, 2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(b, a_done, 0));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(b, 3));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(b_done, b));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(c, 5));  // independent
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(b_done));
    const auto order = log.order();
    REQUIRE(order.size() == 3);
    CHECK(order.back() == 3);  // 1 and 2 first, in either order
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(a), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(c), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());  // everything
    CHECK(log.order().size() == 5);
    for (const CUstream s : {a, b, c}) SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    for (const CUstream s : {a, b, c}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    for (const CUevent e : {a_done, b_done}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "deferred: the legacy default stream's barrier") {
    const CUcontext ctx = create_context();
    const CUstream blocking = create_stream(CU_STREAM_DEFAULT);
    const CUstream non_blocking = create_stream(CU_STREAM_NON_BLOCKING);
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(blocking, 1));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(non_blocking, 2));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(CU_STREAM_LEGACY, 3));  // waits for 1, not for 2
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(blocking, 4));          // waits for 3
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(non_blocking, 5));      // waits for nothing but 2
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(blocking));
    CHECK(log.order() == std::vector{1, 3, 4});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(non_blocking));
    CHECK(log.order() == std::vector{1, 3, 4, 2, 5});
    // Synchronizing the legacy stream also waits for what its barrier would.
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(blocking, 6));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(nullptr), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(nullptr));
    CHECK(log.order().back() == 6);
    for (const CUstream s : {blocking, non_blocking})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: elapsed time is not ready until both records ran") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = create_event();
    const CUevent stop = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(s, nothing, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, s));
    float ms = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, start, stop), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(start));
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, start, stop), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(stop));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(0.001));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: a destroyed stream's work runs when the context synchronizes") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    CHECK(log.order().empty());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(log.order() == std::vector{1});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: destroying a context runs its pending work first") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 1));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(nullptr, 2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(log.order() == std::vector{1, 2});
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: an event re-recorded later does not move a wait") {
    const CUcontext ctx = create_context();
    const CUstream a = create_stream();
    const CUstream b = create_stream();
    const CUevent e = create_event();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(b, e, 0));  // waits for 1 only
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(a, 2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, a));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(b, 3));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(b));
    CHECK(log.order() == std::vector{1, 3});
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);  // the latest capture
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    for (const CUstream s : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}

TEST_SUITE("deferred") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: stream-ordered memory is usable in stream order only") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 64, s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    // Not allocated yet as far as the host is concerned...
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD8_v2(p, 1, 64), CUDA_ERROR_INVALID_VALUE);
    std::vector<unsigned char> host(64, 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(host.data(), p, 64), CUDA_ERROR_INVALID_VALUE);
    // ...but work after the allocation in stream order may use it.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 9, 64, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(host.data(), p, 64, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD8Async(p, 1, 64, s),
                           CUDA_ERROR_INVALID_VALUE);  // freed later
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
    CHECK(host[0] == 0);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);  // the free is still queued
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(host == std::vector<unsigned char>(64, 9));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: a synchronous copy waits for the legacy barrier") {
    const CUcontext ctx = create_context();
    const CUstream blocking = create_stream(CU_STREAM_DEFAULT);
    const CUstream non_blocking = create_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr a = 0, b = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&a, 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&b, 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(a, 1, 4, blocking));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(b, 2, 4, non_blocking));
    unsigned char host[4] = {};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(host, a, 4));  // ran the blocking stream's memset
    CHECK(host[0] == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(host, b, 4));  // did not run the other one
    CHECK(host[0] == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(non_blocking), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(non_blocking));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(host, b, 4));
    CHECK(host[0] == 2);
    // An async copy from pageable memory is staged: the buffer may change at once.
    std::vector<unsigned char> pageable(4, 5);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(a, pageable.data(), 4, blocking));
    pageable.assign(4, 6);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(blocking));
    CHECK(reinterpret_cast<unsigned char*>(a)[3] == 5);
    // Host-to-host async copies are synchronous.
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 4, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(pinned),
                                               reinterpret_cast<CUdeviceptr>(pageable.data()), 4,
                                               non_blocking));
    CHECK(static_cast<unsigned char*>(pinned)[0] == 6);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    for (const CUdeviceptr p : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    for (const CUstream s : {blocking, non_blocking})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: freeing memory waits for the work that uses it") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 16));
    std::vector<unsigned char> host(16, 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(d, 3, 16, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(host.data(), d, 16, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));  // runs the context's work first
    CHECK(host == std::vector<unsigned char>(16, 3));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
