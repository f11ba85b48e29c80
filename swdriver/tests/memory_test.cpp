// Allocations: device, pitched, pinned, registered and managed memory; pointer and range
// attributes; reclaim by the context.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUdeviceptr allocate(std::size_t bytes) {
  CUdeviceptr p = 0;
  REQUIRE(swcu::test::api().cuMemAlloc_v2(&p, bytes) == CUDA_SUCCESS);
  return p;
}

std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  REQUIRE(swcu::test::api().cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS);
  return free;
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

int range_int(CUmem_range_attribute attribute, CUdeviceptr p, std::size_t bytes) {
  int value = -100;
  REQUIRE(swcu::test::api().cuMemRangeGetAttribute(&value, sizeof value, attribute, p, bytes) ==
          CUDA_SUCCESS);
  return value;
}

CUmemLocation device_location(int ordinal) {
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = ordinal;
  return loc;
}

CUmemLocation host_location() {
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_HOST;
  return loc;
}

template <class T>
T pointer_attribute(CUpointer_attribute attribute, CUdeviceptr p) {
  T value{};
  REQUIRE(swcu::test::api().cuPointerGetAttribute(&value, attribute, p) == CUDA_SUCCESS);
  return value;
}

}  // namespace

TEST_SUITE("memory") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "device memory is host memory charged to its device") {
    const CUcontext ctx = create_context();
    std::size_t free = 0, total = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free, &total));
    CHECK(total == size_t{80} << 30);
    CHECK(free <= total);
    const CUdeviceptr p = allocate(1000);
    CHECK(p % 256 == 0);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    CHECK(free_memory() == free - 1024);               // charged in units of 256 bytes
    std::memset(reinterpret_cast<void*>(p), 7, 1000);  // real, writable memory
    CUdeviceptr base = 0;
    std::size_t size = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAddressRange_v2(&base, &size, p + 999));
    CHECK(base == p);
    CHECK(size == 1000);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAddressRange_v2(nullptr, &size, p));
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetAddressRange_v2(&base, &size, p + 1000),
                           CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFree_v2(p + 8), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    CHECK(free_memory() == free);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFree_v2(0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetInfo_v2(nullptr, &total), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "memory is freed by its address with any context current") {
    const CUcontext first = create_context();
    const CUdeviceptr a = allocate(64);
    const CUdeviceptr b = allocate(64);
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 64, 0));
    const CUcontext second = create_context();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(a));  // another context is current
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(nullptr));
    CHECK(ctl.context_stack_depth() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(b));  // none is
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(second));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(first));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "allocation arguments are validated") {
    CUdeviceptr p = 77;
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
    std::size_t free = 0, total = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetInfo_v2(&free, &total), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&p, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&p, ~size_t{0}), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 77);
    CHECK(ctl.live_handles_total() == 1);  // the context only
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a large allocation costs nothing until it is touched") {
    const CUcontext ctx = create_context();
    const std::size_t before = resident_bytes();
    const CUdeviceptr p = allocate(size_t{1} << 30);
    CHECK(resident_bytes() - before < (size_t{64} << 20));
    static_cast<unsigned char*>(reinterpret_cast<void*>(p))[(size_t{1} << 30) - 1] = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "pitched allocations round the pitch up to 512 bytes") {
    const CUcontext ctx = create_context();
    const std::size_t free = free_memory();
    CUdeviceptr p = 0;
    std::size_t pitch = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocPitch_v2(&p, &pitch, 100, 3, 4));
    CHECK(pitch == 512);
    CUdeviceptr base = 0;
    std::size_t size = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAddressRange_v2(&base, &size, p));
    CHECK(size == 3 * 512);
    CHECK(free_memory() == free - 3 * 512);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocPitch_v2(&p, &pitch, 513, 1, 16));
    CHECK(pitch == 1024);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    for (const unsigned element : {0U, 1U, 2U, 3U, 32U}) {
      SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&p, &pitch, 64, 4, element),
                             CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&p, &pitch, 0, 4, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&p, &pitch, 64, 0, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&p, nullptr, 64, 4, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocPitch_v2(&p, &pitch, size_t{1} << 32, 1, 4),
                           CUDA_ERROR_INVALID_VALUE);  // beyond CU_DEVICE_ATTRIBUTE_MAX_PITCH
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "pinned host memory keeps its flags and maps when asked") {
    const CUcontext ctx = create_context();
    const std::size_t free = free_memory();
    void* plain = nullptr;
    void* mapped = nullptr;
    void* classic = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&plain, 100, 0));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostAlloc(&mapped, 100, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocHost_v2(&classic, 100));
    CHECK(ctl.live_handles(SWCU_HOST_ALLOCATION) == 3);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(free_memory() == free);  // host memory is not device memory
    unsigned flags = 99;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostGetFlags(&flags, plain));
    CHECK(flags == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostGetFlags(&flags, static_cast<char*>(mapped) + 50));
    CHECK(flags == (CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostGetFlags(&flags, classic));
    CHECK(flags == (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr device = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetDevicePointer_v2(&device, plain, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostGetDevicePointer_v2(&device, static_cast<char*>(mapped) + 8, 0));
    CHECK(device == reinterpret_cast<CUdeviceptr>(mapped) + 8);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetDevicePointer_v2(&device, mapped, 1),
                           CUDA_ERROR_INVALID_VALUE);
    void* bad = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostAlloc(&bad, 100, 0x8), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostAlloc(&bad, 0, 0), CUDA_ERROR_INVALID_VALUE);
    int on_stack = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetFlags(&flags, &on_stack), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeHost(&on_stack), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeHost(static_cast<char*>(plain) + 1),
                           CUDA_ERROR_INVALID_VALUE);
    for (void* p : {plain, mapped, classic}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(p));
    CHECK(ctl.live_handles(SWCU_HOST_ALLOCATION) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "host registrations are tracked by page and must not overlap") {
    const CUcontext ctx = create_context();
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> buffer(page * 4);
    unsigned char* const aligned = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<std::uintptr_t>(buffer.data()) + page - 1) / page * page);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostRegister_v2(aligned + 16, 100, CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(ctl.live_handles(SWCU_HOST_REGISTRATION) == 1);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(aligned + 16, 100, 0),
                           CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(aligned + 1000, 8, 0),  // the same page
                           CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostRegister_v2(aligned + page, page, CU_MEMHOSTREGISTER_PORTABLE));
    CHECK(ctl.live_handles(SWCU_HOST_REGISTRATION) == 2);
    CUdeviceptr device = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostGetDevicePointer_v2(&device, aligned + 20, 0));
    CHECK(device == reinterpret_cast<CUdeviceptr>(aligned + 20));
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetDevicePointer_v2(&device, aligned + page, 0),
                           CUDA_ERROR_INVALID_VALUE);  // registered without DEVICEMAP
    unsigned flags = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetFlags(&flags, aligned + 16), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostUnregister(aligned + 17),
                           CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostUnregister(aligned + 2 * page),
                           CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemHostRegister_v2(aligned + 2 * page, 8, CU_MEMHOSTREGISTER_IOMEMORY),
        CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(aligned + 2 * page, 8, 0x100),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(nullptr, 8, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(aligned + 2 * page, 0, 0),
                           CUDA_ERROR_INVALID_VALUE);
    const CUdeviceptr d = allocate(64);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostRegister_v2(reinterpret_cast<void*>(d), 64, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostUnregister(aligned + 16));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostUnregister(aligned + page));
    CHECK(ctl.live_handles(SWCU_HOST_REGISTRATION) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostUnregister(aligned + page),
                           CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "managed memory records advice and prefetch locations") {
    const CUcontext ctx = create_context();
    const std::size_t free = free_memory();
    CUdeviceptr m = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocManaged(&m, 64, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocManaged(&m, 64, 3), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocManaged(&m, 0, CU_MEM_ATTACH_GLOBAL),
                           CUDA_ERROR_INVALID_VALUE);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = 4 * page;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, bytes, CU_MEM_ATTACH_GLOBAL));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    CHECK(free_memory() == free);  // managed memory is not charged
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, bytes) == 0);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, bytes) == CU_DEVICE_INVALID);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, bytes) == CU_DEVICE_INVALID);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m, bytes) ==
          CU_MEM_LOCATION_TYPE_INVALID);

    // Advice applies to whole pages; a query covers the range asked.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAdvise_v2(m, page + 1, CU_MEM_ADVISE_SET_READ_MOSTLY, {}));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * page) == 1);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, bytes) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAdvise_v2(m, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, device_location(0)));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, bytes) == 0);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m, bytes) ==
          CU_MEM_LOCATION_TYPE_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAdvise_v1(m + page, page, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, bytes) == CU_DEVICE_INVALID);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m + page, page) == CU_DEVICE_CPU);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAdvise_v2(m, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, device_location(0)));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAdvise_v2(m, page, CU_MEM_ADVISE_SET_ACCESSED_BY, host_location()));
    int accessed[3] = {7, 7, 7};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRangeGetAttribute(
        accessed, sizeof accessed, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, page));
    CHECK(accessed[0] == 0);
    CHECK(accessed[1] == CU_DEVICE_CPU);
    CHECK(accessed[2] == CU_DEVICE_INVALID);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemRangeGetAttribute(accessed, 4, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, bytes));
    CHECK(accessed[0] == 0);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAdvise_v2(m, bytes, CU_MEM_ADVISE_UNSET_ACCESSED_BY, device_location(0)));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAdvise_v2(m, bytes, CU_MEM_ADVISE_UNSET_READ_MOSTLY, {}));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, page) == 0);

    // Advice needs a current context. Observed on an H200, driver 580.159.04, 2026-11-27:
    // cuMemAdvise (CUDA 13's, with a CUmemLocation) on live managed memory after
    // cuCtxSetCurrent(NULL) is CUDA_ERROR_INVALID_CONTEXT. The device-ordinal ABI does the same.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuMemAdvise_v2(m, bytes, CU_MEM_ADVISE_SET_READ_MOSTLY, {}),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAdvise_v1(m, bytes, CU_MEM_ADVISE_SET_READ_MOSTLY, 0),
                           CUDA_ERROR_INVALID_CONTEXT);
    // So does cuMemRangeGetAttribute (the same H200: the unified_memory sample's read-mostly
    // query after its advice got CUDA_ERROR_INVALID_CONTEXT).
    int mostly = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuMemRangeGetAttribute(&mostly, sizeof mostly,
                                                     CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, bytes),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, bytes) == 0);  // nothing recorded

    // Prefetches are stream operations; the location is recorded when asked for.
    const CUstream s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPrefetchAsync_v2(m, bytes, host_location(), 0, s));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, bytes) == CU_DEVICE_CPU);
    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m) == CU_MEMORYTYPE_HOST);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPrefetchAsync_v1(m, page, 0, s));
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, page) == 0);
    CHECK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, bytes) == CU_DEVICE_INVALID);
    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m) == CU_MEMORYTYPE_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));

    CUmem_range_attribute attributes[2] = {CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                           CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
    int type = 0, id = -1;
    void* data[2] = {&type, &id};
    std::size_t sizes[2] = {4, 4};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRangeGetAttributes(data, sizes, attributes, 2, m, page));
    CHECK(type == CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK(id == 0);

    // Errors.
    int value = 0;
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemRangeGetAttribute(&value, 8, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 4),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, bytes + 1),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 0),
        CUDA_ERROR_INVALID_VALUE);
    const CUdeviceptr d = allocate(64);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, 4),
        CUDA_ERROR_INVALID_VALUE);  // not managed
    SWCU_TEST_CHECK_RESULT(cu.cuMemAdvise_v2(d, 4, CU_MEM_ADVISE_SET_READ_MOSTLY, {}),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPrefetchAsync_v2(d, 4, host_location(), 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPrefetchAsync_v2(m, 4, device_location(5), 0, s),
                           CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPrefetchAsync_v2(m, 4, host_location(), 1, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAdvise_v2(m, 4, swcu::test::invalid_enum<CUmem_advise>(99), {}),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemAdvise_v2(m, 4, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, device_location(3)),
        CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "pointer attributes describe each kind of memory") {
    const CUcontext ctx = create_context();
    const CUdeviceptr d = allocate(100);
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 100, CU_MEMHOSTALLOC_DEVICEMAP));
    const auto h = reinterpret_cast<CUdeviceptr>(pinned);
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 100, CU_MEM_ATTACH_GLOBAL));

    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 5) ==
          CU_MEMORYTYPE_DEVICE);
    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, h) == CU_MEMORYTYPE_HOST);
    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m) == CU_MEMORYTYPE_DEVICE);
    CHECK(pointer_attribute<int>(CU_POINTER_ATTRIBUTE_IS_MANAGED, m) == 1);
    CHECK(pointer_attribute<int>(CU_POINTER_ATTRIBUTE_IS_MANAGED, d) == 0);
    CHECK(pointer_attribute<CUcontext>(CU_POINTER_ATTRIBUTE_CONTEXT, d) == ctx);
    CHECK(pointer_attribute<int>(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, h) == 0);
    CHECK(pointer_attribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 99) == d);
    CHECK(pointer_attribute<std::size_t>(CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 99) == 100);
    CHECK(pointer_attribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, h + 1) == h + 1);
    CHECK(pointer_attribute<void*>(CU_POINTER_ATTRIBUTE_HOST_POINTER, m) ==
          reinterpret_cast<void*>(m));
    CHECK(pointer_attribute<int>(CU_POINTER_ATTRIBUTE_MAPPED, d) == 1);
    CHECK(pointer_attribute<CUmemoryPool>(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d) == nullptr);
    const auto id_d = pointer_attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
    const auto id_m = pointer_attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_BUFFER_ID, m);
    CHECK(id_d != 0);
    CHECK(id_d != id_m);
    void* host_pointer = nullptr;
    SWCU_TEST_CHECK_RESULT(
        cu.cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, d),
        CUDA_ERROR_INVALID_VALUE);  // device memory has no host address

    // Memory the driver does not know: an error alone, defaults among several.
    int on_stack = 0;
    const auto unknown = reinterpret_cast<CUdeviceptr>(&on_stack);
    unsigned type = 99;
    SWCU_TEST_CHECK_RESULT(
        cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, unknown),
        CUDA_ERROR_INVALID_VALUE);
    CUcontext owner = ctx;
    int ordinal = 5;
    CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                         CU_POINTER_ATTRIBUTE_CONTEXT,
                                         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* values[3] = {&type, &owner, &ordinal};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(3, attributes, values, unknown));
    CHECK(type == 0);
    CHECK(owner == nullptr);
    CHECK(ordinal == CU_DEVICE_INVALID);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(3, attributes, values, d));
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CHECK(owner == ctx);
    CHECK(ordinal == 0);
    SWCU_TEST_CHECK_RESULT(
        cu.cuPointerGetAttribute(&type, swcu::test::invalid_enum<CUpointer_attribute>(999), d),
        CUDA_ERROR_INVALID_VALUE);

    unsigned sync = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerSetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
    CHECK(pointer_attribute<unsigned>(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d) == 1);
    SWCU_TEST_CHECK_RESULT(
        cu.cuPointerSetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, unknown),
        CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    SWCU_TEST_CHECK_RESULT(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
                           CUDA_ERROR_INVALID_VALUE);  // freed
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "destroying a context frees its memory as reclaimed") {
    const CUcontext ctx = create_context();
    const std::size_t free = free_memory();
    static_cast<void>(allocate(1 << 20));
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 64, 0));
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 64, CU_MEM_ATTACH_HOST));
    std::vector<char> host(64);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostRegister_v2(host.data(), host.size(), 0));
    const size_t device_before = ctl.reclaimed_handles(SWCU_DEVICE_ALLOCATION);
    const size_t host_before = ctl.reclaimed_handles(SWCU_HOST_ALLOCATION);
    const size_t registered_before = ctl.reclaimed_handles(SWCU_HOST_REGISTRATION);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 2);  // leaks show until the context goes
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(ctl.live_handles(SWCU_HOST_ALLOCATION) == 0);
    CHECK(ctl.live_handles(SWCU_HOST_REGISTRATION) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_DEVICE_ALLOCATION) == device_before + 2);
    CHECK(ctl.reclaimed_handles(SWCU_HOST_ALLOCATION) == host_before + 1);
    CHECK(ctl.reclaimed_handles(SWCU_HOST_REGISTRATION) == registered_before + 1);
    const CUcontext next = create_context();
    CHECK(free_memory() == free);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostRegister_v2(host.data(), host.size(), 0));  // free again
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostUnregister(host.data()));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(next));
  }
}
