// Pointer attributes across every kind of memory: cuPointerGetAttributes answers each attribute
// as cuPointerGetAttribute does, and what virtual memory mappings report about the physical
// allocation behind them (ALLOWED_HANDLE_TYPES, MEMORY_BLOCK_ID, MAPPED, DEVICE_ORDINAL).
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "vmm_support.hpp"

namespace {

using swcu::test::device_prop;
using swcu::test::kTwoMiB;
using swcu::test::VmmTest;

constexpr int kFirstAttribute = CU_POINTER_ATTRIBUTE_CONTEXT;
constexpr int kLastAttribute = CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE;  // cuda.h's last

// One attribute's value: wide enough for every type cuda.h gives them (CUDA_POINTER_ATTRIBUTE_
// P2P_TOKENS, two 64-bit tokens, is the widest).
using Value = std::array<unsigned char, 16>;

// A pinned pool at `location`, shareable as `handle_types`.
CUmemoryPool create_pool(CUmemLocationType location, unsigned handle_types) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
  props.location.type = location;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  REQUIRE(swcu::test::api().cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  return pool;
}

std::string attribute_name(int attribute) {
  return "CUpointer_attribute " + std::to_string(attribute);
}

}  // namespace

// "Unlike cuPointerGetAttribute, this function will not return an error when the ptr encountered
// is not a valid CUDA pointer. Instead, the attributes are assigned default NULL values and
// CUDA_SUCCESS is returned": for every attribute of cuda.h and every kind of memory, with a
// current context, cuPointerGetAttributes writes what cuPointerGetAttribute writes, or, where
// cuPointerGetAttribute refuses the attribute for that memory (CUDA_ERROR_INVALID_VALUE), the
// default (0, NULL, CU_DEVICE_INVALID as the ordinal). The P2P tokens are not in its list.
TEST_CASE_FIXTURE(VmmTest,
                  "cuPointerGetAttributes answers every attribute as cuPointerGetAttribute") {
  CUdeviceptr device = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&device, 100));
  void* mapped_host = nullptr;
  void* unmapped_host = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&mapped_host, 100, CU_MEMHOSTALLOC_DEVICEMAP));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&unmapped_host, 100, 0));
  std::vector<unsigned char> page(static_cast<std::size_t>(2 * sysconf(_SC_PAGESIZE)));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostRegister_v2(page.data(), 64, CU_MEMHOSTREGISTER_READ_ONLY));
  CUdeviceptr managed = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&managed, 100, CU_MEM_ATTACH_GLOBAL));
  const CUmemoryPool device_pool =
      create_pool(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  const CUmemoryPool host_pool = create_pool(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
  CUdeviceptr from_device_pool = 0, from_host_pool = 0;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemAllocFromPoolAsync(&from_device_pool, 100, device_pool, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&from_host_pool, 100, host_pool, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  const CUmemGenericAllocationHandle h = create(kTwoMiB, device_prop(0, 1));
  const CUdeviceptr reserved = reserve(2 * kTwoMiB);
  map_rw(reserved, kTwoMiB, h);
  int on_stack = 0;

  const struct {
    const char* what;
    CUdeviceptr ptr;
  } memory[] = {
      {"cuMemAlloc", device + 10},
      {"cuMemHostAlloc DEVICEMAP", reinterpret_cast<CUdeviceptr>(mapped_host)},
      {"cuMemHostAlloc unmapped", reinterpret_cast<CUdeviceptr>(unmapped_host) + 1},
      {"read-only registration", reinterpret_cast<CUdeviceptr>(page.data())},
      {"managed", managed},
      {"device pool", from_device_pool},
      {"host NUMA pool", from_host_pool + 99},
      {"VMM mapping", reserved + 4096},
      {"VMM reservation, unmapped", reserved + kTwoMiB + 64},
      {"unknown", reinterpret_cast<CUdeviceptr>(&on_stack)},
  };
  std::vector<CUpointer_attribute> all;
  for (int attribute = kFirstAttribute; attribute <= kLastAttribute; ++attribute) {
    if (attribute != CU_POINTER_ATTRIBUTE_P2P_TOKENS) {
      all.push_back(static_cast<CUpointer_attribute>(attribute));
    }
  }
  for (const auto& m : memory) {
    INFO(m.what);
    std::vector<Value> together(all.size(), Value{});
    std::vector<void*> slots;
    for (Value& v : together) slots.push_back(v.data());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(static_cast<unsigned>(all.size()),
                                                        all.data(), slots.data(), m.ptr));
    for (std::size_t i = 0; i < all.size(); ++i) {
      INFO(attribute_name(all[i]));
      Value alone{}, one{};
      const CUresult r = cu.cuPointerGetAttribute(alone.data(), all[i], m.ptr);
      CUpointer_attribute attribute = all[i];
      void* slot = one.data();
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttributes(1, &attribute, &slot, m.ptr));
      CHECK(one == together[i]);  // alone or among all of them: the same answer
      if (r == CUDA_SUCCESS) {
        CHECK(one == alone);
        continue;
      }
      SWCU_TEST_CHECK_RESULT(r, CUDA_ERROR_INVALID_VALUE);
      Value fallback{};
      if (all[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
        const int invalid = CU_DEVICE_INVALID;
        std::memcpy(fallback.data(), &invalid, sizeof invalid);
      }
      CHECK(one == fallback);
    }
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens{};
    CUpointer_attribute p2p = CU_POINTER_ATTRIBUTE_P2P_TOKENS;
    void* token_slot = &tokens;
    SWCU_TEST_CHECK_RESULT(cu.cuPointerGetAttributes(1, &p2p, &token_slot, m.ptr),
                           CUDA_ERROR_INVALID_VALUE);
  }

  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(reserved, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(reserved, 2 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(from_device_pool, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(from_host_pool, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(device_pool));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(host_pool));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(managed));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostUnregister(page.data()));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(unmapped_host));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(mapped_host));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(device));
}

