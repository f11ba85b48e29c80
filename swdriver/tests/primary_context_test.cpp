// Primary contexts: retain/release reference counting, flags, reset.
#include "swdriver_test.hpp"

namespace {

struct PrimaryState {
  unsigned flags;
  int active;
};

PrimaryState primary_state(CUdevice dev = 0) {
  PrimaryState s{~0U, -1};
  REQUIRE(swcu::test::api().cuDevicePrimaryCtxGetState(dev, &s.flags, &s.active) == CUDA_SUCCESS);
  return s;
}

}  // namespace

TEST_SUITE("primary contexts") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "retaining the primary context twice gives the same handle") {
    CUcontext a = nullptr, b = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&a, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&b, 0));
    CHECK(a != nullptr);
    CHECK(a == b);
    CHECK(primary_state().active == 1);
    CHECK(ctl.live_handles(SWCU_PRIMARY_CONTEXT) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK(primary_state().active == 1);  // one reference left
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK(primary_state().active == 0);
    CHECK(ctl.live_handles(SWCU_PRIMARY_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "retaining the primary context does not make it current") {
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    CUcontext current = reinterpret_cast<CUcontext>(0x1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&current));
    CHECK(current == nullptr);
    CHECK(ctl.context_stack_depth() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  TEST_CASE_FIXTURE(
      swcu::test::DriverTest,
      "releasing a primary context that is not retained is CUDA_ERROR_INVALID_CONTEXT") {
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);
    const auto legacy = swcu::test::proc<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease", 7000);
    SWCU_TEST_CHECK_RESULT(legacy(0), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&ctx, 0));
    SWCU_TEST_REQUIRE_SUCCESS(legacy(0));
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a released primary context can be retained again") {
    CUcontext first = nullptr, second = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&first, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&second, 0));
    CHECK(second != nullptr);
    CHECK(primary_state().active == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(second));
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice(&dev), CUDA_SUCCESS);
    CHECK(dev == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the handle of a fully released primary context is stale") {
    CUcontext old = nullptr, fresh = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&old, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPushCurrent_v2(old), CUDA_ERROR_INVALID_CONTEXT);
    unsigned version = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetApiVersion(old, &version), CUDA_ERROR_INVALID_CONTEXT);
    // A new activation is a new context; the old handle stays stale.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&fresh, 0));
    CHECK(fresh != old);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetApiVersion(old, &version), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a primary context current on this thread is destroyed by the last release") {
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&ctx, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));  // does not pop
    CHECK(ctl.context_stack_depth() == 1);
    CUcontext current = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&current));
    CHECK(current == ctx);
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice(&dev), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    CHECK(popped == ctx);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "primary context flags are validated and kept while inactive") {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxSetFlags_v2(0, CU_CTX_SCHED_YIELD));
    CHECK(primary_state().flags == CU_CTX_SCHED_YIELD);
    CHECK(primary_state().active == 0);
    SWCU_TEST_CHECK_RESULT(
        cu.cuDevicePrimaryCtxSetFlags_v2(0, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxSetFlags_v2(0, 0x100), CUDA_ERROR_INVALID_VALUE);
    CHECK(primary_state().flags == CU_CTX_SCHED_YIELD);

    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&ctx, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
    unsigned flags = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetFlags(&flags));
    CHECK(flags == CU_CTX_SCHED_YIELD);

    // The legacy ABI refuses while the context is active; _v2 changes the live context.
    const auto legacy =
        swcu::test::proc<CUresult (*)(CUdevice, unsigned)>("cuDevicePrimaryCtxSetFlags", 7000);
    SWCU_TEST_CHECK_RESULT(legacy(0, CU_CTX_SCHED_SPIN), CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxSetFlags_v2(0, CU_CTX_SCHED_BLOCKING_SYNC));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetFlags(&flags));
    CHECK(flags == CU_CTX_SCHED_BLOCKING_SYNC);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK(primary_state().flags == CU_CTX_SCHED_BLOCKING_SYNC);
    SWCU_TEST_REQUIRE_SUCCESS(legacy(0, 0));  // inactive again
    CHECK(primary_state().flags == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "resetting a retained primary context keeps it and restores its settings") {
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&ctx, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
    size_t stack = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, stack * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(0));
    CHECK(primary_state().active == 1);
    size_t after = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&after, CU_LIMIT_STACK_SIZE));
    CHECK(after == stack);
    CUfunc_cache config = CU_FUNC_CACHE_PREFER_EQUAL;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCacheConfig(&config));
    CHECK(config == CU_FUNC_CACHE_PREFER_NONE);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(0));  // inactive: nothing to reset
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the state query needs both output pointers") {
    unsigned flags = 0;
    int active = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxGetState(0, nullptr, &active),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxGetState(0, &flags, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRetain(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  }
}
