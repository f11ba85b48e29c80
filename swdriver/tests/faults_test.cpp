// Fault rules added through the control API.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "swdriver_test.hpp"

namespace {

CUresult device_count(int* out = nullptr) {
  int count = 0;
  return swcu::test::api().cuDeviceGetCount(out != nullptr ? out : &count);
}

}  // namespace

TEST_SUITE("fault injection") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "an N rule fails the Nth matching call only") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:2:CUDA_ERROR_UNKNOWN") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an N+ rule fails the Nth and every later matching call") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:3+:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    for (int i = 0; i < 5; ++i) SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_OUT_OF_MEMORY);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a *%K rule fails every Kth matching call") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:*%3:CUDA_ERROR_LAUNCH_FAILED") == 0);
    std::vector<CUresult> results;
    for (int i = 0; i < 9; ++i) results.push_back(device_count());
    for (int i = 0; i < 9; ++i) {
      INFO("call ", i + 1);
      CHECK(results[static_cast<size_t>(i)] ==
            ((i + 1) % 3 == 0 ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS));
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a base name matches every ABI variant and an exported name only itself") {
    REQUIRE(ctl.add_fault_rule("cuCtxCreate:1+:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUcontext ctx = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v2(&ctx, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    ctl.clear_fault_rules();

    REQUIRE(ctl.add_fault_rule("cuCtxCreate_v4:1+:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v2(&ctx, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a rule counts calls from the time it is added") {
    for (int i = 0; i < 3; ++i) SWCU_TEST_REQUIRE_SUCCESS(device_count());
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1:CUDA_ERROR_UNKNOWN") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a failed call changes no state and leaves its outputs untouched") {
    REQUIRE(ctl.add_fault_rule("cuCtxCreate:1:CUDA_ERROR_OUT_OF_MEMORY;cuDeviceGetCount:1:2;"
                               "cuDevicePrimaryCtxRetain:1:CUDA_ERROR_UNKNOWN") == 0);
    const auto sentinel = reinterpret_cast<CUcontext>(0x1234);
    CUcontext ctx = sentinel;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(ctx == sentinel);
    CHECK(ctl.live_handles_total() == 0);
    CHECK(ctl.context_stack_depth() == 0);
    int count = -7;
    SWCU_TEST_CHECK_RESULT(device_count(&count), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(count == -7);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_ERROR_UNKNOWN);
    CHECK(ctx == sentinel);
    unsigned flags = 0;
    int active = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(active == 0);
    // A fault rule fires even where the call itself would have failed.
    REQUIRE(ctl.add_fault_rule("cuCtxPopCurrent:1:CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPopCurrent_v2(nullptr), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxPopCurrent_v2(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a call failed by a rule is still counted") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1+:CUDA_ERROR_UNKNOWN") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    CHECK(ctl.call_count("cuDeviceGetCount") == 2);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "error codes may be given by number") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1:2") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_OUT_OF_MEMORY);
    REQUIRE(ctl.add_fault_rule(" cuDeviceGetCount : 1 : 999 ") == 0);  // blanks are ignored
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1:777") == 0);  // not a code cuda.h knows
    CHECK(static_cast<int>(device_count()) == 777);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "when several rules fire the first one added wins and all count") {
    REQUIRE(
        ctl.add_fault_rule(
            "cuDeviceGetCount:1:CUDA_ERROR_UNKNOWN;cuDeviceGetCount:1+:CUDA_ERROR_OUT_OF_MEMORY") ==
        0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_OUT_OF_MEMORY);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "malformed rules are refused with a message that names them") {
    struct Bad {
      const char* rules;
      const char* expected;  // part of last_error()
    };
    const std::vector<Bad> bad = {
        {"cuDeviceGetCount", "\"cuDeviceGetCount\" is malformed: expected name:when:code"},
        {"cuDeviceGetCount:1", "expected name:when:code"},
        {"a:1:2:3", "expected name:when:code"},
        {"cuNoSuchFunction:1:CUDA_ERROR_UNKNOWN", "expected a driver function"},
        {"cuDeviceGetCount:0:CUDA_ERROR_UNKNOWN", "expected N, N+ or *%K"},
        {"cuDeviceGetCount:first:CUDA_ERROR_UNKNOWN", "got \"first\""},
        {"cuDeviceGetCount:*%0:CUDA_ERROR_UNKNOWN", "expected N, N+ or *%K"},
        {"cuDeviceGetCount:2++:CUDA_ERROR_UNKNOWN", "expected N, N+ or *%K"},
        {"cuDeviceGetCount:-1:CUDA_ERROR_UNKNOWN", "expected N, N+ or *%K"},
        {"cuDeviceGetCount:1:CUDA_ERROR_NO_SUCH_THING", "expected a CUresult name"},
        {"cuDeviceGetCount:1:cuda_error_unknown", "expected a CUresult name"},
        {"cuDeviceGetCount:1:CUDA_SUCCESS", "not CUDA_SUCCESS"},
        {"cuDeviceGetCount:1:0", "expected an error code from 1 to 1023, got \"0\""},
        {"cuDeviceGetCount:1:1024", "expected an error code from 1 to 1023"},
        {"cuDeviceGetCount:1:", "expected a CUresult name"},
        {"cuDeviceGetCount:1:CUDA_ERROR_UNKNOWN;cuDeviceGetCount:x:2", "\"cuDeviceGetCount:x:2\""},
        {"", "no fault rule"},
        {" ; ", "no fault rule"},
    };
    for (const Bad& b : bad) {
      INFO(b.rules);
      CHECK(ctl.add_fault_rule(b.rules) == -1);
      CHECK(std::string(ctl.last_error()).find(b.expected) != std::string::npos);
    }
    CHECK(ctl.add_fault_rule(nullptr) == -1);
    // Nothing was added, not even the valid first rule of a malformed list.
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:5:2") == 0);
    CHECK(std::string(ctl.last_error()).empty());
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "clearing the rules stops every fault") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:1+:2;cuCtxGetCurrent:1+:2") == 0);
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_ERROR_OUT_OF_MEMORY);
    ctl.clear_fault_rules();
    SWCU_TEST_CHECK_RESULT(device_count(), CUDA_SUCCESS);
    CUcontext ctx = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "rules apply to unimplemented functions and to those that need no cuInit") {
    REQUIRE(ctl.add_fault_rule("cuGraphicsUnregisterResource:1:CUDA_ERROR_ALREADY_MAPPED;"
                               "cuDriverGetVersion:1:CUDA_ERROR_UNKNOWN;"
                               "cuGetProcAddress:1:CUDA_ERROR_NOT_PERMITTED") == 0);
    const auto unregister = reinterpret_cast<CUresult (*)(CUgraphicsResource)>(
        swcu::test::lookup("cuGraphicsUnregisterResource", 3000));  // cuGetProcAddress_v2 fails
    CHECK((unregister == nullptr));
    const auto unregister2 = swcu::test::proc<PFN_cuGraphicsUnregisterResource_v3000>(
        "cuGraphicsUnregisterResource", 3000);
    SWCU_TEST_CHECK_RESULT(unregister2(nullptr), CUDA_ERROR_ALREADY_MAPPED);
    SWCU_TEST_CHECK_RESULT(unregister2(nullptr), CUDA_ERROR_NOT_SUPPORTED);
    int version = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDriverGetVersion(&version), CUDA_ERROR_UNKNOWN);
    CHECK(version == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "rules count calls from many threads exactly") {
    REQUIRE(ctl.add_fault_rule("cuDeviceGetCount:*%10:CUDA_ERROR_UNKNOWN") == 0);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&failures] {
        for (int i = 0; i < 1000; ++i) {
          if (device_count() == CUDA_ERROR_UNKNOWN) ++failures;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(failures == 400);
    CHECK(ctl.call_count("cuDeviceGetCount") == 4000);
  }
}
