// Read-only mappings (cuMemSetAccess with CU_MEM_ACCESS_FLAGS_PROT_READ, "Make the address range
// read accessible"): the device loads from them, and what would write them faults as on a GPU,
// whose page tables map the range read-only for that device: a kernel's store or atomic, and a
// copy or memset its stream runs (CUDA_ERROR_ILLEGAL_ADDRESS, sticky, as for pool memory the
// device may only read: pool_access_test.cpp). Copies out of the range work.
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vmm_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;
using swcu::test::iota;
using swcu::test::kTwoMiB;
using swcu::test::mod;
using swcu::test::read_write;
using swcu::test::VmmTest;

/// Read-only access for device `device`.
CUmemAccessDesc read_only(int device = 0) {
  CUmemAccessDesc d = read_write(device);
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  return d;
}

// copy(in, out): out[tid] = in[tid], for every thread of one block.
const std::string kCopy = swcu::test::ptx(R"(
.visible .entry copy(.param .u64 in, .param .u64 out)
{
  .reg .b64 %rd<6>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  st.global.u32 [%rd5], %r2;
  ret;
}
)");

struct ReadOnlyTest : VmmTest {
  /// A mapping of 2 MiB holding 0x500, 0x501, ... (64 values), read-only for device 0.
  ReadOnlyTest() : h(create(kTwoMiB)), p(reserve(kTwoMiB)) {
    map_rw(p, kTwoMiB, h);
    put(p, iota(64, 0x500));
    const CUmemAccessDesc ro = read_only();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, &ro, 1));
  }
  ~ReadOnlyTest() {
    cu.cuMemUnmap(p, kTwoMiB);
    cu.cuMemAddressFree(p, kTwoMiB);
    cu.cuMemRelease(h);
  }
  ReadOnlyTest(const ReadOnlyTest&) = delete;
  ReadOnlyTest& operator=(const ReadOnlyTest&) = delete;

  /// Runs `write` (enqueuing work in the stream it is given) in a new context of `device` and
  /// returns what synchronizing the stream gives; the context is destroyed and the fixture's is
  /// current again.
  template <class Write>
  CUresult in_new_context(int device, Write write) {
    const CUcontext other = create_context(device);
    const CUstream s = create_stream();
    const CUresult enqueued = write(s);
    const CUresult synced = enqueued == CUDA_SUCCESS ? cu.cuStreamSynchronize(s) : enqueued;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    return synced;
  }

  CUmemGenericAllocationHandle h;
  CUdeviceptr p;
};

}  // namespace

TEST_CASE_FIXTURE(ReadOnlyTest, "vmm: a read-only mapping is read by copies and refuses writes") {
  unsigned long long flags = 0;
  CUmemLocation dev0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &dev0, p + 100));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READ);
  unsigned access = 0;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuPointerGetAttribute(&access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p + 100));
  CHECK(access == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ);

  // Out of it: to the host and to device memory.
  CHECK(get(p, 64) == iota(64, 0x500));
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 256));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoD_v2(d, p, 256));
  CHECK(get(d, 64) == iota(64, 0x500));

  // Into it, in a stream of the device that may only read it: the copy engine faults.
  const std::vector<std::uint32_t> values = iota(64, 7);
  CHECK(swcu::test::error_name(in_new_context(0, [&](CUstream s) {
          return cu.cuMemcpyHtoDAsync_v2(p, values.data(), 256, s);
        })) == swcu::test::error_name(CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(swcu::test::error_name(in_new_context(0, [&](CUstream s) {
          return cu.cuMemsetD32Async(p, 9, 64, s);
        })) == swcu::test::error_name(CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(swcu::test::error_name(in_new_context(0, [&](CUstream s) {
          return cu.cuMemcpyDtoDAsync_v2(p, d, 256, s);
        })) == swcu::test::error_name(CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(get(p, 64) == iota(64, 0x500));  // nothing was written

  // Read-write again: writes work.
  const CUmemAccessDesc rw = read_write();
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, &rw, 1));
  put(p, values);
  CHECK(get(p, 64) == values);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
}

TEST_CASE_FIXTURE(ReadOnlyTest,
                  "vmm: a kernel loads from a read-only mapping and faults on a store") {
  const CUmodule m = load(kCopy);
  const CUfunction copy = function(m, "copy");
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 256));
  CUdeviceptr in = p, out = d;
  void* params[] = {&in, &out};
  SWCU_TEST_REQUIRE_SUCCESS(
      mod().cuLaunchKernel(copy, 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  CHECK(get(d, 64) == iota(64, 0x500));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));

  // copy(p, p): each thread loads its value, then its store lands in the read-only mapping: an
  // illegal address, sticky.
  out = p;
  swcu::test::StderrCapture capture;
  SWCU_TEST_REQUIRE_SUCCESS(
      mod().cuLaunchKernel(copy, 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  const std::string err = capture.finish();
  CHECK(err.find("the device may only read this memory") != std::string::npos);
  SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK(reinterpret_cast<const std::uint32_t*>(p)[0] == 0x500);  // nothing was written
}

TEST_CASE_FIXTURE(VmmTest, "vmm: host memory can be mapped read-only for the host") {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  CUmemAllocationProp prop = swcu::test::device_prop();
  prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
  const CUmemGenericAllocationHandle h = create(page, prop);
  CUdeviceptr p = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressReserve(&p, page, page, 0, 0));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, page, 0, h, 0));
  CUmemAccessDesc host{};
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  host.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, page, &host, 1));
  put(p, iota(8, 40));
  host.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, page, &host, 1));
  unsigned long long flags = 0;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_HOST, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &loc, p));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READ);
  CHECK(get(p, 8) == iota(8, 40));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, page));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, page));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

// SWCUDA_DEVICES=3 (CMakeLists.txt).
TEST_SUITE("env") {
  // Access is per device: device 0 may read and write, device 1 only read, device 2 nothing.
  TEST_CASE_FIXTURE(ReadOnlyTest, "vmm: read-only access is per device") {
    const CUmemAccessDesc access[] = {read_write(0), read_only(1)};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, access, 2));
    for (const auto& [device, want] : {std::pair{0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE},
                                       std::pair{1, CU_MEM_ACCESS_FLAGS_PROT_READ},
                                       std::pair{2, CU_MEM_ACCESS_FLAGS_PROT_NONE}}) {
      INFO(device);
      unsigned long long flags = 99;
      CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, device};
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &loc, p));
      CHECK(flags == static_cast<unsigned long long>(want));
    }
    std::vector<std::uint32_t> seen(64);
    SWCU_TEST_REQUIRE_SUCCESS(in_new_context(
        1, [&](CUstream s) { return cu.cuMemcpyDtoHAsync_v2(seen.data(), p, 256, s); }));
    CHECK(seen == iota(64, 0x500));
    CHECK(swcu::test::error_name(in_new_context(1, [&](CUstream s) {
            return cu.cuMemsetD32Async(p, 9, 64, s);
          })) == swcu::test::error_name(CUDA_ERROR_ILLEGAL_ADDRESS));
    CHECK(swcu::test::error_name(in_new_context(2, [&](CUstream s) {
            return cu.cuMemcpyDtoHAsync_v2(seen.data(), p, 256, s);
          })) == swcu::test::error_name(CUDA_ERROR_ILLEGAL_ADDRESS));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(p, 9, 64));  // device 0 writes
    CHECK(get(p, 2) == std::vector<std::uint32_t>{9, 9});
  }
}
