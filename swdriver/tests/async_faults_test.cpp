// Fault rules with the ':async' and ':sticky' modifiers.
#include <string>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_event;
using swcu::test::create_stream;

struct Status {
  std::vector<CUresult> seen;
};

void record_status(CUstream, CUresult status, void* data) {
  static_cast<Status*>(data)->seen.push_back(status);
}

}  // namespace

TEST_SUITE("asynchronous and sticky faults") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "modifiers are parsed after the code") {
    CHECK(ctl.add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    CHECK(ctl.add_fault_rule("cuLaunchHostFunc:1:719:sticky") == 0);
    CHECK(ctl.add_fault_rule(" cuLaunchHostFunc : 2+ : 2 : async : sticky ") == 0);
    CHECK(ctl.add_fault_rule("cuLaunchHostFunc:1:2:sticky:async") == 0);
    for (const char* bad : {"cuLaunchHostFunc:1:2:later", "cuLaunchHostFunc:1:2:", "a:1:2:3",
                            "cuLaunchHostFunc:1:2:async:ASYNC"}) {
      INFO(bad);
      CHECK(ctl.add_fault_rule(bad) == -1);
      CHECK(std::string(ctl.last_error()).find("expected name:when:code[:async][:sticky]") !=
            std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async rule fails the operation, not the call, and is reported once") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:2:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    swcu::test::Log log;
    for (int i = 1; i <= 3; ++i) SWCU_TEST_CHECK_RESULT(log.enqueue(s, i), CUDA_SUCCESS);
    CHECK(log.order() == std::vector{1, 3});  // the failed host function was not called
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_SUCCESS);  // reported already
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async error surfaces from the first call that looks") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent before = create_event();
    const CUevent after = create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(before, s));
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:1+:CUDA_ERROR_LAUNCH_TIMEOUT:async") == 0);
    auto fail_once = [&] {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(
          s, [](void*) {}, nullptr));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(after, s));
    };
    fail_once();
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_LAUNCH_TIMEOUT);
    SWCU_TEST_CHECK_RESULT(cu.cuEventSynchronize(after), CUDA_SUCCESS);
    fail_once();
    SWCU_TEST_CHECK_RESULT(cu.cuEventSynchronize(before), CUDA_SUCCESS);  // captured earlier work
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(after), CUDA_ERROR_LAUNCH_TIMEOUT);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
    fail_once();
    SWCU_TEST_CHECK_RESULT(cu.cuEventSynchronize(after), CUDA_ERROR_LAUNCH_TIMEOUT);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    fail_once();
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
    ctl.clear_fault_rules();
    for (const CUevent e : {before, after}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async rule on a call that enqueues nothing fails the call") {
    const CUcontext ctx = create_context();
    REQUIRE(ctl.add_fault_rule("cuStreamCreate:1:CUDA_ERROR_OUT_OF_MEMORY:async") == 0);
    CUstream s = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreate(&s, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    // A call refused for its arguments drops the async fault with the operation.
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuLaunchHostFunc(nullptr, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a sticky rule breaks the current context until destroyed") {
    const CUcontext healthy = create_context();
    const CUstream healthy_stream = create_stream();
    const CUcontext broken = create_context();
    const CUstream s = create_stream();
    const CUevent e = create_event();
    REQUIRE(ctl.add_fault_rule("cuStreamQuery:1:CUDA_ERROR_ILLEGAL_ADDRESS:sticky") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    ctl.clear_fault_rules();  // the context stays broken without the rule
    CUstream created = nullptr;
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(nullptr), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCreate(&created, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevice(&dev), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuEventRecord(e, s), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuEventDestroy_v2(e), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(created == nullptr);
    // Other contexts and calls that need no context are unaffected.
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamQuery(healthy_stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize_v2(healthy));
    // Destroying it reclaims what it held.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(broken));
    CHECK(ctl.live_handles(SWCU_STREAM) == 1);
    CHECK(ctl.live_handles(SWCU_EVENT) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(healthy_stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(healthy));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async sticky rule breaks the context when its operation executes") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:2:CUDA_ERROR_LAUNCH_FAILED:async:sticky") == 0);
    swcu::test::Log log;
    SWCU_TEST_CHECK_RESULT(log.enqueue(s, 1), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(log.enqueue(s, 2), CUDA_SUCCESS);  // ran (and failed) at enqueue
    SWCU_TEST_CHECK_RESULT(log.enqueue(s, 3), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);  // sticky
    CHECK(log.order() == std::vector{1});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "resetting a primary context clears its sticky error") {
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(primary));
    REQUIRE(ctl.add_fault_rule("cuCtxSynchronize:1:CUDA_ERROR_HARDWARE_STACK_ERROR:sticky") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_HARDWARE_STACK_ERROR);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_HARDWARE_STACK_ERROR);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(0));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a sticky rule without a current context breaks nothing") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1:CUDA_ERROR_ILLEGAL_ADDRESS:sticky") == 0);
    int count = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_ERROR_ILLEGAL_ADDRESS);
    const CUcontext ctx = create_context();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}

TEST_SUITE("deferred") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: after a sticky failure callbacks get the error and host functions "
                    "do not run") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    Status status;
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamAddCallback(s, record_status, &status, 0));
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_ILLEGAL_INSTRUCTION:async:sticky") ==
            0);
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 1));  // fails when it executes
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 2));  // skipped: the context is broken by then
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamAddCallback(s, record_status, &status, 0));
    CHECK(status.seen.empty());
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    CHECK(status.seen == std::vector{CUDA_SUCCESS, CUDA_ERROR_ILLEGAL_INSTRUCTION});
    CHECK(log.order().empty());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: an async error waits for its operation to run") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    REQUIRE(ctl.add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(
        s, [](void*) {}, nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
