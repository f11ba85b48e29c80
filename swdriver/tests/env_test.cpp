// Test cases that need a process of their own: "fresh process" (nothing may have called cuInit)
// and "env" (a particular SWCUDA_* configuration). CMakeLists.txt runs each one separately with
// its environment; without a --test-case/--test-suite filter they are left out.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "module_support.hpp"
#include "swdriver_test.hpp"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("fresh process") {
  TEST_CASE("before cuInit only the documented functions work") {
    const swcu::test::Api& cu = swcu::test::api();  // resolving needs no cuInit
    const swcu_control& ctl = swcu::test::control();
    int value = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&value), CUDA_ERROR_NOT_INITIALIZED);
    CUcontext ctx = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetCurrent(&ctx), CUDA_ERROR_NOT_INITIALIZED);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0), CUDA_ERROR_NOT_INITIALIZED);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_ERROR_NOT_INITIALIZED);
    const auto unimplemented = reinterpret_cast<CUresult (*)()>(
        dlsym(swcu::test::library(), "cuGraphicsUnregisterResource"));
    REQUIRE((unimplemented != nullptr));
    SWCU_TEST_CHECK_RESULT(unimplemented(), CUDA_ERROR_NOT_INITIALIZED);

    SWCU_TEST_CHECK_RESULT(cu.cuDriverGetVersion(&value), CUDA_SUCCESS);
    CHECK(value == 13000);
    const char* text = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &text), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &text), CUDA_SUCCESS);
    void* p = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuGetProcAddress_v1("cuInit", &p, 2000, 0), CUDA_SUCCESS);
    CHECK(p != nullptr);
    CHECK(ctl.call_count("cuDeviceGetCount") == 1);  // refused calls are counted too

    SWCU_TEST_CHECK_RESULT(cu.cuInit(1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&value), CUDA_ERROR_NOT_INITIALIZED);
    SWCU_TEST_CHECK_RESULT(cu.cuInit(0), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuInit(0), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&value), CUDA_SUCCESS);
    CHECK(value == 1);
    SWCU_TEST_CHECK_RESULT(unimplemented(), CUDA_ERROR_NOT_SUPPORTED);
  }
}

