// Virtual memory management: granularity, physical allocations, reservations, mappings, access,
// and what copies see through them. Each rule quotes the CUDA driver API reference (cuda.h).
#include <unistd.h>

#include "vmm_support.hpp"

namespace {

using swcu::test::device_prop;
using swcu::test::iota;
using swcu::test::kTwoMiB;
using swcu::test::read_write;
using swcu::test::VmmTest;

TEST_CASE_FIXTURE(VmmTest, "vmm: the device attributes say virtual memory management works") {
  int vmm = 0, fd = 0;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetAttribute(
      &fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  CHECK(vmm == 1);
  CHECK(fd == 1);
}

TEST_CASE_FIXTURE(VmmTest, "vmm: cuMemGetAllocationGranularity, minimum and recommended") {
  std::size_t g = 0;
  CUmemAllocationProp p = device_prop();
  // Device memory: 2 MiB, both (what NVIDIA GPUs report).
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CHECK(g == kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  CHECK(g == kTwoMiB);
  // Host memory (CU_MEM_LOCATION_TYPE_HOST, "id is ignored"): a page at least.
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  p.location.id = 77;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CHECK(g == static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  CHECK(g == kTwoMiB);

  p = device_prop();
  const auto minimum = CU_MEM_ALLOC_GRANULARITY_MINIMUM;
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationGranularity(nullptr, &p, minimum),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationGranularity(&g, nullptr, minimum),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationGranularity(
                             &g, &p, swcu::test::invalid_enum<CUmemAllocationGranularity_flags>(2)),
                         CUDA_ERROR_INVALID_VALUE);
  p.location.id = 5;  // no such device
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationGranularity(&g, &p, minimum),
                         CUDA_ERROR_INVALID_DEVICE);
  p = device_prop();
  p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationGranularity(&g, &p, minimum),
                         CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE_FIXTURE(VmmTest,
                  "vmm: cuMemCreate allocates, charges the device, and cuMemRelease frees") {
  const std::size_t before = used();
  const CUmemGenericAllocationHandle h = create(2 * kTwoMiB);
  CHECK(h != 0);
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 1);
  CHECK(used() == before + 2 * kTwoMiB);
  // "Retrieve the contents of the property structure defining properties for this handle"
  CUmemAllocationProp got{};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAllocationPropertiesFromHandle(&got, h));
  CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED);
  CHECK(got.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
  CHECK(got.location.id == 0);
  CHECK(got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_NONE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationPropertiesFromHandle(nullptr, h),
                         CUDA_ERROR_INVALID_VALUE);

  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
  CHECK(used() == before);
  // A released handle is no handle any more.
  SWCU_TEST_CHECK_RESULT(cu.cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationPropertiesFromHandle(&got, h),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemRelease(0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE_FIXTURE(VmmTest, "vmm: cuMemCreate refuses what the reference rules out") {
  CUmemGenericAllocationHandle h = 0;
  CUmemAllocationProp p = device_prop();
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(nullptr, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  // "flags - flags for future use, must be zero now."
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 1), CUDA_ERROR_INVALID_VALUE);
  // "The size of this allocation must be a multiple of the the value given via
  // cuMemGetAllocationGranularity with the CU_MEM_ALLOC_GRANULARITY_MINIMUM flag."
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, 0, &p, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB + 4096, &p, 0), CUDA_ERROR_INVALID_VALUE);
  // More than the device holds (80 GiB by default).
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, std::size_t{100} << 30, &p, 0),
                         CUDA_ERROR_OUT_OF_MEMORY);
  p.location.id = 3;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_DEVICE);
  // Win32 and fabric handles do not exist on this system.
  p = device_prop(0, CU_MEM_HANDLE_TYPE_FABRIC);
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
  p = device_prop(0, 0x100);
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  // "HOST allocations are not IPC capable and CUmemAllocationProp::requestedHandleTypes must be
  // 0, any other value will result in CUDA_ERROR_INVALID_VALUE."
  p = device_prop(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  // "Specifying CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT as the CUmemLocation::type will result
  // in CUDA_ERROR_INVALID_VALUE."
  p = device_prop();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  // Host NUMA allocations: CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0.
  p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
  // win32HandleMetaData: "In all other cases, this field is required to be zero."
  p = device_prop();
  int dummy = 0;
  p.win32HandleMetaData = &dummy;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  // Tile pools back sparse CUDA arrays, which the software driver does not have.
  p = device_prop();
  p.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
  p = device_prop();
  p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
}

