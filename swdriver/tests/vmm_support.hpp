// Helpers for the virtual memory management tests (vmm_test.cpp, vmm_share_test.cpp): a test
// with a context, and short forms of the calls every VMM test makes.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "module_support.hpp"

namespace swcu::test {

/// The granularity of device allocations (minimum and recommended), as on NVIDIA GPUs.
inline constexpr std::size_t kTwoMiB = std::size_t{2} << 20;

/// Allocation properties: pinned memory on device `device`, shareable as `handle_types`.
[[nodiscard]] inline CUmemAllocationProp device_prop(int device = 0, unsigned handle_types = 0) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
  return p;
}

/// Read-write access for device `device`.
[[nodiscard]] inline CUmemAccessDesc read_write(int device = 0) {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = device;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

/// A test with a created context (ModuleTest, for the kernel tests too).
struct VmmTest : ModuleTest {
  /// cuMemCreate of `size` bytes with `prop`; requires success.
  CUmemGenericAllocationHandle create(std::size_t size,
                                      const CUmemAllocationProp& prop = device_prop()) {
    CUmemGenericAllocationHandle h = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemCreate(&h, size, &prop, 0));
    return h;
  }
  /// cuMemAddressReserve of `size` bytes (default alignment); requires success.
  CUdeviceptr reserve(std::size_t size) {
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressReserve(&p, size, 0, 0, 0));
    return p;
  }
  /// Maps `h` at `p` and gives device 0 read-write access.
  void map_rw(CUdeviceptr p, std::size_t size, CUmemGenericAllocationHandle h,
              std::size_t offset = 0) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, size, offset, h, 0));
    const CUmemAccessDesc rw = read_write();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemSetAccess(p, size, &rw, 1));
  }
  /// Copies `values` to `p` (cuMemcpyHtoD).
  void put(CUdeviceptr p, const std::vector<std::uint32_t>& values) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(p, values.data(), values.size() * 4));
  }
  /// `count` values read from `p` (cuMemcpyDtoH).
  std::vector<std::uint32_t> get(CUdeviceptr p, std::size_t count) {
    std::vector<std::uint32_t> out(count);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(out.data(), p, count * 4));
    return out;
  }
  /// Bytes of device memory in use (cuMemGetInfo: total - free).
  std::size_t used() {
    std::size_t free = 0, total = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free, &total));
    return total - free;
  }
};

/// 0, 1, 2, ... `count` - 1, plus `base`.
[[nodiscard]] inline std::vector<std::uint32_t> iota(std::size_t count, std::uint32_t base = 0) {
  std::vector<std::uint32_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = base + static_cast<std::uint32_t>(i);
  return v;
}

}  // namespace swcu::test
