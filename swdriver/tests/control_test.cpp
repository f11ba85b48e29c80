// The control API: identification, call counters, live handles, the context stack depth.
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "swdriver_test.hpp"

TEST_SUITE("control API") {
  TEST_CASE("the control table identifies the software driver") {
    const swcu_control& ctl = swcu::test::control();
    CHECK(ctl.struct_size >= sizeof(swcu_control));
    CHECK(ctl.version == SWCU_CONTROL_VERSION);
    CHECK(ctl.version >= 2);  // reclaimed_handles
    CHECK(ctl.reclaimed_handles(swcu::test::invalid_enum<swcu_handle_kind>(-1)) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_HANDLE_KIND_COUNT) == 0);
    const void* table = reinterpret_cast<const void*>(0x1);
    CUuuid other{};
    std::memcpy(other.bytes, "not-the-control!", sizeof other.bytes);
    CHECK(swcu::test::api().cuGetExportTable(&table, &other) == CUDA_ERROR_INVALID_VALUE);
    CHECK(table == reinterpret_cast<const void*>(0x1));
    CHECK(swcu::test::api().cuGetExportTable(nullptr, &SWCU_CONTROL_TABLE_ID) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(swcu::test::api().cuGetExportTable(&table, nullptr) == CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a base name counts every ABI variant and an exported name only itself") {
    CUcontext a = nullptr, b = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v2(&a, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&b, nullptr, 0, 0));
    CHECK(ctl.call_count("cuCtxCreate") == 2);
    CHECK(ctl.call_count("cuCtxCreate_v2") == 1);
    CHECK(ctl.call_count("cuCtxCreate_v4") == 1);
    CHECK(ctl.call_count("cuCtxCreate_v3") == 0);
    CHECK(ctl.call_count("cuNoSuchFunction") == 0);
    CHECK(ctl.call_count(nullptr) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "direct calls and calls through cuGetProcAddress count the same") {
    const auto direct = reinterpret_cast<PFN_cuDeviceGetCount_v2000>(
        dlsym(swcu::test::library(), "cuDeviceGetCount"));
    REQUIRE((direct != nullptr));
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(direct(&count));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    CHECK(ctl.call_count("cuDeviceGetCount") == 2);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "control calls are not counted and total_call_count sums the rest") {
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&ctx));
    static_cast<void>(ctl.live_handles_total());
    static_cast<void>(ctl.call_count("cuDeviceGetCount"));
    static_cast<void>(ctl.context_stack_depth());
    CHECK(ctl.total_call_count() == 3);
    ctl.reset_call_counts();
    CHECK(ctl.total_call_count() == 0);
    CHECK(ctl.call_count("cuDeviceGetCount") == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "call_counts lists the non-zero counters") {
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&ctx));
    CHECK(ctl.call_counts(nullptr, 0) == 2);
    std::vector<swcu_call_count> counts(1);
    CHECK(ctl.call_counts(counts.data(), counts.size()) == 2);  // only one fits
    counts.resize(8);
    REQUIRE(ctl.call_counts(counts.data(), counts.size()) == 2);
    CHECK(std::string(counts[0].name) == "cuCtxGetCurrent");  // sorted by exported name
    CHECK(std::string(counts[0].base_name) == "cuCtxGetCurrent");
    CHECK(counts[0].calls == 1);
    CHECK(std::string(counts[1].name) == "cuDeviceGetCount");
    CHECK(counts[1].calls == 2);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "counters report the exported name and its base name") {
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    std::vector<swcu_call_count> counts(4);
    REQUIRE(ctl.call_counts(counts.data(), counts.size()) == 2);
    CHECK(std::string(counts[0].name) == "cuCtxCreate_v4");
    CHECK(std::string(counts[0].base_name) == "cuCtxCreate");
    CHECK(std::string(counts[1].name) == "cuCtxDestroy_v2");
    CHECK(std::string(counts[1].base_name) == "cuCtxDestroy");
  }

  TEST_CASE("handle kinds have readable names") {
    const swcu_control& ctl = swcu::test::control();
    CHECK(std::string(ctl.handle_kind_name(SWCU_PRIMARY_CONTEXT)) == "primary context");
    CHECK(std::string(ctl.handle_kind_name(SWCU_CONTEXT)) == "context");
    CHECK(std::string(ctl.handle_kind_name(SWCU_STREAM)) == "stream");
    CHECK(std::string(ctl.handle_kind_name(SWCU_DEVICE_ALLOCATION)) == "device allocation");
    CHECK(std::string(ctl.handle_kind_name(SWCU_IPC_MAPPING)) == "ipc mapping");
    CHECK(std::string(ctl.handle_kind_name(SWCU_HANDLE_KIND_COUNT)) == "unknown");
    CHECK(std::string(ctl.handle_kind_name(swcu::test::invalid_enum<swcu_handle_kind>(-1))) ==
          "unknown");
    for (int k = 0; k < SWCU_HANDLE_KIND_COUNT; ++k) {
      CHECK(std::string(ctl.handle_kind_name(static_cast<swcu_handle_kind>(k))) != "unknown");
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "live handles are counted per kind") {
    CUcontext a = nullptr, b = nullptr, primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&a, nullptr, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&b, nullptr, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    CHECK(ctl.live_handles(SWCU_CONTEXT) == 2);
    CHECK(ctl.live_handles(SWCU_PRIMARY_CONTEXT) == 1);
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    CHECK(ctl.live_handles(SWCU_HANDLE_KIND_COUNT) == 0);
    CHECK(ctl.live_handles_total() == 3);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    CHECK(ctl.live_handles_total() == 0);
  }

  TEST_CASE("the last control error belongs to the calling thread") {
    const swcu_control& ctl = swcu::test::control();
    REQUIRE(ctl.add_fault_rule("nonsense") == -1);
    std::string other;
    std::thread([&] { other = ctl.last_error(); }).join();
    CHECK(other.empty());
    CHECK(!std::string(ctl.last_error()).empty());
    ctl.clear_fault_rules();
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the context stack depth follows pushes and pops") {
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0));
    CHECK(ctl.context_stack_depth() == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
    CHECK(ctl.context_stack_depth() == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.context_stack_depth() == 0);
  }
}