TEST_CASE_FIXTURE(VmmTest, "vmm: cuMemAddressReserve and cuMemAddressFree") {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  CUdeviceptr p = reserve(3 * kTwoMiB);
  CHECK(p % kTwoMiB == 0);  // the default alignment lets the range be mapped
  CHECK(ctl.live_handles(SWCU_ADDRESS_RESERVATION) == 1);
  // "The size must match what was given to memAddressReserve and the ptr given must match what
  // was returned from memAddressReserve."
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressFree(p, kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressFree(p + kTwoMiB, 2 * kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 3 * kTwoMiB));
  CHECK(ctl.live_handles(SWCU_ADDRESS_RESERVATION) == 0);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressFree(p, 3 * kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  // "when it is non-zero then the driver treats it as a hint about where to place the
  // reservation": the range just freed is free again.
  CUdeviceptr q = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressReserve(&q, kTwoMiB, 0, p, 0));
  CHECK(q == p);
  // An alignment: "a power of two or zero for default alignment".
  CUdeviceptr r = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressReserve(&r, kTwoMiB, std::size_t{1} << 30, 0, 0));
  CHECK(r % (std::size_t{1} << 30) == 0);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(r, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(q, kTwoMiB));

  // "The size and address parameters must be a multiple of the host page size"; "flags -
  // Currently unused, must be zero".
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(nullptr, kTwoMiB, 0, 0, 0),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, page + 1, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, kTwoMiB, 0, p + 1, 0),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, kTwoMiB, 3 * page, 0, 0),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, kTwoMiB, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
  // More than the address space holds.
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&r, std::size_t{1} << 62, 0, 0, 0),
                         CUDA_ERROR_OUT_OF_MEMORY);
  // Memory that is no reservation cannot be freed as one.
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 4096));
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressFree(d, 4096), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
  CHECK(ctl.live_handles(SWCU_ADDRESS_RESERVATION) == 0);
}

