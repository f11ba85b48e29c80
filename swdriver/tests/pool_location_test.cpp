// Memory pools of every location (device, host, host NUMA; pinned and managed), the current and
// default pool of each, every pointer attribute of cuda.h, pool access enforced on copies and
// memsets, and stream-ordered operations that never ran.
#include <cstdint>
#include <cstring>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUmemPoolProps props_at(CUmemLocationType type, int id = 0,
                        CUmemAllocationType alloc = CU_MEM_ALLOCATION_TYPE_PINNED) {
  CUmemPoolProps props{};
  props.allocType = alloc;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = type;
  props.location.id = id;
  return props;
}

CUmemLocation location(CUmemLocationType type, int id = 0) {
  CUmemLocation loc{};
  loc.type = type;
  loc.id = id;
  return loc;
}

CUmemoryPool create_pool(const CUmemPoolProps& props) {
  CUmemoryPool pool = nullptr;
  REQUIRE(swcu::test::api().cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  return pool;
}

cuuint64_t used(CUmemoryPool pool) {
  cuuint64_t value = 0;
  REQUIRE(swcu::test::api().cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value) ==
          CUDA_SUCCESS);
  return value;
}

std::size_t free_memory() {
  std::size_t free = 0, total = 0;
  REQUIRE(swcu::test::api().cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS);
  return free;
}

template <class T>
T attribute(CUpointer_attribute attr, CUdeviceptr p) {
  T value{};
  REQUIRE(swcu::test::api().cuPointerGetAttribute(&value, attr, p) == CUDA_SUCCESS);
  return value;
}

int device_attribute(CUdevice_attribute attr) {
  int value = -1;
  REQUIRE(swcu::test::api().cuDeviceGetAttribute(&value, attr, 0) == CUDA_SUCCESS);
  return value;
}

CUmemAccess_flags access_of(CUmemoryPool pool, CUmemLocation loc) {
  CUmemAccess_flags flags{};
  REQUIRE(swcu::test::api().cuMemPoolGetAccess(&flags, pool, &loc) == CUDA_SUCCESS);
  return flags;
}

}  // namespace