TEST_SUITE("env") {
  TEST_CASE("with zero devices cuInit reports CUDA_ERROR_NO_DEVICE") {
    const swcu::test::Api& cu = swcu::test::api();
    SWCU_TEST_CHECK_RESULT(cu.cuInit(0), CUDA_ERROR_NO_DEVICE);
    int count = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    SWCU_TEST_CHECK_RESULT(cu.cuInit(0), CUDA_ERROR_NO_DEVICE);
  }

  TEST_CASE("an older driver version caps what cuGetProcAddress hands out") {
    const swcu::test::Api& cu = swcu::test::api();
    int version = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDriverGetVersion(&version));
    CHECK(version == 12040);
    void* p = reinterpret_cast<void*>(0x1);
    CUdriverProcAddressQueryResult status{};
    SWCU_TEST_CHECK_RESULT(cu.cuGetProcAddress_v2("cuCtxCreate", &p, 12050, 0, &status),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(p == reinterpret_cast<void*>(0x1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGetProcAddress_v2("cuCtxCreate", &p, 12040, 0, &status));
    CHECK(swcu::test::exported_name(p) == "cuCtxCreate_v3");
    SWCU_TEST_CHECK_RESULT(cu.cuGetProcAddress_v1("cuCtxCreate", &p, 13000, 0),
                           CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "three devices have distinct PCI bus ids and UUIDs") {
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    REQUIRE(count == 3);
    CUuuid uuids[3];
    for (CUdevice d = 0; d < 3; ++d) {
      char id[16];
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetPCIBusId(id, sizeof id, d));
      const std::string expected = "0000:1" + std::string(1, "ABC"[d]) + ":00.0";
      CHECK(std::string(id) == expected);
      CUdevice found = -1;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetByPCIBusId(&found, id));
      CHECK(found == d);
      int bus = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d));
      CHECK(bus == 0x1a + d);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetUuid_v2(&uuids[d], d));
    }
    CHECK(std::memcmp(&uuids[0], &uuids[1], sizeof(CUuuid)) != 0);
    CHECK(std::memcmp(&uuids[1], &uuids[2], sizeof(CUuuid)) != 0);
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGet(&dev, 3), CUDA_ERROR_INVALID_DEVICE);
    // Primary contexts are per device.
    CUcontext p0 = nullptr, p2 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&p0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&p2, 2));
    CHECK(p0 != p2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetDevice_v2(&dev, p2));
    CHECK(dev == 2);
    CHECK(ctl.live_handles(SWCU_PRIMARY_CONTEXT) == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(2));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "by default every pair of distinct devices can access each other") {
    for (CUdevice a = 0; a < 3; ++a) {
      for (CUdevice b = 0; b < 3; ++b) {
        INFO(a, " -> ", b);
        int can = -1;
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceCanAccessPeer(&can, a, b));
        CHECK(can == (a != b ? 1 : 0));
        int value = -1;
        const CUresult r =
            cu.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b);
        SWCU_TEST_CHECK_RESULT(r, a != b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
        if (a != b) CHECK(value == 1);
      }
    }
    int value = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetP2PAttribute(
                               &value, swcu::test::invalid_enum<CUdevice_P2PAttribute>(99), 0, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetP2PAttribute(nullptr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1),
        CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "SWCUDA_P2P limits peer access to the listed ordered pairs") {
    // SWCUDA_P2P=0-1,2-1
    for (CUdevice a = 0; a < 3; ++a) {
      for (CUdevice b = 0; b < 3; ++b) {
        INFO(a, " -> ", b);
        const int expected = (a == 0 && b == 1) || (a == 2 && b == 1) ? 1 : 0;
        int can = -1;
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceCanAccessPeer(&can, a, b));
        CHECK(can == expected);
        if (a == b) continue;
        for (const CUdevice_P2PAttribute attribute :
             {CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
              CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
              CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED}) {
          int value = -1;
          SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetP2PAttribute(&value, attribute, a, b));
          CHECK(value == expected);
        }
      }
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "with 64 MiB a device runs out of memory without touching it") {
    // SWCUDA_DEVICE_MEMORY=64M
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0));
    std::size_t free = 0, total = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free, &total));
    CHECK(total == size_t{64} << 20);
    CHECK(free == total);
    CUdeviceptr a = 0, b = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&a, size_t{48} << 20));
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&b, size_t{17} << 20), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(b == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&b, size_t{16} << 20));  // exactly what is left
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free, &total));
    CHECK(free == 0);
    CUdeviceptr c = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(&c, 256, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&c, &free, 512, 1, 4), CUDA_ERROR_OUT_OF_MEMORY);
    void* pinned = nullptr;  // host memory is not the device's
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, size_t{1} << 20, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&c, size_t{16} << 20, nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&b, 256),
                           CUDA_ERROR_OUT_OF_MEMORY);  // the pool holds it
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(c, nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&b, 256),
                           CUDA_ERROR_OUT_OF_MEMORY);  // until a synchronize
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&b, 256));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));  // reclaims a and b
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "with two devices memory and pools and clocks are per device") {
    // SWCUDA_DEVICES=2 SWCUDA_P2P=0-1
    CUcontext c0 = nullptr, c1 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&c0, nullptr, 0, 0));
    CUdeviceptr a = 0, b = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&a, 64));
    CUevent e0 = nullptr, e1 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&e0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e0, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&c1, nullptr, 0, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&b, 64));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&e1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e1, nullptr));
    float ms = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuEventElapsedTime_v2(&ms, e0, e1), CUDA_ERROR_INVALID_HANDLE);
    CUdevice dev = -1;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b));
    CHECK(dev == 1);

    // Peer copies: each address on its context's device.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(b, 7, 64));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyPeer(a, c0, b, c1, 64));
    CHECK(reinterpret_cast<unsigned char*>(a)[63] == 7);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(a, c1, b, c1, 64), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(a, c0, b, c0, 64), CUDA_ERROR_INVALID_VALUE);

    // Pool access follows SWCUDA_P2P: device 0 may access device 1, not the other way.
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    CUmemoryPool on1 = nullptr, on0 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolCreate(&on1, &props));
    props.location.id = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolCreate(&on0, &props));
    CUmemLocation where{};
    where.type = CU_MEM_LOCATION_TYPE_DEVICE;
    where.id = 0;
    CUmemAccess_flags flags{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, on1, &where));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUmemAccessDesc desc{};
    desc.location = where;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(on1, &desc, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, on1, &where));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    desc.location.id = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAccess(on0, &desc, 1), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetMemPool(0, on1), CUDA_ERROR_INVALID_VALUE);  // not local
    // A pool of one device serves a stream of the other.
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 64, on0, nullptr));  // c1's stream
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    CHECK(dev == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    for (const CUmemoryPool pool : {on0, on1}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(c1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(c0));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "SWCUDA_DEVICE_MEMORY sets the memory of every device") {
    for (CUdevice d = 0; d < 2; ++d) {
      size_t bytes = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceTotalMem_v2(&bytes, d));
      CHECK(bytes == size_t{4} << 30);
    }
  }

  TEST_CASE("SWCUDA_FAULTS rules count calls from the first cuInit on") {
    // SWCUDA_FAULTS=cuDeviceGetCount:2:CUDA_ERROR_UNKNOWN;cuCtxCreate:1+:2
    const swcu::test::Api& cu = swcu::test::api();
    int count = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);  // not yet
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuInit(0));
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
    CUcontext ctx = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v2(&ctx, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuInit(0));  // the rules are installed once
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
    swcu::test::control().clear_fault_rules();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE("a malformed SWCUDA_FAULTS rule makes cuInit fail with one line on stderr") {
    // SWCUDA_FAULTS=cuDeviceGetCount:1:CUDA_ERROR_UNKNOWN;cuMemAlloc:first:2
    const swcu::test::Api& cu = swcu::test::api();
    swcu::test::StderrCapture capture;
    const CUresult first = cu.cuInit(0);
    const CUresult second = cu.cuInit(0);
    const std::string text = capture.finish();
    SWCU_TEST_CHECK_RESULT(first, CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(second, CUDA_ERROR_INVALID_VALUE);
    INFO(text);
    CHECK(contains(text, "SWCUDA_FAULTS"));
    CHECK(contains(text, "\"cuMemAlloc:first:2\""));
    CHECK(contains(text, "expected N, N+ or *%K"));
    CHECK(text.find('\n') == text.size() - 1);  // one line, printed once
    int count = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "SWCUDA_KERNEL_TIMEOUT ends a kernel that loops forever") {
    REQUIRE_MESSAGE(env("SWCUDA_KERNEL_TIMEOUT") == "0.2", "run by CTest with the variable set");
    const std::string text = swcu::test::ptx(R"(
.visible .entry spin()
{
$L_forever:
  bra.uni $L_forever;
}
)");
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleLoadData(&m, text.c_str()));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetFunction(&f, m, "spin"));
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
    // As on a GPU whose watchdog fired: the error is sticky for the context.
    SWCU_TEST_CHECK_RESULT(swcu::test::api().cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
    SWCU_TEST_CHECK_RESULT(swcu::test::api().cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
    const std::string message = capture.finish();
    INFO(message);
    CHECK(contains(message, "kernel spin"));
    CHECK(contains(message, "SWCUDA_KERNEL_TIMEOUT"));
  }

  // Blocks that wait for each other forever (every block's first thread polls a flag that
  // nobody sets, the others wait at a barrier): the blocks are resident together and keep
  // yielding to each other, so only the timeout ends the launch.
  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "SWCUDA_KERNEL_TIMEOUT ends co-resident blocks that wait for each other") {
    REQUIRE_MESSAGE(env("SWCUDA_KERNEL_TIMEOUT") == "0.2", "run by CTest with the variable set");
    const std::string text = swcu::test::ptx(R"(
.visible .entry wait_forever(.param .u64 flag)
{
  .reg .pred %p;
  .reg .b32 %tid, %v;
  .reg .b64 %a;
  mov.u32 %tid, %tid.x;
  setp.ne.u32 %p, %tid, 0;
  @%p bra $L_wait;
  ld.param.u64 %a, [flag];
$L_poll:
  ld.volatile.global.u32 %v, [%a];
  setp.eq.u32 %p, %v, 0;
  @%p bra $L_poll;
$L_wait:
  bar.sync 0;
  ret;
}
)");
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleLoadData(&m, text.c_str()));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetFunction(&f, m, "wait_forever"));
    CUdeviceptr flag = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemAlloc_v2(&flag, 4));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemsetD32_v2(flag, 0, 1));
    void* params[] = {&flag};
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 16, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
    SWCU_TEST_CHECK_RESULT(swcu::test::api().cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
    const std::string message = capture.finish();
    INFO(message);
    CHECK(contains(message, "kernel wait_forever"));
    CHECK(contains(message, "SWCUDA_KERNEL_TIMEOUT"));
    // One line: the first worker to time out ends the launch for the others.
    CHECK(message.find('\n') == message.size() - 1);
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "SWCUDA_LAUNCH_LOG bounds the launch log to the newest launches") {
    REQUIRE_MESSAGE(env("SWCUDA_LAUNCH_LOG") == "2", "run by CTest with the variable set");
    const std::string text = swcu::test::ptx(".visible .entry nothing() { ret; }\n");
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleLoadData(&m, text.c_str()));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetFunction(&f, m, "nothing"));
    for (unsigned blocks = 1; blocks <= 5; ++blocks) {
      SWCU_TEST_REQUIRE_SUCCESS(
          swcu::test::mod().cuLaunchKernel(f, blocks, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
    }
    REQUIRE(ctl.launch_log_size() == 2);
    swcu_launch l{};
    REQUIRE(ctl.launch_log_entry(0, &l) == 0);
    CHECK(l.grid[0] == 4);
    REQUIRE(ctl.launch_log_entry(1, &l) == 0);
    CHECK(l.grid[0] == 5);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  // Every SWCUDA_* variable reads the same way: blanks around a value are ignored, and an empty
  // (or blank) value is the same as no variable at all.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "settings: blanks are trimmed and empty means unset") {
    // SWCUDA_DEVICES=" 2 ", SWCUDA_DRIVER_VERSION="<tab>12090 ", SWCUDA_DEVICE_MEMORY=" 4G",
    // SWCUDA_EVENT_TIME=" simulated", and SWCUDA_P2P, SWCUDA_EXEC, SWCUDA_FAULTS,
    // SWCUDA_LAUNCH_LOG, SWCUDA_KERNEL_TIMEOUT, SWCUDA_WORKERS, SWCUDA_KERNELS, SWCUDA_NVJITLINK
    // empty or blank.
    int count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    CHECK(count == 2);
    int version = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDriverGetVersion(&version));
    CHECK(version == 12090);
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceTotalMem_v2(&bytes, 1));
    CHECK(bytes == 4ULL << 30);
    int can = -1;  // an empty SWCUDA_P2P is the default, every pair (it used to mean "none")
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceCanAccessPeer(&can, 0, 1));
    CHECK(can == 1);
    // Simulated event time, immediate execution (the default) and no fault rule: a host function
    // between two records is exactly one operation, 1 us.
    CUcontext ctx = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&ctx, nullptr, 0, 0));
    CUevent start = nullptr;
    CUevent stop = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&start, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&stop, 0));
    int calls = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLaunchHostFunc(
        nullptr, [](void* n) { ++*static_cast<int*>(n); }, &calls));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, nullptr));
    CHECK(calls == 1);  // ran at once: not deferred
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(0.001));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE("an invalid configuration variable makes cuInit fail and names it") {
    const std::string variable = env("SWCUDA_TEST_EXPECT");
    REQUIRE_MESSAGE(!variable.empty(), "run by CTest with SWCUDA_TEST_EXPECT set");
    swcu::test::StderrCapture capture;
    const CUresult result = swcu::test::api().cuInit(0);
    const std::string text = capture.finish();
    SWCU_TEST_CHECK_RESULT(result, CUDA_ERROR_INVALID_VALUE);
    INFO(text);
    CHECK(contains(text, "swcuda: " + variable + "=\"" + env(variable.c_str()) + "\" is invalid"));
    CHECK(text.find('\n') == text.size() - 1);
  }
}
