// Memory pools and stream-ordered allocation.
#include <cstdint>
#include <cstring>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUmemPoolProps device_props(int device = 0) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  return props;
}

CUmemoryPool create_pool(const CUmemPoolProps& props = device_props()) {
  CUmemoryPool pool = nullptr;
  REQUIRE(swcu::test::api().cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  return pool;
}

cuuint64_t attribute(CUmemoryPool pool, CUmemPool_attribute attr) {
  cuuint64_t value = 0;
  REQUIRE(swcu::test::api().cuMemPoolGetAttribute(pool, attr, &value) == CUDA_SUCCESS);
  return value;
}

void set_attribute(CUmemoryPool pool, CUmemPool_attribute attr, cuuint64_t value) {
  REQUIRE(swcu::test::api().cuMemPoolSetAttribute(pool, attr, &value) == CUDA_SUCCESS);
}

std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  REQUIRE(swcu::test::api().cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS);
  return free;
}

}  // namespace

TEST_SUITE("memory pools") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "pool properties are validated") {
    CUmemoryPool pool = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUmemPoolProps props = device_props();
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(nullptr, &props), CUDA_ERROR_INVALID_VALUE);
    props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = device_props(1);  // one device
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = device_props();
    props.location.type = CU_MEM_LOCATION_TYPE_INVALID;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;  // documented as invalid
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = device_props();
    props.handleTypes = CU_MEM_HANDLE_TYPE_WIN32;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props.handleTypes = swcu::test::invalid_enum<CUmemAllocationHandleType>(0x40);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_SUPPORTED);
    props = device_props();
    props.reserved[3] = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    CHECK(pool == nullptr);
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 0);
    props = device_props();
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    pool = create_pool(props);
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a pool accounts used and reserved memory and releases above its threshold") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUmemoryPool pool = create_pool();
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0);
    // An earlier test in this process may have left memory reserved in the device's default
    // pool; a synchronize releases it (threshold 0), so the baseline is taken after one.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::size_t free = free_memory();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 1000, pool, s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 1024);
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 1024);
    CHECK(free_memory() == free - 1024);  // reserved memory is the device's
    CUmemoryPool owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    CHECK(owner == pool);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);         // immediate mode: freed
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 1024);  // until a synchronize
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
    CHECK(free_memory() == free);

    // Above a threshold, reserved memory stays for reuse; trimming releases it.
    set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1 << 20);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 4096, pool, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 4096);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 2048, pool, s));  // reuses it
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 4096);
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 4096);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolTrimTo(pool, 0));
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 2048);  // what is used stays
    set_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0);  // reset to the current value
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 2048);
    set_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0);
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 2048);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolTrimTo(pool, 100000));  // keeps up to that much
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 2048);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolTrimTo(pool, 0));
    CHECK(attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);

    // Attribute rules.
    cuuint64_t value = 5;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &value),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemPoolGetAttribute(pool, swcu::test::invalid_enum<CUmemPool_attribute>(99), &value),
        CUDA_ERROR_INVALID_VALUE);
    int reuse = 7;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    CHECK(reuse == 1);
    reuse = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    CHECK(reuse == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolTrimTo(reinterpret_cast<CUmemoryPool>(s), 0),
                           CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a pool's maximum size limits its allocations") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUmemPoolProps props = device_props();
    props.maxSize = 4096;
    const CUmemoryPool pool = create_pool(props);
    CUdeviceptr a = 0, b = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&a, 4000, pool, s));
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocFromPoolAsync(&b, 1, pool, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(b == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocFromPoolAsync(&b, 0, pool, s), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocFromPoolAsync(&b, 8, nullptr, s), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(a, s));
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);  // already freed
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&b, 4096, pool, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(b, s));
    const CUdeviceptr plain = [&] {
      CUdeviceptr p = 0;
      REQUIRE(cu.cuMemAlloc_v2(&p, 16) == CUDA_SUCCESS);
      return p;
    }();
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeAsync(plain, s),
                           CUDA_ERROR_INVALID_VALUE);  // not stream-ordered
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(plain));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "default and current pools of a device") {
    CUmemoryPool default_pool = nullptr, current = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetDefaultMemPool(&default_pool, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetMemPool(&current, 0));
    CHECK(default_pool != nullptr);
    CHECK(current == default_pool);
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 0);  // not a handle the program owns
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemoryPool same = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemGetDefaultMemPool(&same, &location, CU_MEM_ALLOCATION_TYPE_PINNED));
    CHECK(same == default_pool);
    location.type = CU_MEM_LOCATION_TYPE_HOST;  // the host's pool (pool_location_test.cpp)
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemGetDefaultMemPool(&same, &location, CU_MEM_ALLOCATION_TYPE_PINNED));
    CHECK(same != default_pool);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetDefaultMemPool(&same, 1), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetDefaultMemPool(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolDestroy(default_pool), CUDA_ERROR_INVALID_VALUE);

    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUmemoryPool pool = create_pool();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceSetMemPool(0, pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetMemPool(&current, 0));
    CHECK(current == pool);
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 64, s));  // from the current pool
    CUmemoryPool owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    CHECK(owner == pool);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));  // the default pool is current again
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetMemPool(&current, 0));
    CHECK(current == default_pool);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetMemPool(0, pool), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetMemPool(1, default_pool), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceSetMemPool(0, default_pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 64, nullptr));  // the legacy stream
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    CHECK(owner == default_pool);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the owning device always has read-write access to a pool") {
    const CUmemoryPool pool = create_pool();
    CUmemAccess_flags flags{};
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, pool, &location));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc desc{};
    desc.location = location;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAccess(pool, &desc, 1), CUDA_ERROR_INVALID_VALUE);
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(pool, &desc, 1));
    desc.location.id = 4;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAccess(pool, &desc, 1), CUDA_ERROR_INVALID_VALUE);
    location.id = 4;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolGetAccess(&flags, pool, &location),
                           CUDA_ERROR_INVALID_VALUE);
    location.type = CU_MEM_LOCATION_TYPE_HOST;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, pool, &location));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a destroyed pool keeps its memory until its allocations are freed") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t free = free_memory();
    const CUmemoryPool pool = create_pool();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 512, pool, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 1, 512, s));  // still usable
    CHECK(free_memory() == free - 512);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    CHECK(free_memory() == free);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "stream-ordered allocations do not belong to a context") {
    const CUcontext ctx = create_context();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 256, nullptr));
    CUcontext owner = ctx;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    CHECK(owner == nullptr);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));  // cuCtxDestroy does not free it
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    const CUcontext next = create_context();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));  // no synchronization for stream-ordered memory
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(next));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "stream-ordered allocation validates its arguments") {
    CUdeviceptr p = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(&p, 64, nullptr), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(&p, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(nullptr, 8, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(&p, 8, reinterpret_cast<CUstream>(ctx)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocAsync(&p, size_t{1} << 50, nullptr),
                           CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeAsync(12345, nullptr), CUDA_ERROR_INVALID_VALUE);
    CHECK(p == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync_ptsz(&p, 8, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, CU_STREAM_PER_THREAD));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
