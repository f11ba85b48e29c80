// Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess...):
// physical allocations mapped into reserved address ranges.
//
// A physical allocation (VmmAllocation, kind SWCU_VMM_ALLOCATION, the CUmemGenericAllocationHandle)
// is a memfd of its size plus one header page at its end (VmmFileHeader: what an importer in
// another process needs). A reservation is an Allocation of kind SWCU_ADDRESS_RESERVATION in the
// address map: an anonymous PROT_NONE mapping of the whole range, so that every address in it is
// the driver's and no other mapping can take it. cuMemMap maps the memfd over part of it
// (MAP_FIXED | MAP_SHARED), so two mappings of one allocation show the same bytes, and a copy or
// a kernel reads and writes the memory at its device address like any other device memory.
//
// Access: a mapping starts with no access (its pages PROT_NONE). find_range (memory.hpp) accepts
// a range of a reservation only where it is mapped, without holes, and read-write for some
// device; the interpreter's memory map (exec/interpret.cpp) holds the ranges the launching
// context's device may access. Everything else in a reservation is an illegal address.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "memory/memory.hpp"

namespace swcu {

struct VmmAllocation;  // vmm_allocation.hpp

/// One cuMemMap of a reservation.
struct VmmMapping {
  std::size_t size = 0;
  std::size_t offset = 0;               ///< into the physical allocation
  VmmAllocation* allocation = nullptr;  ///< live while it is mapped
  std::vector<int> access;              ///< CUmemAccess_flags per device
  int host_access = 0;                  ///< CUmemAccess_flags of the host (host allocations)
};

/// The mappings of a reservation, by address.
struct VmmRanges {
  std::map<std::uintptr_t, VmmMapping> mappings;
};

/// Whether all of [address, address + bytes) of the reservation `r` is mapped, without holes,
/// and read-write for some device.
[[nodiscard]] bool vmm_accessible(const Allocation& r, std::uintptr_t address,
                                  std::size_t bytes) noexcept;

/// Whether a copy or memset `device` runs may read and write all of [address, address + bytes)
/// of the reservation `r`: mapped without holes, each mapping read-write for that device or,
/// for memory on the host, for the host.
[[nodiscard]] bool vmm_device_may(const Allocation& r, std::uintptr_t address, std::size_t bytes,
                                  int device) noexcept;

/// The mapping of the reservation `r` that holds `address`, with its first address in `base`;
/// nullptr where nothing is mapped.
[[nodiscard]] const VmmMapping* vmm_mapping_at(const Allocation& r, std::uintptr_t address,
                                               std::uintptr_t& base) noexcept;

/// The ranges [first, end) of the reservation `r` that `device` may read and write, adjacent
/// mappings merged, in address order.
[[nodiscard]] std::vector<std::pair<std::uintptr_t, std::uintptr_t>> vmm_device_ranges(
    const Allocation& r, int device);

}  // namespace swcu
