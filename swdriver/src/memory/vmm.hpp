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
// a range of a reservation only where it is mapped, without holes, and accessible (read-only or
// read-write) to some device or the host; a copy or memset checks, when it executes, that the
// device whose stream runs it may read its source and write its destination
// (device_may_access); the interpreter's memory map (exec/interpret.cpp) holds the ranges the
// launching context's device may access, read-only ones marked so that a store or atomic
// faults. Everything else in a reservation is an illegal address.
#pragma once

#include <cstdint>
#include <map>
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
/// and accessible (read-only or read-write) to some device or the host.
[[nodiscard]] bool vmm_accessible(const Allocation& r, std::uintptr_t address,
                                  std::size_t bytes) noexcept;

/// Whether a copy or memset `device` runs may touch all of [address, address + bytes) of the
/// reservation `r` (write: read-write, else read): mapped without holes, each mapping so
/// accessible to that device or, for memory on the host, to the host.
[[nodiscard]] bool vmm_device_may(const Allocation& r, std::uintptr_t address, std::size_t bytes,
                                  int device, bool write) noexcept;

/// The mapping of the reservation `r` that holds `address`, with its first address in `base`;
/// nullptr where nothing is mapped.
[[nodiscard]] const VmmMapping* vmm_mapping_at(const Allocation& r, std::uintptr_t address,
                                               std::uintptr_t& base) noexcept;

/// A range of a reservation that a device may access.
struct VmmDeviceRange {
  std::uintptr_t first = 0;
  std::uintptr_t end = 0;
  bool read_only = false;  ///< CU_MEM_ACCESS_FLAGS_PROT_READ: loads only
};

/// The ranges of the reservation `r` that `device` may access, adjacent mappings with the same
/// access merged, in address order.
[[nodiscard]] std::vector<VmmDeviceRange> vmm_device_ranges(const Allocation& r, int device);

}  // namespace swcu