TEST_SUITE("memory pools") {
  // cuMemPoolCreate (cuda.h): "To create a memory pool for HOST memory ... set
  // CUmemLocation::type to CU_MEM_LOCATION_TYPE_HOST ... Pools created with the type
  // CU_MEM_LOCATION_TYPE_HOST are not IPC capable and handleTypes must be 0, any other values
  // will result in CUDA_ERROR_INVALID_VALUE ... Specifying CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
  // ... will result in CUDA_ERROR_INVALID_VALUE ... In the case of pools created with
  // CU_MEM_LOCATION_TYPE_HOST_NUMA or CU_MEM_LOCATION_TYPE_HOST, their default accessibility
  // will be from the host CPU."
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "host pools hold pinned host memory") {
    CHECK(device_attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) == 1);
    CHECK(device_attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 1);
    CUmemoryPool pool = nullptr;
    CUmemPoolProps props = props_at(CU_MEM_LOCATION_TYPE_HOST, 77);  // the id is ignored
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = props_at(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = props_at(CU_MEM_LOCATION_TYPE_HOST_NUMA, 1);  // node 0 is the only one
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = props_at(CU_MEM_LOCATION_TYPE_NONE);  // "no preferred location": managed only
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    CHECK(pool == nullptr);
    const CUmemoryPool numa = create_pool(props_at(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0));
    pool = create_pool(props_at(CU_MEM_LOCATION_TYPE_HOST, 77));
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 2);
    CHECK(access_of(pool, location(CU_MEM_LOCATION_TYPE_HOST)) ==
          CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(access_of(pool, location(CU_MEM_LOCATION_TYPE_DEVICE)) == CU_MEM_ACCESS_FLAGS_PROT_NONE);

    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t free = free_memory();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 1000, pool, s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);  // stream-ordered memory
    CHECK(used(pool) == 1024);
    CHECK(free_memory() == free);  // host memory is not the device's
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == CU_MEMORYTYPE_HOST);
    CHECK(attribute<void*>(CU_POINTER_ATTRIBUTE_HOST_POINTER, p + 8) ==
          reinterpret_cast<void*>(p + 8));
    CHECK(attribute<CUmemoryPool>(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == pool);
    CHECK(attribute<CUcontext>(CU_POINTER_ATTRIBUTE_CONTEXT, p) == nullptr);
    CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_MANAGED, p) == 0);
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);  // the host CPU's until the device is let in
    CUmemAccessDesc desc{};
    desc.location = location(CU_MEM_LOCATION_TYPE_DEVICE);
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(pool, &desc, 1));
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    desc.location = location(CU_MEM_LOCATION_TYPE_HOST);
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;  // the host keeps its access
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAccess(pool, &desc, 1), CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 0x5a, 1000, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(reinterpret_cast<const unsigned char*>(p)[999] == 0x5a);  // the host reads it
    SWCU_TEST_CHECK_RESULT(cu.cuMemFreeHost(reinterpret_cast<void*>(p)), CUDA_ERROR_INVALID_VALUE);
    unsigned flags = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemHostGetFlags(&flags, reinterpret_cast<void*>(p)),
                           CUDA_ERROR_INVALID_VALUE);  // not cuMemHostAlloc memory
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 64, numa, s));
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == CU_MEMORYTYPE_HOST);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));  // stream-ordered memory may be freed at once
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(used(pool) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(numa));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // CUDA 13: pools of CU_MEM_ALLOCATION_TYPE_MANAGED, at a device, the host, or no preferred
  // location (CU_MEM_LOCATION_TYPE_NONE, "used when creating a managed memory pool").
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "managed pools hold managed memory") {
    CUmemoryPool pool = nullptr;
    CUmemPoolProps props = props_at(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;  // managed memory has no IPC
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props.allocType = swcu::test::invalid_enum<CUmemAllocationType>(3);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    const CUmemoryPool on_device =
        create_pool(props_at(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
    const CUmemoryPool on_host =
        create_pool(props_at(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
    pool = create_pool(props_at(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
    CHECK(access_of(pool, location(CU_MEM_LOCATION_TYPE_DEVICE)) ==
          CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(access_of(pool, location(CU_MEM_LOCATION_TYPE_HOST)) ==
          CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t free = free_memory();
    for (const CUmemoryPool from : {pool, on_device, on_host}) {
      CUdeviceptr p = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 4096, from, s));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
      CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_MANAGED, p) == 1);
      CHECK(attribute<CUmemoryPool>(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == from);
      CHECK(free_memory() == free);  // managed memory is not charged, as cuMemAllocManaged's
      std::memset(reinterpret_cast<void*>(p), 7, 4096);  // the host touches it directly
      unsigned word = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&word, p + 40, sizeof word));
      CHECK(word == 0x07070707u);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAdvise_v2(p, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY,
                                                  location(CU_MEM_LOCATION_TYPE_DEVICE)));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    for (const CUmemoryPool p : {pool, on_device, on_host}) {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(p));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // cuMemGetDefaultMemPool / cuMemGetMemPool / cuMemSetMemPool (cuda.h): "The memory location
  // can be of one of CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST or
  // CU_MEM_LOCATION_TYPE_HOST_NUMA ... When the allocation type is CU_MEM_ALLOCATION_TYPE_MANAGED,
  // the location type can also be CU_MEM_LOCATION_TYPE_NONE ... In all other cases, the call
  // returns CUDA_ERROR_INVALID_VALUE"; "The location and allocation type specified must match
  // those of the pool otherwise CUDA_ERROR_INVALID_VALUE is returned"; cuMemPoolDestroy:
  // "Destroying the current mempool of a device sets the default mempool ... as the current".
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every location has a default and a current pool") {
    struct Case {
      CUmemLocationType type;
      CUmemAllocationType alloc;
    };
    const Case cases[] = {
        {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_ALLOCATION_TYPE_PINNED},
        {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_ALLOCATION_TYPE_PINNED},
        {CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_ALLOCATION_TYPE_PINNED},
        {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_ALLOCATION_TYPE_MANAGED},
        {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_ALLOCATION_TYPE_MANAGED},
        {CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_ALLOCATION_TYPE_MANAGED},
        {CU_MEM_LOCATION_TYPE_NONE, CU_MEM_ALLOCATION_TYPE_MANAGED},
    };
    std::vector<CUmemoryPool> defaults;
    for (const Case& c : cases) {
      CAPTURE(c.type);
      CAPTURE(c.alloc);
      CUmemLocation loc = location(c.type);
      CUmemoryPool fallback = nullptr, again = nullptr, current = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetDefaultMemPool(&fallback, &loc, c.alloc));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetDefaultMemPool(&again, &loc, c.alloc));
      CHECK(fallback != nullptr);
      CHECK(again == fallback);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetMemPool(&current, &loc, c.alloc));
      CHECK(current == fallback);
      for (const CUmemoryPool other : defaults) CHECK(other != fallback);
      defaults.push_back(fallback);
      SWCU_TEST_CHECK_RESULT(cu.cuMemPoolDestroy(fallback), CUDA_ERROR_INVALID_VALUE);

      const CUmemoryPool pool = create_pool(props_at(c.type, 0, c.alloc));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetMemPool(&loc, c.alloc, pool));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetMemPool(&current, &loc, c.alloc));
      CHECK(current == pool);
      const CUmemAllocationType other_type = c.alloc == CU_MEM_ALLOCATION_TYPE_PINNED
                                                 ? CU_MEM_ALLOCATION_TYPE_MANAGED
                                                 : CU_MEM_ALLOCATION_TYPE_PINNED;
      if (c.type != CU_MEM_LOCATION_TYPE_NONE) {  // the pool's type must match
        SWCU_TEST_CHECK_RESULT(cu.cuMemSetMemPool(&loc, other_type, pool),
                               CUDA_ERROR_INVALID_VALUE);
      }
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));  // the default is current again
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetMemPool(&current, &loc, c.alloc));
      CHECK(current == fallback);
    }
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == 0);  // default pools are not the program's

    CUmemoryPool out = nullptr;
    CUmemLocation loc = location(CU_MEM_LOCATION_TYPE_NONE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetDefaultMemPool(&out, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
                           CUDA_ERROR_INVALID_VALUE);
    loc = location(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetMemPool(&out, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
                           CUDA_ERROR_INVALID_VALUE);
    loc = location(CU_MEM_LOCATION_TYPE_DEVICE, 5);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetDefaultMemPool(&out, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
                           CUDA_ERROR_INVALID_DEVICE);
    loc = location(CU_MEM_LOCATION_TYPE_HOST);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetDefaultMemPool(&out, &loc, CU_MEM_ALLOCATION_TYPE_INVALID),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetDefaultMemPool(&out, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(out == nullptr);
    // A host pool is no device's: cuDeviceSetMemPool and a device location refuse it.
    const CUmemoryPool host = create_pool(props_at(CU_MEM_LOCATION_TYPE_HOST));
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetMemPool(0, host), CUDA_ERROR_INVALID_VALUE);
    loc = location(CU_MEM_LOCATION_TYPE_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, host),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(host));
  }

  // Every CU_POINTER_ATTRIBUTE_* of cuda.h 13.0, for each kind of memory.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "pointer attributes: every attribute of cuda.h") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr d = 0, p = 0, m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 100));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 100, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 100, CU_MEM_ATTACH_GLOBAL));
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 100, 0));
    const auto h = reinterpret_cast<CUdeviceptr>(pinned);
    std::vector<unsigned char> page(8192);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostRegister_v2(page.data(), page.size(), CU_MEMHOSTREGISTER_READ_ONLY));
    const auto r = reinterpret_cast<CUdeviceptr>(page.data());

    // MAPPING_BASE_ADDR / MAPPING_SIZE: "the actual underlying mapping that the pointer belongs
    // to": each allocation here is one mapping of its own.
    for (const CUdeviceptr base : {d, p, m, h}) {
      CHECK(attribute<void*>(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, base + 10) ==
            reinterpret_cast<void*>(base));
      CHECK(attribute<std::size_t>(CU_POINTER_ATTRIBUTE_MAPPING_SIZE, base + 10) == 100);
      // MEMORY_BLOCK_ID: "a process-wide unique id corresponding to the physical allocation".
      CHECK(attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, base) ==
            attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_BUFFER_ID, base));
      // No GPUDirect RDMA here (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED is 0).
      CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, base) == 0);
      CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, base) == 0);
      CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, base) ==
            CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    }
    CHECK(device_attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) == 0);
    CHECK(attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, d) !=
          attribute<unsigned long long>(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p));
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, r) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ);  // a read-only registration
    // IS_LEGACY_CUDA_IPC_CAPABLE: "suitable for cudaIpcGetMemHandle": cuMemAlloc memory only.
    CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, d) == 1);
    CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p) == 0);
    CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, m) == 0);
    CHECK(attribute<int>(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, h) == 0);
    // P2P_TOKENS: "ptr must be a pointer to memory obtained from cuMemAlloc()"; the nv-p2p.h
    // interface it serves does not exist here.
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens{};
    SWCU_TEST_CHECK_RESULT(cu.cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d),
                           CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_CHECK_RESULT(cu.cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, h),
                           CUDA_ERROR_INVALID_VALUE);

    // cuPointerGetAttributes: "will not return an error when the ptr encountered is not a valid
    // CUDA pointer. Instead, the attributes are assigned default NULL values".
    int on_stack = 0;
    const auto unknown = reinterpret_cast<CUdeviceptr>(&on_stack);
    CUpointer_attribute all[] = {CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
                                 CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
                                 CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
                                 CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR,
                                 CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID,
                                 CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
    int rdma = 9;
    unsigned access = 9;
    std::size_t size = 9;
    void* base = &on_stack;
    unsigned long long block = 9;
    CUmemoryPool owner = reinterpret_cast<CUmemoryPool>(&on_stack);
    void* values[] = {&rdma, &access, &size, &base, &block, &owner};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(6, all, values, unknown));
    CHECK(rdma == 0);
    CHECK(access == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);
    CHECK(size == 0);
    CHECK(base == nullptr);
    CHECK(block == 0);
    CHECK(owner == nullptr);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(6, all, values, p + 1));
    CHECK(access == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    CHECK(size == 100);
    CHECK(base == reinterpret_cast<void*>(p));
    CHECK(block != 0);
    CHECK(owner != nullptr);

    // ACCESS_FLAGS is the current context's device's: no context is an error alone.
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_CHECK_RESULT(cu.cuPointerGetAttribute(&access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, d),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(6, all, values, d));
    CHECK(access == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);
    CHECK(size == 100);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(popped));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostUnregister(page.data()));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    // The default pool keeps the freed block reserved until a synchronization returns it.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // Fault injection: an operation that never ran did nothing. A stream-ordered allocation whose
  // operation failed (":async") or was skipped in a broken context (":sticky") does not exist,
  // and a free that never ran leaves the allocation live, freeable with cuMemFree (which, for
  // stream-ordered memory, needs no context: cuCtxDestroy does not free it, as cuda.h says).
  // Runs immediate, and deferred (CMakeLists.txt: SWCUDA_EXEC=deferred).
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "stream-ordered operations that never ran leave nothing to leak") {
    CUmemoryPool fallback = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetDefaultMemPool(&fallback, 0));
    CUcontext ctx = create_context();
    CUstream s = create_stream();
    REQUIRE(ctl.add_fault_rule("cuMemAllocAsync:1:CUDA_ERROR_LAUNCH_FAILED:async:sticky") == 0);
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 256, s));
    CHECK(p != 0);
    static_cast<void>(cu.cuMemFreeAsync(p, s));  // immediate: refused, the context is broken
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(used(fallback) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);  // nothing is there
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));

    // A free whose operation fails leaves the allocation live and freeable.
    ctx = create_context();
    s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 256, s));
    REQUIRE(ctl.add_fault_rule("cuMemFreeAsync:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));  // again, without a fault
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);

    // A sticky one: the context is broken, the memory survives it and cuMemFree frees it.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 256, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    REQUIRE(ctl.add_fault_rule("cuMemFreeAsync:1:CUDA_ERROR_LAUNCH_FAILED:async:sticky") == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(used(fallback) == 0);
  }
}