TEST_CASE_FIXTURE(VmmTest,
                  "vmm: cuMemMap maps whole granules of an allocation into a reservation") {
  const CUmemGenericAllocationHandle h = create(2 * kTwoMiB);
  const CUdeviceptr p = reserve(4 * kTwoMiB);
  // "Both ptr, size, and offset must be a multiple of the value given via
  // cuMemGetAllocationGranularity with the CU_MEM_ALLOC_GRANULARITY_MINIMUM flag."
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p + 4096, kTwoMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, 4096, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, kTwoMiB, 4096, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, 0, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  // "offset + size must be less than the size of the memory allocation"
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, 2 * kTwoMiB, kTwoMiB, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, 3 * kTwoMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  // "This range must be an address reservation previously reserved with cuMemAddressReserve"
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p + 3 * kTwoMiB, 2 * kTwoMiB, 0, h, 0),
                         CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, kTwoMiB));
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(d, kTwoMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
  // "flags - flags for future use, must be zero now."; a handle that is none.
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, kTwoMiB, 0, h, 1), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, kTwoMiB, 0, h + 8, 0), CUDA_ERROR_INVALID_VALUE);

  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p + kTwoMiB, 2 * kTwoMiB, 0, h, 0));
  // "cuMemMap can only create mappings on VA range reservations that are not currently mapped."
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p, 2 * kTwoMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemMap(p + 2 * kTwoMiB, kTwoMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  // The granules around it are still free; an offset maps the allocation's second half.
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, kTwoMiB, kTwoMiB, h, 0));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p + 3 * kTwoMiB, kTwoMiB, 0, h, 0));
  const CUmemAccessDesc rw = read_write();
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, 4 * kTwoMiB, &rw, 1));
  // [p, p + 2M) is the second half of [p + 2M, p + 6M); [p + 6M, p + 8M) the first half.
  put(p + 2 * kTwoMiB, {11, 12});
  put(p + kTwoMiB, {21, 22});
  CHECK(get(p, 2) == std::vector<std::uint32_t>{11, 12});
  CHECK(get(p + 3 * kTwoMiB, 2) == std::vector<std::uint32_t>{21, 22});

  // A reservation cannot be freed while mapped (the reference does not say; unmap first).
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressFree(p, 4 * kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, 4 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 4 * kTwoMiB));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: a mapping is inaccessible until cuMemSetAccess grants access") {
  const CUmemGenericAllocationHandle h = create(kTwoMiB);
  const CUdeviceptr p = reserve(kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, kTwoMiB, 0, h, 0));
  const std::vector<std::uint32_t> values = iota(64, 100);
  // "Please note calling cuMemMap does not make the address accessible, the caller needs to
  // update accessibility of a contiguous mapped VA range by calling cuMemSetAccess."
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(p, values.data(), 256), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemsetD32_v2(p, 7, 64), CUDA_ERROR_INVALID_VALUE);
  unsigned long long flags = 99;
  CUmemLocation dev0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &dev0, p));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);

  const CUmemAccessDesc rw = read_write();
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, &rw, 1));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &dev0, p + 12345));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  put(p, values);
  CHECK(get(p, 64) == values);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(p + 4, 7, 1));
  CHECK(get(p, 2) == std::vector<std::uint32_t>{100, 7});
  // A copy that runs past the mapping into the unmapped rest of nothing: refused.
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(p + kTwoMiB - 4, values.data(), 8),
                         CUDA_ERROR_INVALID_VALUE);

  // Taking access away makes it inaccessible again.
  CUmemAccessDesc none = rw;
  none.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, &none, 1));
  std::vector<std::uint32_t> back(64);
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(back.data(), p, 256), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: cuMemSetAccess and cuMemGetAccess refuse what they must") {
  const CUmemGenericAllocationHandle h = create(2 * kTwoMiB);
  const CUdeviceptr p = reserve(4 * kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, 2 * kTwoMiB, 0, h, 0));
  CUmemAccessDesc rw = read_write();
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, &rw, 0), CUDA_ERROR_INVALID_VALUE);
  // "The range must be a fully mapped address range containing all allocations created by
  // cuMemMap / cuMemCreate": not part of a mapping, not past it.
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, kTwoMiB, &rw, 1), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 3 * kTwoMiB, &rw, 1), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p + 2 * kTwoMiB, kTwoMiB, &rw, 1),
                         CUDA_ERROR_INVALID_VALUE);
  // A device that does not exist; flags other than PROT_NONE, PROT_READ and PROT_READWRITE
  // (read-only mappings work: vmm_access_test.cpp).
  CUmemAccessDesc bad = rw;
  bad.location.id = 9;
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, &bad, 1), CUDA_ERROR_INVALID_DEVICE);
  bad = rw;
  for (const int flags : {2, 4, 7}) {
    INFO(flags);
    bad.flags = swcu::test::invalid_enum<CUmemAccess_flags>(flags);
    SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, &bad, 1), CUDA_ERROR_INVALID_VALUE);
  }
  // "Users cannot specify CU_MEM_LOCATION_TYPE_HOST_NUMA accessibility for allocations created
  // on with other location types"; the host, for device memory, neither.
  bad = rw;
  bad.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, &bad, 1), CUDA_ERROR_INVALID_VALUE);
  bad.location.type = CU_MEM_LOCATION_TYPE_HOST;
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, &bad, 1), CUDA_ERROR_INVALID_VALUE);
  // Every descriptor is checked before any applies: neither read-write nor read-only is set.
  CUmemAccessDesc read_only = rw;
  read_only.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  const CUmemAccessDesc pair[] = {rw, bad};
  const CUmemAccessDesc read_pair[] = {read_only, bad};
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, read_pair, 2), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemSetAccess(p, 2 * kTwoMiB, pair, 2), CUDA_ERROR_INVALID_VALUE);
  unsigned long long flags = 99;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &loc, p));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);

  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAccess(nullptr, &loc, p), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAccess(&flags, nullptr, p), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAccess(&flags, &loc, p + 3 * kTwoMiB),
                         CUDA_ERROR_INVALID_VALUE);
  loc.id = 4;
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAccess(&flags, &loc, p), CUDA_ERROR_INVALID_DEVICE);
  loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAccess(&flags, &loc, p), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, 2 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 4 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: one allocation mapped at two ranges shows the same bytes") {
  const CUmemGenericAllocationHandle h = create(kTwoMiB);
  const CUdeviceptr a = reserve(kTwoMiB);
  const CUdeviceptr b = reserve(kTwoMiB);
  map_rw(a, kTwoMiB, h);
  map_rw(b, kTwoMiB, h);
  put(a + 4096, iota(16, 500));
  CHECK(get(b + 4096, 16) == iota(16, 500));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(b, 0xabcd, 4));
  CHECK(get(a, 4) == std::vector<std::uint32_t>(4, 0xabcd));
  // A device-to-device copy between the two views.
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoD_v2(a + 8192, b + 4096, 64));
  CHECK(get(b + 8192, 16) == iota(16, 500));
  for (const CUdeviceptr p : {a, b}) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
  }
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: adjacent mappings make one range for copies, access and unmap") {
  const CUmemGenericAllocationHandle h1 = create(kTwoMiB);
  const CUmemGenericAllocationHandle h2 = create(kTwoMiB);
  const CUdeviceptr p = reserve(2 * kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, kTwoMiB, 0, h1, 0));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p + kTwoMiB, kTwoMiB, 0, h2, 0));
  // One cuMemSetAccess over "a contiguous mapped VA range" of two mappings.
  const CUmemAccessDesc rw = read_write();
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, 2 * kTwoMiB, &rw, 1));
  const CUdeviceptr seam = p + kTwoMiB - 32;
  put(seam, iota(16, 1));
  CHECK(get(seam, 16) == iota(16, 1));
  // "The range must be the entire contiguous address range that was mapped to. In other words,
  // cuMemUnmap cannot unmap a sub-range of an address range mapped by cuMemCreate / cuMemMap."
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p, kTwoMiB / 2), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p + 4096, kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p, 0), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p, 3 * kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, 2 * kTwoMiB));  // both mappings, whole
  // "When cuMemUnmap returns successfully the address range is converted to an address
  // reservation and can be used for a future calls to cuMemMap. Any new mapping to this virtual
  // address will need to have access granted through cuMemSetAccess".
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p, kTwoMiB), CUDA_ERROR_INVALID_VALUE);
  std::vector<std::uint32_t> back(16);
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(back.data(), seam, 64), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, kTwoMiB, 0, h2, 0));
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(back.data(), p, 64), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, kTwoMiB, &rw, 1));
  CHECK(get(p, 8) == iota(8, 9));  // h2 begins with what the copy wrote past the seam
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 2 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h1));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h2));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: a released handle's memory lives until its last mapping goes") {
  const std::size_t before = used();
  const CUmemGenericAllocationHandle h = create(kTwoMiB);
  const CUdeviceptr p = reserve(kTwoMiB);
  map_rw(p, kTwoMiB, h);
  put(p, iota(8, 40));
  // "The generic memory handle can be freed when there are still outstanding mappings made with
  // this handle."
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 1);  // held by its mapping
  CHECK(get(p, 8) == iota(8, 40));
  CUmemAllocationProp prop{};
  SWCU_TEST_CHECK_RESULT(cu.cuMemGetAllocationPropertiesFromHandle(&prop, h),
                         CUDA_ERROR_INVALID_VALUE);
  // "The handle is guaranteed to be the same handle value used to map the memory."
  CUmemGenericAllocationHandle again = 0;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemRetainAllocationHandle(&again, reinterpret_cast<void*>(p + 100)));
  CHECK(again == h);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAllocationPropertiesFromHandle(&prop, again));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(again));
  // "The memory allocation will be freed when all outstanding mappings to the memory are
  // unmapped and when all outstanding references to the handle ... are also released."
  CHECK(used() == before + kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
  CHECK(used() == before);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: cuMemRetainAllocationHandle takes a reference per call") {
  const CUmemGenericAllocationHandle h = create(2 * kTwoMiB);
  const CUdeviceptr p = reserve(4 * kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, 2 * kTwoMiB, 0, h, 0));
  CUmemGenericAllocationHandle r1 = 0, r2 = 0;
  // "The address addr, can be any address in a range previously mapped by cuMemMap, and not
  // necessarily the start address." Access does not matter.
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRetainAllocationHandle(&r1, reinterpret_cast<void*>(p)));
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemRetainAllocationHandle(&r2, reinterpret_cast<void*>(p + 2 * kTwoMiB - 1)));
  CHECK(r1 == h);
  CHECK(r2 == h);
  // "If the address requested is not mapped, the function will fail."
  CUmemGenericAllocationHandle none = 0;
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemRetainAllocationHandle(&none, reinterpret_cast<void*>(p + 2 * kTwoMiB)),
      CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemRetainAllocationHandle(&none, &none), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemRetainAllocationHandle(nullptr, reinterpret_cast<void*>(p)),
                         CUDA_ERROR_INVALID_VALUE);
  // "The returned handle must be released with corresponding number of calls to cuMemRelease."
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, 2 * kTwoMiB));
  for (int i = 0; i < 3; ++i) {
    CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  }
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 4 * kTwoMiB));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: host allocations have host access and a page granularity") {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  CUmemAllocationProp prop = device_prop();
  prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
  prop.location.id = 12;  // "id is ignored for HOST allocations"
  const CUmemGenericAllocationHandle h = create(4 * page, prop);
  CUmemAllocationProp got{};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAllocationPropertiesFromHandle(&got, h));
  CHECK(got.location.type == CU_MEM_LOCATION_TYPE_HOST);
  CHECK(got.location.id == 0);
  CUdeviceptr p = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressReserve(&p, 4 * page, page, 0, 0));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p + page, 2 * page, page, h, 0));
  CUmemAccessDesc host{};
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  host.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p + page, 2 * page, &host, 1));
  unsigned long long flags = 0;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_HOST, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &loc, p + page));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAccess(&flags, &loc, p + page));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  put(p + page, iota(4, 3));
  CHECK(get(p + page, 4) == iota(4, 3));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p + page, 2 * page));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 4 * page));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