// In a reserved range the pointer belongs to the cuMemCreate allocation mapped there:
// "CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: A process-wide unique id corresponding to the physical
// allocation the pointer belongs to" (so every mapping of one allocation, and every handle of it
// in this process, gives the same id, and another allocation another one);
// "..._ALLOWED_HANDLE_TYPES: Bitmask of allowed CUmemAllocationHandleType for this allocation"
// (its requestedHandleTypes, what cuMemExportToShareableHandle accepts); "..._MAPPED: 1 if this
// pointer is in a valid address range that is mapped to a backing allocation".
TEST_CASE_FIXTURE(VmmTest, "pointer attributes of a mapping describe its physical allocation") {
  const CUmemGenericAllocationHandle shareable = create(kTwoMiB, device_prop(0, 1));
  const CUmemGenericAllocationHandle plain = create(kTwoMiB);
  const CUdeviceptr p = reserve(3 * kTwoMiB);
  const CUdeviceptr q = reserve(kTwoMiB);
  map_rw(p, kTwoMiB, shareable);
  map_rw(p + kTwoMiB, kTwoMiB, plain);
  map_rw(q, kTwoMiB, shareable);  // the same allocation again
  const auto attribute = [&](CUpointer_attribute a, CUdeviceptr at) {
    unsigned long long value = 0;  // wide enough for every attribute read here
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&value, a, at));
    return value;
  };
  const auto block = [&](CUdeviceptr at) {
    return attribute(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, at);
  };
  CHECK(block(p) != 0);
  CHECK(block(p) == block(p + kTwoMiB - 1));
  CHECK(block(p) == block(q + 12345));    // another mapping of the same allocation
  CHECK(block(p) != block(p + kTwoMiB));  // another allocation
  CHECK(block(p) != attribute(CU_POINTER_ATTRIBUTE_BUFFER_ID, p));  // ids of ranges differ
  CHECK(block(p + 2 * kTwoMiB) == 0);                               // nothing mapped there
  CHECK(attribute(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p) ==
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CHECK(attribute(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p + kTwoMiB) == 0);
  CHECK(attribute(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p + 2 * kTwoMiB) == 0);
  CHECK(attribute(CU_POINTER_ATTRIBUTE_MAPPED, p + kTwoMiB) == 1);
  CHECK(attribute(CU_POINTER_ATTRIBUTE_MAPPED, p + 2 * kTwoMiB) == 0);
  CHECK(attribute(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 8) == p + 8);
  CUdeviceptr none = 0;
  SWCU_TEST_CHECK_RESULT(
      cu.cuPointerGetAttribute(&none, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 2 * kTwoMiB),
      CUDA_ERROR_INVALID_VALUE);  // no kernel reaches an unmapped address

  // An import of the allocation in this process is a new handle to the same memory: the same
  // block. The pool and cuMemAlloc memory report their own handle types.
  int fd = -1;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemExportToShareableHandle(&fd, shareable, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemGenericAllocationHandle imported = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemImportFromShareableHandle(
      &imported, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CHECK(close(fd) == 0);
  const CUdeviceptr r = reserve(kTwoMiB);
  map_rw(r, kTwoMiB, imported);
  CHECK(block(r) == block(p));
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 64));
  CHECK(attribute(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, d) == 0);
  CHECK(block(d) == attribute(CU_POINTER_ATTRIBUTE_BUFFER_ID, d));  // its own allocation

  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
  for (const auto& [ptr, size] :
       {std::pair{p, 2 * kTwoMiB}, std::pair{q, kTwoMiB}, std::pair{r, kTwoMiB}}) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(ptr, size));
  }
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 3 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(q, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(r, kTwoMiB));
  for (const CUmemGenericAllocationHandle x : {shareable, plain, imported}) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(x));
  }
}

// SWCUDA_DEVICES=3 (CMakeLists.txt).
TEST_SUITE("env") {
  // "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: a device ordinal of a device against which the memory
  // was allocated": mapped device memory is its allocation's device's, whichever context asks.
  TEST_CASE_FIXTURE(VmmTest, "pointer attributes of a mapping name its allocation's device") {
    const CUmemGenericAllocationHandle h = create(kTwoMiB, device_prop(2));
    const CUdeviceptr p = reserve(kTwoMiB);
    map_rw(p, kTwoMiB, h);
    int ordinal = -1;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    CHECK(ordinal == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  }
}
