// Created contexts and the per-thread context stack.
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "swdriver_test.hpp"

namespace {

CUcontext current() {
  CUcontext ctx = reinterpret_cast<CUcontext>(0x1);
  REQUIRE(swcu::test::api().cuCtxGetCurrent(&ctx) == CUDA_SUCCESS);
  return ctx;
}

CUcontext create(unsigned flags = 0) {
  CUcontext ctx = nullptr;
  REQUIRE(swcu::test::api().cuCtxCreate_v4(&ctx, nullptr, flags, 0) == CUDA_SUCCESS);
  REQUIRE(ctx != nullptr);
  return ctx;
}

using LegacyCtxCreate = CUresult (*)(CUcontext*, unsigned int, CUdevice);

}  // namespace

TEST_SUITE("contexts") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a created context is current until it is destroyed") {
    const CUcontext ctx = create();
    CHECK(current() == ctx);
    CHECK(ctl.context_stack_depth() == 1);
    CHECK(ctl.live_handles(SWCU_CONTEXT) == 1);
    CUdevice dev = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetDevice(&dev));
    CHECK(dev == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(current() == nullptr);
    CHECK(ctl.live_handles(SWCU_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every cuCtxCreate ABI creates a context") {
    const auto legacy = swcu::test::proc<LegacyCtxCreate>("cuCtxCreate", 2000);
    CUcontext a = nullptr, b = nullptr, c = nullptr, d = nullptr, e = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(legacy(&a, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v2(&b, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v3(&c, nullptr, 0, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&d, nullptr, 0, 0));
    CUctxCreateParams params{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&e, &params, 0, 0));
    CHECK(ctl.live_handles(SWCU_CONTEXT) == 5);
    CHECK(ctl.context_stack_depth() == 5);
    unsigned version = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetApiVersion(a, &version));
    CHECK(version == 3010);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetApiVersion(e, &version));
    CHECK(version == 3020);
    for (const CUcontext ctx : {e, d, c, b, a}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "context creation validates its arguments and creates nothing on error") {
    CUcontext ctx = reinterpret_cast<CUcontext>(0x1);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0x100, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuCtxCreate_v4(&ctx, nullptr, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, 0),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, CU_CTX_SCHED_MASK, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 1), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(nullptr, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v3(&ctx, nullptr, -1, 0, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v3(&ctx, nullptr, 1, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(ctx == reinterpret_cast<CUcontext>(0x1));
    CHECK(ctl.live_handles_total() == 0);
    CHECK(ctl.context_stack_depth() == 0);

    // Every valid combination of flags is accepted.
    for (const unsigned sched :
         {CU_CTX_SCHED_AUTO, CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD, CU_CTX_SCHED_BLOCKING_SYNC}) {
      const unsigned flags = sched | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                             CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE |
                             CU_CTX_SYNC_MEMOPS;
      const CUcontext created = create(flags);
      unsigned got = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetFlags(&got));
      CHECK(got == flags);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(created));
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "execution affinity and CIG parameters are refused") {
    CUcontext ctx = nullptr;
    CUexecAffinityParam affinity{};
    affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    affinity.param.smCount.val = 8;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v3(&ctx, &affinity, 1, 0, 0),
                           CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
    CUctxCigParam cig{};
    CUctxCreateParams params{};
    params.cigParams = &cig;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, &params, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
    params.execAffinityParams = &affinity;
    params.numExecAffinityParams = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, &params, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles_total() == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "push and pop follow stack order") {
    const CUcontext a = create();
    const CUcontext b = create();
    CHECK(current() == b);
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    CHECK(popped == b);
    CHECK(current() == a);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(a));
    CHECK(ctl.context_stack_depth() == 3);
    CHECK(current() == a);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    CHECK(current() == nullptr);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPopCurrent_v2(&popped), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPushCurrent_v2(nullptr), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxSetCurrent replaces the top of the stack and NULL pops it") {
    const CUcontext a = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));  // empty stack: a no-op
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(a));        // empty stack: pushes
    CHECK(ctl.context_stack_depth() == 1);
    const CUcontext b = create();
    CHECK(ctl.context_stack_depth() == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(a));  // replaces b
    CHECK(ctl.context_stack_depth() == 2);
    CHECK(current() == a);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    CHECK(ctl.context_stack_depth() == 1);
    CHECK(current() == a);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    CHECK(current() == nullptr);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "destroying a context that is not current leaves the stack alone") {
    const CUcontext a = create();
    const CUcontext b = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    CHECK(ctl.context_stack_depth() == 2);  // [a (stale), b]
    CHECK(current() == b);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    CHECK(ctl.context_stack_depth() == 1);
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice(&dev), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a destroyed context handle is stale") {
    const CUcontext ctx = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPushCurrent_v2(ctx), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT);
    unsigned version = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetApiVersion(ctx, &version), CUDA_ERROR_INVALID_CONTEXT);
    // A new context never reuses a recently destroyed one's handle.
    std::vector<CUcontext> created;
    for (int i = 0; i < 100; ++i) {
      created.push_back(create());
      CHECK(created.back() != ctx);
    }
    for (auto it = created.rbegin(); it != created.rend(); ++it) {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(*it));  // newest first: each is current
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "primary contexts and foreign pointers are not destroyable contexts") {
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(primary), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    int not_a_context = 0;
    const auto foreign = reinterpret_cast<CUcontext>(&not_a_context);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(foreign), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPushCurrent_v2(foreign), CUDA_ERROR_INVALID_CONTEXT);
    unsigned long long id = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetId(foreign, &id), CUDA_ERROR_INVALID_CONTEXT);
    CHECK(not_a_context == 0);
  }

  TEST_CASE_FIXTURE(
      swcu::test::DriverTest,
      "functions that need a current context return CUDA_ERROR_INVALID_CONTEXT without one") {
    constexpr CUresult kNone = CUDA_ERROR_INVALID_CONTEXT;
    CUdevice dev = 0;
    unsigned flags = 0;
    size_t value = 0;
    CUfunc_cache config{};
    int least = 0, greatest = 0;
    unsigned long long id = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice(&dev), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice_v2(&dev, nullptr), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize_v2(nullptr), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetFlags(&flags), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetFlags(0), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetApiVersion(nullptr, &flags), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetId(nullptr, &id), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetCacheConfig(&config), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1), kNone);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetStreamPriorityRange(&least, &greatest), kNone);
    CUcontext ctx = reinterpret_cast<CUcontext>(0x1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&ctx));
    CHECK(ctx == nullptr);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the context stack belongs to the calling thread") {
    const CUcontext ctx = create();
    CUcontext seen = reinterpret_cast<CUcontext>(0x1);
    int depth = -1;
    CUdevice dev = -1;
    CUresult pushed = CUDA_ERROR_UNKNOWN;
    std::thread([&] {
      swcu::test::api().cuCtxGetCurrent(&seen);
      depth = ctl.context_stack_depth();
      pushed = swcu::test::api().cuCtxPushCurrent_v2(ctx);
      swcu::test::api().cuCtxGetDevice(&dev);
      swcu::test::api().cuCtxPopCurrent_v2(nullptr);
    }).join();
    CHECK(seen == nullptr);
    CHECK(depth == 0);
    CHECK(pushed == CUDA_SUCCESS);
    CHECK(dev == 0);
    CHECK(current() == ctx);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(
      swcu::test::DriverTest,
      "a context destroyed while current on another thread is reported as destroyed there") {
    const CUcontext ctx = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    CUresult before = CUDA_ERROR_UNKNOWN, after = CUDA_ERROR_UNKNOWN, popped = CUDA_ERROR_UNKNOWN;
    std::mutex m;
    std::condition_variable cv;
    int step = 0;
    std::thread other([&] {
      CUdevice dev = -1;
      swcu::test::api().cuCtxPushCurrent_v2(ctx);
      before = swcu::test::api().cuCtxGetDevice(&dev);
      {
        std::unique_lock lock(m);
        step = 1;
        cv.notify_all();
        cv.wait(lock, [&] { return step == 2; });
      }
      after = swcu::test::api().cuCtxGetDevice(&dev);
      popped = swcu::test::api().cuCtxPopCurrent_v2(nullptr);
    });
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return step == 1; });
      CHECK(cu.cuCtxDestroy_v2(ctx) == CUDA_SUCCESS);
      step = 2;
      cv.notify_all();
    }
    other.join();
    CHECK(before == CUDA_SUCCESS);
    CHECK(after == CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK(popped == CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "limits have plausible defaults and keep the values set") {
    const CUcontext ctx = create();
    const std::vector<std::pair<CUlimit, size_t>> defaults = {
        {CU_LIMIT_STACK_SIZE, 1024},
        {CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20},
        {CU_LIMIT_MALLOC_HEAP_SIZE, 8 << 20},
        {CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 2},
        {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048},
        {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32},
        {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0},
        {CU_LIMIT_SHMEM_SIZE, 0},
        {CU_LIMIT_CIG_ENABLED, 0},
        {CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, 1},
    };
    REQUIRE(defaults.size() == CU_LIMIT_MAX);
    for (const auto& [limit, expected] : defaults) {
      INFO(static_cast<int>(limit));
      size_t value = 12345;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&value, limit));
      CHECK(value == expected);
    }
    for (const CUlimit limit :
         {CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE,
          CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
          CU_LIMIT_PERSISTING_L2_CACHE_SIZE}) {
      INFO(static_cast<int>(limit));
      size_t value = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetLimit(limit, 64));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&value, limit));
      CHECK(value == 64);
    }
    size_t value = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 4096));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&value, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
    CHECK(value == 128);  // clamped, as the documentation allows
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4),
                           CUDA_ERROR_UNSUPPORTED_LIMIT);  // compute capability 9.0
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetLimit(&value, swcu::test::invalid_enum<CUlimit>(99)),
                           CUDA_ERROR_UNSUPPORTED_LIMIT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetLimit(swcu::test::invalid_enum<CUlimit>(99), 1),
                           CUDA_ERROR_UNSUPPORTED_LIMIT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE),
                           CUDA_ERROR_INVALID_VALUE);
    // Limits belong to the context.
    const CUcontext other = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE));
    CHECK(value == 1024);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "stream priorities range from 0 down to -5") {
    const CUcontext ctx = create();
    int least = 7, greatest = 7;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 0);
    CHECK(greatest == -5);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetStreamPriorityRange(nullptr, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the cache configuration round-trips and rejects unknown values") {
    const CUcontext ctx = create();
    CUfunc_cache config = CU_FUNC_CACHE_PREFER_EQUAL;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCacheConfig(&config));
    CHECK(config == CU_FUNC_CACHE_PREFER_NONE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCacheConfig(&config));
    CHECK(config == CU_FUNC_CACHE_PREFER_SHARED);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetCacheConfig(swcu::test::invalid_enum<CUfunc_cache>(4)),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetCacheConfig(nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuCtxSetFlags replaces the flags of the current context") {
    const CUcontext ctx = create(CU_CTX_SCHED_SPIN);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_SYNC_MEMOPS));
    unsigned flags = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetFlags(&flags));
    CHECK(flags == (CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_SYNC_MEMOPS));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSetFlags(0x1000), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetFlags(nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "context ids are unique and NULL means the current context") {
    const CUcontext a = create();
    const CUcontext b = create();
    unsigned long long ida = 0, idb = 0, idcur = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetId(a, &ida));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetId(b, &idb));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetId(nullptr, &idcur));
    CHECK(ida != idb);
    CHECK(idcur == idb);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetId(a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the CUDA 13 context queries take a context or NULL for the current one") {
    const CUcontext a = create();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    CUdevice dev = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetDevice_v2(&dev, a));
    CHECK(dev == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize_v2(a));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize_v2(nullptr), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice_v2(nullptr, a), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice_v2(&dev, a), CUDA_ERROR_INVALID_CONTEXT);
  }
}
