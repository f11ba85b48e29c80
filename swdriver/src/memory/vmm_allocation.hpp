// Virtual memory management, physical side: the allocations cuMemCreate makes and
// cuMemImportFromShareableHandle opens (vmm.hpp has the address side).
//
// An allocation is a memfd of its size plus one header page after it (VmmFileHeader: the
// location and the handle types, what an importer in another process needs). Exporting it as a
// POSIX file descriptor hands out a new descriptor of that memfd; importing one checks the header
// and keeps a duplicate, so both processes map the same file and see the same bytes.
//
// Lifetime: the handle (the object's address) counts as live (kind SWCU_VMM_ALLOCATION) while a
// handle reference (cuMemCreate, an import, each cuMemRetainAllocationHandle) or a mapping holds
// it: "The memory allocation will be freed when all outstanding mappings to the memory are
// unmapped and when all outstanding references to the handle ... are also released."
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/api.hpp"

namespace swcu {

/// The granularity of device allocations, minimum and recommended (2 MiB, as on NVIDIA GPUs),
/// and the default alignment of reservations.
inline constexpr std::size_t kVmmGranularity = std::size_t{2} << 20;

/// A physical allocation: what a CUmemGenericAllocationHandle points to.
struct VmmMulticast;  // multicast.hpp

struct VmmAllocation final : Object {
  VmmAllocation() noexcept : Object(SWCU_VMM_ALLOCATION) {}
  /// Closes the memfd (mappings are gone by then).
  void release() noexcept override;

  int fd = -1;                     ///< the memfd: `size` bytes, then the header page
  std::size_t size = 0;            ///< of the memory
  CUmemAllocationProp prop{};      ///< as cuMemGetAllocationPropertiesFromHandle reports them
  unsigned long long charged = 0;  ///< bytes charged to prop.location's device (not imports)
  unsigned refs = 1;               ///< handle references not yet released with cuMemRelease
  unsigned mappings = 0;           ///< cuMemMap ranges not yet unmapped
  /// CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: the physical memory's id in this process, shared by
  /// every handle of the same memory (an import of an allocation this process holds).
  unsigned long long block_id = 0;
  std::uint64_t inode = 0;  ///< of `fd`: what tells two handles of the same memory
  /// Set for a multicast object (cuMulticastCreate): its team and bindings.
  std::shared_ptr<VmmMulticast> multicast;
};

/// The allocation a handle names while the program holds a reference to it; nullptr for any
/// other value (never created, or released).
[[nodiscard]] VmmAllocation* find_vmm_allocation(State& s,
                                                 CUmemGenericAllocationHandle handle) noexcept;

/// The minimum granularity of memory at `location` (validated): 2 MiB on a device, a page on the
/// host.
[[nodiscard]] std::size_t minimum_granularity(const CUmemLocation& location) noexcept;

/// Takes one more handle reference (cuMemRetainAllocationHandle); returns the handle.
[[nodiscard]] CUmemGenericAllocationHandle retain(VmmAllocation& v) noexcept;

/// One mapping of `v` went; frees it when nothing holds it any more.
void unmapped(State& s, VmmAllocation& v) noexcept;

}  // namespace swcu
