// Virtual memory management, address side: reservations, mappings and access (vmm.hpp).
// The physical allocations (cuMemCreate, sharing) are in vmm_allocation.cpp.
#include "memory/vmm.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <limits>

#include "memory/multicast.hpp"
#include "memory/vmm_allocation.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr int kNone = CU_MEM_ACCESS_FLAGS_PROT_NONE;
constexpr int kRead = CU_MEM_ACCESS_FLAGS_PROT_READ;
constexpr int kReadWrite = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

// Whether someone (a device, or the host for host memory) may access the mapping at all.
bool any_access(const VmmMapping& m) noexcept {
  return m.host_access != kNone ||
         std::any_of(m.access.begin(), m.access.end(), [](int a) { return a != kNone; });
}

// Whether `flags` allow a write (read-write), or else a read (read-only or read-write).
bool allows(int flags, bool write) noexcept { return write ? flags == kReadWrite : flags != kNone; }

// The reservation that holds all of [ptr, ptr + size); nullptr if none.
Allocation* reservation_of(State& s, std::uintptr_t ptr, std::size_t size) noexcept {
  Allocation* const r = find_allocation(s, ptr);
  if (r == nullptr || r->kind != SWCU_ADDRESS_RESERVATION || !r->vmm) return nullptr;
  if (size == 0 || size > r->base + r->size - ptr) return nullptr;
  return r;
}

// The mappings that make up exactly [ptr, ptr + size), one after another without a hole; empty
// when the range is not such a run (cuMemUnmap, cuMemSetAccess).
std::vector<std::map<std::uintptr_t, VmmMapping>::iterator> whole_mappings(Allocation& r,
                                                                           std::uintptr_t ptr,
                                                                           std::size_t size) {
  std::vector<std::map<std::uintptr_t, VmmMapping>::iterator> out;
  auto& mappings = r.vmm->mappings;
  auto it = mappings.find(ptr);
  std::uintptr_t next = ptr;
  const std::uintptr_t end = ptr + size;
  while (it != mappings.end() && it->first == next && next < end) {
    out.push_back(it);
    next = it->first + it->second.size;
    ++it;
  }
  if (next != end) out.clear();
  return out;
}

// Gives the pages of a mapping the protection its access flags need: read-write when anyone
// may access it, else none (so that a stray host access faults as on a GPU). Read-only access
// keeps the pages writable: the driver refuses writes itself (copies, memsets, kernels), and a
// staged peer copy, which checks no access, must not crash the process.
void protect(std::uintptr_t base, const VmmMapping& m) noexcept {
  mprotect(reinterpret_cast<void*>(base), m.size,
           any_access(m) ? PROT_READ | PROT_WRITE : PROT_NONE);
}

// Runs the work every context has queued, as cuMemUnmap synchronizes ("\note_sync"): work
// enqueued before the unmap may still use the range.
void drain_all(State& s, Lock& lock) {
  std::vector<const void*> contexts;
  for (const swcu_handle_kind kind : {SWCU_CONTEXT, SWCU_PRIMARY_CONTEXT}) {
    const auto handles = s.registry(kind).handles_if([](const Object&) { return true; });
    contexts.insert(contexts.end(), handles.begin(), handles.end());
  }
  for (const void* handle : contexts) {  // each looked up again: the lock may have been released
    if (Context* const ctx = s.context(static_cast<CUcontext>(const_cast<void*>(handle)))) {
      drain_context(s, lock, *ctx);
    }
  }
}

