// Multicast objects (cuMulticastCreate, cuMulticastAddDevice, cuMulticastBindMem,
// cuMulticastBindAddr, cuMulticastUnbind, cuMulticastGetGranularity) on two devices
// (SWCUDA_DEVICES=2, CMakeLists.txt): the codes cuda.h documents, what the software driver
// refuses where the real call would block, and the real feature's consistency: a store through
// the multicast range reaches every bound device's memory, a load returns one device's value.
#include <cstdint>
#include <string>
#include <vector>

#include "vmm_support.hpp"

namespace {

using swcu::test::device_prop;
using swcu::test::iota;
using swcu::test::kTwoMiB;
using swcu::test::mod;
using swcu::test::read_write;
using swcu::test::VmmTest;

CUmulticastObjectProp team_prop(unsigned devices = 2, std::size_t size = kTwoMiB) {
  CUmulticastObjectProp p{};
  p.numDevices = devices;
  p.size = size;
  return p;
}

// fill(out, base): out[tid] = base + tid, for every thread of one block.
const std::string kFill = swcu::test::ptx(R"(
.visible .entry fill(.param .u64 out, .param .u32 base)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [base];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r1, %r2;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)");

/// A team of devices 0 and 1, each with 2 MiB of memory mapped for device 0 (u0, u1).
struct MulticastTest : VmmTest {
  CUmemGenericAllocationHandle mc = 0;
  CUmemGenericAllocationHandle m0 = 0, m1 = 0;
  CUdeviceptr u = 0;  ///< 4 MiB: m0 then m1
  MulticastTest() {
    const CUmulticastObjectProp prop = team_prop();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastCreate(&mc, &prop));
    m0 = create(kTwoMiB, device_prop(0));
    m1 = create(kTwoMiB, device_prop(1));
    u = reserve(2 * kTwoMiB);
    map_rw(u, kTwoMiB, m0);
    map_rw(u + kTwoMiB, kTwoMiB, m1);
  }
  ~MulticastTest() {
    cu.cuMemUnmap(u, 2 * kTwoMiB);
    cu.cuMemAddressFree(u, 2 * kTwoMiB);
    cu.cuMemRelease(m0);
    cu.cuMemRelease(m1);
    cu.cuMemRelease(mc);
  }
  MulticastTest(const MulticastTest&) = delete;
  MulticastTest& operator=(const MulticastTest&) = delete;

  void add_both() {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastAddDevice(mc, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastAddDevice(mc, 1));
  }
};

}  // namespace