// SWCUDA_DEVICES=3 SWCUDA_P2P=0-1,1-0,0-2 (CMakeLists.txt).
TEST_SUITE("env") {
  // Pool memory "does not follow cuCtxEnablePeerAccess ... cudaMemPoolSetAccess modifies what
  // devices can access allocations from a pool" (CUDA Programming Guide, stream-ordered
  // allocator); a device without access faults on it as on any unmapped address:
  // CUDA_ERROR_ILLEGAL_ADDRESS, when the operation executes, sticky.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: copies and memsets on a device without pool access fault") {
    const CUcontext owner = create_context(0);
    const CUstream s0 = create_stream();
    CUmemoryPool pool = nullptr;
    const CUmemPoolProps props = props_at(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolCreate(&pool, &props));
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 64, pool, s0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 3, 64, s0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s0));

    CUcontext peer = create_context(1);
    CUstream s1 = create_stream();
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 9, 64, s1));  // the call is fine
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s1), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(peer));

    CUmemAccessDesc desc{};
    desc.location = location(CU_MEM_LOCATION_TYPE_DEVICE, 1);
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(pool, &desc, 1));
    peer = create_context(1);
    s1 = create_stream();
    CHECK(attribute<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p) ==
          CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ);
    unsigned char host[64] = {};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(host, p, 64, s1));  // reading is allowed
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s1));
    CHECK(host[63] == 3);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(p, host, 64, s1));  // writing is not
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s1), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(peer));

    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(pool, &desc, 1));
    peer = create_context(1);
    s1 = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 9, 64, s1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s1));
    CHECK(reinterpret_cast<const unsigned char*>(p)[0] == 9);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(peer));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, s0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(owner));
  }
}