// allocFlags.gpuDirectRDMACapable asks for memory a third-party device can reach with GPUDirect
// RDMA; the software driver reports CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED 0,
// so it cannot make such memory, nor say what its granularity would be.
TEST_CASE_FIXTURE(VmmTest, "vmm: GPUDirect RDMA capable memory is not supported") {
  int rdma = 1;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetAttribute(
      &rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0));
  CHECK(rdma == 0);
  CUmemAllocationProp prop = device_prop();
  prop.allocFlags.gpuDirectRDMACapable = 1;
  CUmemGenericAllocationHandle h = 0;
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
  std::size_t g = 0;
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
      CUDA_ERROR_NOT_SUPPORTED);
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
}

TEST_CASE_FIXTURE(VmmTest, "vmm: the functions count their calls and obey fault rules") {
  REQUIRE(ctl.add_fault_rule("cuMemCreate:1:CUDA_ERROR_OUT_OF_MEMORY;"
                             "cuMemAddressReserve:1:CUDA_ERROR_NOT_PERMITTED") == 0);
  CUmemGenericAllocationHandle h = 0;
  const CUmemAllocationProp prop = device_prop();
  SWCU_TEST_CHECK_RESULT(cu.cuMemCreate(&h, kTwoMiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 0);
  CUdeviceptr p = 0;
  SWCU_TEST_CHECK_RESULT(cu.cuMemAddressReserve(&p, kTwoMiB, 0, 0, 0), CUDA_ERROR_NOT_PERMITTED);
  CHECK(ctl.live_handles(SWCU_ADDRESS_RESERVATION) == 0);
  h = create(kTwoMiB);
  p = reserve(kTwoMiB);
  map_rw(p, kTwoMiB, h);
  REQUIRE(ctl.add_fault_rule("cuMemUnmap:1:CUDA_ERROR_UNKNOWN") == 0);
  SWCU_TEST_CHECK_RESULT(cu.cuMemUnmap(p, kTwoMiB), CUDA_ERROR_UNKNOWN);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  CHECK(ctl.call_count("cuMemCreate") == 2);
  CHECK(ctl.call_count("cuMemAddressReserve") == 2);
  CHECK(ctl.call_count("cuMemMap") == 1);
  CHECK(ctl.call_count("cuMemSetAccess") == 1);
  CHECK(ctl.call_count("cuMemUnmap") == 2);
  CHECK(ctl.call_count("cuMemAddressFree") == 1);
  CHECK(ctl.call_count("cuMemRelease") == 1);
}

}  // namespace