TEST_SUITE("env") {
  TEST_CASE_FIXTURE(MulticastTest, "multicast: every call returns the documented codes") {
    int supported = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
    CHECK(supported == 1);
    // Granularity: 2 MiB, minimum and recommended.
    std::size_t g = 0;
    CUmulticastObjectProp prop = team_prop();
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
    CHECK(g == kTwoMiB);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_RECOMMENDED));
    CHECK(g == kTwoMiB);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMulticastGetGranularity(nullptr, &prop, CU_MULTICAST_GRANULARITY_MINIMUM),
        CUDA_ERROR_INVALID_VALUE);
    // Create: numDevices 1..device count, size a multiple of the granularity.
    CUmemGenericAllocationHandle h = 0;
    prop = team_prop(3);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(&h, &prop), CUDA_ERROR_INVALID_VALUE);
    prop = team_prop(0);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(&h, &prop), CUDA_ERROR_INVALID_VALUE);
    prop = team_prop(2, 4096);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(&h, &prop), CUDA_ERROR_INVALID_VALUE);
    prop = team_prop();
    prop.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(&h, &prop), CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(nullptr, &prop), CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 3);  // mc, m0, m1: nothing new
    // Binding or mapping before every device was added: the real calls block until the other
    // devices (processes) add theirs; with nobody else to add them the software driver refuses.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastAddDevice(mc, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0),
                           CUDA_ERROR_NOT_PERMITTED);
    const CUdeviceptr r = reserve(kTwoMiB);
    SWCU_TEST_CHECK_RESULT(cu.cuMemMap(r, kTwoMiB, 0, mc, 0), CUDA_ERROR_NOT_PERMITTED);
    // Add: a device once, no more than numDevices, a valid device.
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastAddDevice(mc, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastAddDevice(mc, 5), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastAddDevice(m0, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastAddDevice(mc, 1));
    // Bind: multiples of the granularity, inside both, flags zero, memory of a team device,
    // an offset once per device.
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 4096, m0, 0, kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, m0, 0, 2 * kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, mc, 0, kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindAddr(mc, 0, u + 4096, kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindAddr(mc, 0, r, kTwoMiB, 0),
                           CUDA_ERROR_INVALID_VALUE);  // nothing mapped there
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastBindAddr(mc, 0, u + kTwoMiB, kTwoMiB, 0));
    // Export: the software driver keeps multicast objects in their process.
    int fd = -1;
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemExportToShareableHandle(&fd, mc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        CUDA_ERROR_NOT_SUPPORTED);
    // Unbind: as bound, a valid device.
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastUnbind(mc, 1, 0, 2 * kTwoMiB), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastUnbind(mc, 7, 0, kTwoMiB), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastUnbind(mc, 1, 0, kTwoMiB));
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastUnbind(mc, 1, 0, kTwoMiB), CUDA_ERROR_INVALID_VALUE);
    // Releasing the object unbinds what is still bound; the memory it held is the program's
    // again (released by the fixture).
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(r, kTwoMiB));
  }

  TEST_CASE_FIXTURE(MulticastTest,
                    "multicast: a kernel's stores through the multicast range reach every device") {
    put(u, iota(64, 0xA000));            // device 0's memory
    put(u + kTwoMiB, iota(64, 0xB000));  // device 1's memory
    add_both();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastBindMem(mc, 0, m1, 0, kTwoMiB, 0));
    const CUdeviceptr mcp = reserve(kTwoMiB);
    map_rw(mcp, kTwoMiB, mc);
    // A load through the multicast range returns one device's value: device 0's, bound first.
    CHECK(get(mcp, 64) == iota(64, 0xA000));
    // A kernel's stores through it reach both memories.
    const CUmodule m = load(kFill);
    const CUfunction fill = function(m, "fill");
    CUdeviceptr out = mcp;
    std::uint32_t base = 0x5000;
    void* params[] = {&out, &base};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    std::vector<std::uint32_t> expected = iota(32, 0x5000);
    const std::vector<std::uint32_t> rest0 = iota(64, 0xA000), rest1 = iota(64, 0xB000);
    std::vector<std::uint32_t> want0 = expected, want1 = expected;
    want0.insert(want0.end(), rest0.begin() + 32, rest0.end());  // not stored: each keeps its own
    want1.insert(want1.end(), rest1.begin() + 32, rest1.end());
    CHECK(get(u, 64) == want0);
    CHECK(get(u + kTwoMiB, 64) == want1);
    CHECK(get(mcp, 32) == expected);
    // A store to device 1's memory directly is not a multicast store: device 0 keeps its value,
    // and loads through the range still return device 0's.
    put(u + kTwoMiB, iota(4, 0xC000));
    CHECK(get(u, 4) == iota(4, 0x5000));
    CHECK(get(mcp, 4) == iota(4, 0x5000));
    // A store to device 0's memory (the one loads return) shows through the range.
    put(u, iota(4, 0xD000));
    CHECK(get(mcp, 4) == iota(4, 0xD000));
    // Releasing the object while mapped: the mapping holds it; unmapping frees it and unbinds.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(mc));
    mc = 0;
    CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 3);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(mcp, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(mcp, kTwoMiB));
    CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 2);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(MulticastTest,
                    "multicast: the functions count their calls and obey fault rules") {
    REQUIRE(ctl.add_fault_rule("cuMulticastCreate:1:CUDA_ERROR_OUT_OF_MEMORY;"
                               "cuMulticastAddDevice:1:CUDA_ERROR_NOT_PERMITTED;"
                               "cuMulticastBindMem:1:CUDA_ERROR_SYSTEM_NOT_READY") == 0);
    CUmemGenericAllocationHandle h = 0;
    const CUmulticastObjectProp prop = team_prop();
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastCreate(&h, &prop), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 3);
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastAddDevice(mc, 0), CUDA_ERROR_NOT_PERMITTED);
    add_both();
    SWCU_TEST_CHECK_RESULT(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0),
                           CUDA_ERROR_SYSTEM_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMulticastBindMem(mc, 0, m0, 0, kTwoMiB, 0));
    CHECK(ctl.call_count("cuMulticastCreate") == 2);  // the fixture's and the failed one
    CHECK(ctl.call_count("cuMulticastAddDevice") == 3);
    CHECK(ctl.call_count("cuMulticastBindMem") == 2);
  }
}