// Reserves `size` bytes at a multiple of `align` (a power of two, at least a page), at `hint`
// when that range is free; nullptr when the system refuses.
void* reserve_range(std::size_t size, std::size_t align, std::uintptr_t hint) noexcept {
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (hint != 0 && hint % align == 0) {
    void* const p =
        mmap(reinterpret_cast<void*>(hint), size, PROT_NONE, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && reinterpret_cast<std::uintptr_t>(p) == hint) return p;
    if (p != MAP_FAILED) munmap(p, size);  // a kernel that took the flag as a hint
  }
  const std::size_t page = page_size();
  if (size > std::numeric_limits<std::size_t>::max() - (align - page)) return nullptr;
  const std::size_t total = size + (align - page);
  void* const p = mmap(nullptr, total, PROT_NONE, kFlags, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t base = (first + align - 1) / align * align;
  if (base != first) munmap(p, base - first);
  if (const std::uintptr_t tail = first + total - (base + size); tail != 0) {
    munmap(reinterpret_cast<void*>(base + size), tail);
  }
  return reinterpret_cast<void*>(base);
}

// Reserves again the pages of an unmapped range (they stay the reservation's).
void unmap_pages(std::uintptr_t base, std::size_t size) noexcept {
  mmap(reinterpret_cast<void*>(base), size, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

// The access a location has to a mapping: CUDA_SUCCESS with `flags`, or the code for a location
// cuMemGetAccess / cuMemSetAccess refuses.
CUresult location_slot(State& s, const CUmemLocation& loc, VmmMapping& m, int*& slot) {
  switch (raw(loc.type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (s.device(loc.id) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
      slot = &m.access[static_cast<std::size_t>(loc.id)];
      return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST:
      // Only memory on the host can be given to the host (stricter than a system with HMM).
      if (raw(m.allocation->prop.location.type) != CU_MEM_LOCATION_TYPE_HOST) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      slot = &m.host_access;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

namespace {

// Whether all of [address, address + bytes) of the reservation `r` is mapped, without holes, by
// mappings that each pass `accept`.
template <class Accept>
bool mapped_throughout(const Allocation& r, std::uintptr_t address, std::size_t bytes,
                       Accept accept) noexcept {
  if (!r.vmm) return false;
  const auto& mappings = r.vmm->mappings;
  auto it = mappings.upper_bound(address);
  if (it == mappings.begin()) return false;
  --it;
  const std::uintptr_t end = address + std::max<std::size_t>(bytes, 1);
  std::uintptr_t next = address;
  for (; it != mappings.end(); ++it) {
    if (it->first > next || it->first + it->second.size <= next || !accept(it->second)) {
      return false;
    }
    next = it->first + it->second.size;
    if (next >= end) return true;
  }
  return false;
}

}  // namespace

bool vmm_accessible(const Allocation& r, std::uintptr_t address, std::size_t bytes) noexcept {
  return mapped_throughout(r, address, bytes, any_access);
}

bool vmm_device_may(const Allocation& r, std::uintptr_t address, std::size_t bytes, int device,
                    bool write) noexcept {
  const auto d = static_cast<std::size_t>(device);
  return mapped_throughout(r, address, bytes, [d, write](const VmmMapping& m) {
    return (d < m.access.size() && allows(m.access[d], write)) || allows(m.host_access, write);
  });
}

const VmmMapping* vmm_mapping_at(const Allocation& r, std::uintptr_t address,
                                 std::uintptr_t& base) noexcept {
  if (!r.vmm) return nullptr;
  auto it = r.vmm->mappings.upper_bound(address);
  if (it == r.vmm->mappings.begin()) return nullptr;
  --it;
  if (address >= it->first + it->second.size) return nullptr;
  base = it->first;
  return &it->second;
}

std::vector<VmmDeviceRange> vmm_device_ranges(const Allocation& r, int device) {
  std::vector<VmmDeviceRange> out;
  if (!r.vmm) return out;
  const auto d = static_cast<std::size_t>(device);
  for (const auto& [base, m] : r.vmm->mappings) {
    if (d >= m.access.size() || m.access[d] == kNone) continue;
    const bool read_only = m.access[d] == kRead;
    if (!out.empty() && out.back().end == base && out.back().read_only == read_only) {
      out.back().end = base + m.size;
    } else {
      out.push_back({base, base + m.size, read_only});
    }
  }
  return out;
}

}  // namespace swcu

extern "C" {

using swcu::Allocation;
using swcu::call;
using swcu::State;
using swcu::Sym;

// "The size and address parameters must be a multiple of the host page size and the alignment
// must be a power of two or zero for default alignment." Flags: "Currently unused, must be
// zero". The default alignment is the recommended granularity, so that the range can be mapped.
CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  return call(Sym::cuMemAddressReserve, [=](State& s) -> CUresult {
    const std::size_t page = swcu::page_size();
    if (ptr == nullptr || size == 0 || size % page != 0 || addr % page != 0 || flags != 0 ||
        (alignment & (alignment - 1)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::size_t align =
        alignment == 0 ? swcu::kVmmGranularity : std::max<std::size_t>(alignment, page);
    void* const base = swcu::reserve_range(size, align, addr);
    if (base == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    auto r = std::make_unique<Allocation>(SWCU_ADDRESS_RESERVATION, Allocation::Memory::device);
    r->mapping = base;
    r->mapping_size = size;
    r->base = reinterpret_cast<std::uintptr_t>(base);
    r->size = size;
    r->buffer_id = s.next_buffer_id++;
    try {
      r->vmm = std::make_shared<swcu::VmmRanges>();
    } catch (...) {
      r->release();
      throw;
    }
    *ptr = static_cast<CUdeviceptr>(swcu::add_allocation(s, std::move(r))->base);
    return CUDA_SUCCESS;
  });
}

// "The size must match what was given to memAddressReserve and the ptr given must match what
// was returned from memAddressReserve." A range still mapped is refused (the reference does not
// say; unmap first).
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return call(Sym::cuMemAddressFree, [=](State& s) -> CUresult {
    Allocation* const r = swcu::find_allocation(s, ptr);
    if (r == nullptr || r->kind != SWCU_ADDRESS_RESERVATION || r->base != ptr || r->size != size ||
        !r->vmm->mappings.empty()) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::free_now(s, *r);
    return CUDA_SUCCESS;
  });
}

// "This range must be an address reservation previously reserved with cuMemAddressReserve, and
// offset + size must be less than the size of the memory allocation. Both ptr, size, and offset
// must be a multiple of the value given via cuMemGetAllocationGranularity with the
// CU_MEM_ALLOC_GRANULARITY_MINIMUM flag." "cuMemMap can only create mappings on VA range
// reservations that are not currently mapped." A new mapping has no access ("calling cuMemMap
// does not make the address accessible").
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  return call(Sym::cuMemMap, [=](State& s) -> CUresult {
    swcu::VmmAllocation* const v = swcu::find_vmm_allocation(s, handle);
    if (v == nullptr || flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    // "All devices must be added to the multicast team before a virtual address range can be
    // mapped to the multicast object. A call to cuMemMap will block until all devices have been
    // added": with one process there is nobody to add them, so this refuses instead.
    if (v->multicast && v->multicast->devices.size() < v->multicast->device_count) {
      return CUDA_ERROR_NOT_PERMITTED;
    }
    const std::size_t unit = swcu::minimum_granularity(v->prop.location);
    if (ptr % unit != 0 || size % unit != 0 || offset % unit != 0 || offset > v->size ||
        size > v->size - offset) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Allocation* const r = swcu::reservation_of(s, ptr, size);
    if (r == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto& mappings = r->vmm->mappings;
    const auto after = mappings.lower_bound(ptr + size);
    if (after != mappings.begin()) {
      const auto before = std::prev(after);
      if (before->first + before->second.size > ptr) return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::VmmMapping m;
    m.size = size;
    m.offset = offset;
    m.allocation = v;
    m.access.assign(s.devices.size(), swcu::kNone);
    const auto inserted = mappings.emplace(ptr, std::move(m));  // before the map: it may throw
    void* const p = mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED,
                         v->fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) {
      mappings.erase(inserted.first);
      swcu::unmap_pages(ptr, size);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ++v->mappings;
    return CUDA_SUCCESS;
  });
}

// "The range must be the entire contiguous address range that was mapped to. In other words,
// cuMemUnmap cannot unmap a sub-range of an address range mapped by cuMemCreate / cuMemMap."
// (Several whole mappings that follow each other are one range.) "Any backing memory
// allocations will be freed if there are no existing mappings and there are no unreleased
// memory handles." The range becomes a reservation again, without access.
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return call(Sym::cuMemUnmap, [=](State& s, swcu::Lock& lock) -> CUresult {
    if (swcu::reservation_of(s, ptr, size) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::drain_all(s, lock);
    Allocation* const r = swcu::reservation_of(s, ptr, size);  // host functions may have run
    if (r == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto run = swcu::whole_mappings(*r, ptr, size);
    if (run.empty()) return CUDA_ERROR_INVALID_VALUE;
    swcu::unmap_pages(ptr, size);
    for (const auto& it : run) {
      swcu::VmmAllocation* const allocation = it->second.allocation;
      r->vmm->mappings.erase(it);
      swcu::unmapped(s, *allocation);
    }
    return CUDA_SUCCESS;
  });
}

// "The range must be a fully mapped address range containing all allocations created by
// cuMemMap / cuMemCreate." Every descriptor is checked before any is applied. Read-only access
// (CU_MEM_ACCESS_FLAGS_PROT_READ) lets the device load: its kernels fault on a store or atomic
// there, and a copy or memset its stream runs into the range fails when it executes
// (CUDA_ERROR_ILLEGAL_ADDRESS, sticky, as for pool memory the device may only read).
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  return call(Sym::cuMemSetAccess, [=](State& s) -> CUresult {
    if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
    Allocation* const r = swcu::reservation_of(s, ptr, size);
    if (r == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto run = swcu::whole_mappings(*r, ptr, size);
    if (run.empty()) return CUDA_ERROR_INVALID_VALUE;
    for (int pass = 0; pass < 2; ++pass) {  // check everything, then apply
      for (std::size_t i = 0; i < count; ++i) {
        const int flags = swcu::raw(desc[i].flags);
        if (flags != swcu::kNone && flags != swcu::kRead && flags != swcu::kReadWrite) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        for (const auto& it : run) {
          int* slot = nullptr;
          if (const CUresult e = swcu::location_slot(s, desc[i].location, it->second, slot)) {
            return e;
          }
          if (pass == 1) *slot = flags;
        }
      }
    }
    for (const auto& it : run) swcu::protect(it->first, it->second);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  return call(Sym::cuMemGetAccess, [=](State& s) -> CUresult {
    if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Allocation* const r = swcu::reservation_of(s, ptr, 1);
    if (r == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto& mappings = r->vmm->mappings;
    auto it = mappings.upper_bound(ptr);
    if (it == mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
    --it;
    if (ptr - it->first >= it->second.size) return CUDA_ERROR_INVALID_VALUE;  // not mapped
    int* slot = nullptr;
    if (const CUresult e = swcu::location_slot(s, *location, it->second, slot)) return e;
    *flags = static_cast<unsigned long long>(*slot);
    return CUDA_SUCCESS;
  });
}

// "The handle is guaranteed to be the same handle value used to map the memory. If the address
// requested is not mapped, the function will fail. The returned handle must be released with
// corresponding number of calls to cuMemRelease." Any address of a mapping will do.
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  return call(Sym::cuMemRetainAllocationHandle, [=](State& s) -> CUresult {
    const auto ptr = reinterpret_cast<std::uintptr_t>(addr);
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Allocation* const r = swcu::reservation_of(s, ptr, 1);
    if (r == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto& mappings = r->vmm->mappings;
    auto it = mappings.upper_bound(ptr);
    if (it == mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
    --it;
    if (ptr - it->first >= it->second.size) return CUDA_ERROR_INVALID_VALUE;
    *handle = swcu::retain(*it->second.allocation);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