// SWCUDA_DEVICES=3 (CMakeLists.txt).
TEST_SUITE("env") {
  // "CU_POINTER_ATTRIBUTE_MAPPING_SIZE: Size of the actual underlying mapping that the pointer
  // belongs to"; "..._MAPPING_BASE_ADDR: The start address of the mapping that the pointer
  // belongs to": a cuMemMap's range, not the reservation's. Access is per mapping and device
  // (cuMemSetAccess): a device's copy engine faults on a mapping it was not given, as a GPU
  // faults on a page not mapped for it.
  TEST_CASE_FIXTURE(swcu::test::VmmTest,
                    "vmm: mappings answer for themselves and access is per device and mapping") {
    using swcu::test::kTwoMiB;
    const CUmemGenericAllocationHandle h1 = create(kTwoMiB);
    const CUmemGenericAllocationHandle h2 = create(kTwoMiB);
    const CUdeviceptr p = reserve(3 * kTwoMiB);
    map_rw(p, kTwoMiB, h1);  // device 0 only
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p + kTwoMiB, kTwoMiB, 0, h2, 0));
    const CUmemAccessDesc both[] = {swcu::test::read_write(0), swcu::test::read_write(1)};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p + kTwoMiB, kTwoMiB, both, 2));

    const auto pointer = [&](CUpointer_attribute attribute, CUdeviceptr at) {
      unsigned long long value = 0;  // wide enough for every attribute read here
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&value, attribute, at));
      return value;
    };
    CHECK(pointer(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p + kTwoMiB + 100) == p + kTwoMiB);
    CHECK(pointer(CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p + kTwoMiB + 100) == kTwoMiB);
    CHECK(pointer(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p + 8) == p);
    CHECK(pointer(CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 8) == 3 * kTwoMiB);  // the reservation
    CHECK(pointer(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p + 8) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);

    const CUcontext peer = swcu::test::create_context(1);
    CHECK(pointer(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p + 8) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);
    CHECK(pointer(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p + kTwoMiB) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    const CUstream s1 = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32Async(p + kTwoMiB, 7, 16, s1));  // granted to device 1
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s1));
    CHECK(reinterpret_cast<const std::uint32_t*>(p + kTwoMiB)[15] == 7);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32Async(p, 7, 16, s1));  // device 0's only: a fault
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s1), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(reinterpret_cast<const std::uint32_t*>(p)[0] == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(peer));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p + kTwoMiB, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 3 * kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h2));
  }
}
