// Allocations and registrations: device, pinned host, registered and managed memory.
#include "memory/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <span>

#include "core/config.hpp"
#include "memory/ipc.hpp"
#include "memory/vmm.hpp"

namespace swcu {
namespace {

constexpr unsigned int kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned int kRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
constexpr int kMaxPitch = std::numeric_limits<int>::max();  // CU_DEVICE_ATTRIBUTE_MAX_PITCH

// `value` rounded up to a multiple of `unit`; nullopt on overflow.
std::optional<std::size_t> round_up(std::size_t value, std::size_t unit) noexcept {
  if (value > std::numeric_limits<std::size_t>::max() - (unit - 1)) return std::nullopt;
  return (value + unit - 1) / unit * unit;
}

// Zeroed memory that costs nothing until touched; nullptr when the system refuses.
void* map_memory(std::size_t bytes, std::size_t& mapped) noexcept {
  const auto rounded = round_up(bytes, page_size());
  if (!rounded) return nullptr;
  void* const p = mmap(nullptr, *rounded, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  mapped = *rounded;
  return p;
}

swcu_handle_kind kind_of(Allocation::Memory memory) noexcept {
  switch (memory) {
    case Allocation::Memory::device:
    case Allocation::Memory::managed: return SWCU_DEVICE_ALLOCATION;
    case Allocation::Memory::host: return SWCU_HOST_ALLOCATION;
    case Allocation::Memory::registered: return SWCU_HOST_REGISTRATION;
  }
  return SWCU_DEVICE_ALLOCATION;
}

// A new allocation of `bytes` (> 0) of owned memory; nullptr when it cannot be mapped.
// `shareable`: memory other processes can map (cuMemAlloc's, for cuIpcGetMemHandle).
// `kind`: the handle kind it counts as (SWCU_DEVICE_ALLOCATION for every stream-ordered one).
std::unique_ptr<Allocation> new_allocation(State& s, Allocation::Memory memory,
                                           swcu_handle_kind kind, std::size_t bytes,
                                           bool shareable) {
  auto a = std::make_unique<Allocation>(kind, memory);
  a->mapping = shareable ? map_shareable_memory(bytes, a->mapping_size, a->fd)
                         : map_memory(bytes, a->mapping_size);
  if (a->mapping == nullptr) return nullptr;
  a->base = reinterpret_cast<std::uintptr_t>(a->mapping);
  a->size = bytes;
  a->buffer_id = s.next_buffer_id++;
  return a;
}

std::unique_ptr<Allocation> new_allocation(State& s, Allocation::Memory memory, std::size_t bytes,
                                           bool shareable = false) {
  return new_allocation(s, memory, kind_of(memory), bytes, shareable);
}

// Makes `a` live: in its registry and the address map.
Allocation* add(State& s, std::unique_ptr<Allocation> a) {
  Allocation* const raw = a.get();
  try {
    s.address_map.emplace(raw->base, raw);
    s.registry(raw->kind).add(std::move(a));
  } catch (...) {
    s.address_map.erase(raw->base);
    if (a) a->release();
    throw;
  }
  return raw;
}

// The bytes charged to a device for a cuMemAlloc of `bytes`; nullopt when it does not fit.
std::optional<std::size_t> charge(State& s, int device, std::size_t bytes) noexcept {
  const auto rounded = round_up(bytes, kAllocationGranularity);
  Device& dev = s.devices[static_cast<std::size_t>(device)];
  const unsigned long long capacity = config().device_memory;
  if (!rounded || *rounded > capacity - dev.memory_used) return std::nullopt;
  return rounded;
}

// cuMemAlloc and cuMemAllocPitch: `bytes` of device memory owned by `ctx`.
CUresult allocate_device(State& s, Context& ctx, std::size_t bytes, CUdeviceptr* out) {
  const auto charged = charge(s, ctx.device, bytes);
  if (!charged) return CUDA_ERROR_OUT_OF_MEMORY;  // nothing touched
  auto a = new_allocation(s, Allocation::Memory::device, bytes, true);
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  a->ctx = &ctx;
  a->device = ctx.device;
  a->charged = *charged;
  Allocation* const added = add(s, std::move(a));
  s.devices[static_cast<std::size_t>(ctx.device)].memory_used += added->charged;
  *out = static_cast<CUdeviceptr>(added->base);
  return CUDA_SUCCESS;
}

void release_reserved(State& s, PoolData& pool, unsigned long long keep) noexcept {
  const unsigned long long target = std::max(pool.used, keep);
  if (pool.reserved <= target) return;
  if (pool.charges_device()) {
    s.devices[static_cast<std::size_t>(pool.device)].memory_used -= pool.reserved - target;
  }
  pool.reserved = target;
}

// Frees an allocation (any kind): address map, capacity, pool, registry.
void free_allocation(State& s, Allocation& a, bool reclaimed) noexcept {
  s.address_map.erase(a.base);
  if (a.pool) {
    PoolData& pool = *a.pool;
    pool.used -= a.charged;
    if (pool.destroyed) release_reserved(s, pool, 0);
  } else {
    s.devices[static_cast<std::size_t>(a.device)].memory_used -= a.charged;
  }
  if (reclaimed) {
    s.reclaim(a.kind, &a);
  } else {
    s.destroy(a.kind, &a);
  }
}

bool overlaps_any(State& s, std::uintptr_t first, std::uintptr_t end) noexcept {
  auto it = s.address_map.lower_bound(end);  // the first range that starts at or after `end`
  if (it == s.address_map.begin()) return false;
  --it;
  return it->second->base + it->second->size > first;
}

}  // namespace

std::size_t page_size() noexcept {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

PoolData::~PoolData() {
  if (fd >= 0) close(fd);
}

void Allocation::release() noexcept {
  if (mapping != nullptr) munmap(mapping, mapping_size);
  if (mapping != nullptr && pool && pool->fd >= 0 && !pool->imported) {
    discard_pool_memory(*pool, pool_offset, mapping_size);
  }
  mapping = nullptr;
  if (fd >= 0) close(fd);
  fd = -1;
  pages.clear();
  pages.shrink_to_fit();
  pool.reset();
}

Allocation* find_allocation(State& s, std::uintptr_t address) noexcept {
  auto it = s.address_map.upper_bound(address);
  if (it == s.address_map.begin()) return nullptr;
  --it;
  Allocation* const a = it->second;
  return address - a->base < a->size ? a : nullptr;
}

Allocation* find_range(State& s, std::uintptr_t address, std::size_t bytes,
                       Access access) noexcept {
  Allocation* const a = find_allocation(s, address);
  if (a == nullptr || std::max<std::size_t>(bytes, 1) > a->base + a->size - address) {
    return nullptr;
  }
  // An address reservation: only where it is mapped and accessible (vmm.hpp).
  if (a->kind == SWCU_ADDRESS_RESERVATION && !vmm_accessible(*a, address, bytes)) return nullptr;
  switch (access) {
    case Access::now: return a->stage == Allocation::Stage::live ? a : nullptr;
    case Access::enqueue: return a->stage != Allocation::Stage::freeing ? a : nullptr;
    case Access::execute: return a->stage != Allocation::Stage::pending ? a : nullptr;
  }
  return nullptr;
}

void reclaim_memory(State& s, Context& ctx) noexcept {
  std::vector<Allocation*> owned;
  for (const auto& [base, a] : s.address_map) {
    if (a->ctx == &ctx) owned.push_back(a);
  }
  for (Allocation* a : owned) free_allocation(s, *a, true);
}

void give_default_access(PoolData& pool, std::size_t devices) {
  const bool managed = pool.alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED;
  pool.access.assign(devices,
                     managed ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE);
  if (pool.charges_device()) {
    pool.access[static_cast<std::size_t>(pool.device)] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  } else {
    pool.host_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
}

std::shared_ptr<PoolData> find_pool(State& s, const void* handle) noexcept {
  if (handle == nullptr) return nullptr;
  if (const auto* pool = s.find<MemoryPool>(SWCU_MEMORY_POOL, handle)) return pool->data;
  for (const auto& object : s.default_pools) {
    if (object.get() == handle) return static_cast<const MemoryPool&>(*object).data;
  }
  return nullptr;
}

std::shared_ptr<PoolData> default_pool(State& s, int device) {
  Device& dev = s.devices[static_cast<std::size_t>(device)];
  if (dev.default_pool == nullptr) {
    auto data = std::make_shared<PoolData>();
    data->device = device;
    data->location_id = device;
    data->is_default = true;
    data->access.assign(s.devices.size(), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    data->access[static_cast<std::size_t>(device)] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    auto pool = std::make_unique<MemoryPool>(data);
    data->handle = pool.get();
    s.default_pools.reserve(s.default_pools.size() + 1);
    dev.default_pool = pool.get();
    s.default_pools.push_back(std::move(pool));
  }
  return dev.default_pool->data;
}

std::shared_ptr<PoolData> default_pool_at(State& s, int alloc_type, int location_type,
                                          int location_id) {
  if (alloc_type == CU_MEM_ALLOCATION_TYPE_PINNED && location_type == CU_MEM_LOCATION_TYPE_DEVICE) {
    return default_pool(s, location_id);
  }
  for (const auto& object : s.default_pools) {
    const auto& data = static_cast<const MemoryPool&>(*object).data;
    if (data->alloc_type == alloc_type && data->location_type == location_type &&
        data->location_id == location_id) {
      return data;
    }
  }
  auto data = std::make_shared<PoolData>();
  data->is_default = true;
  data->alloc_type = alloc_type;
  data->location_type = location_type;
  data->location_id = location_id;
  const bool on_device = location_type == CU_MEM_LOCATION_TYPE_DEVICE;
  data->device = on_device ? location_id : 0;
  data->access.assign(s.devices.size(), CU_MEM_ACCESS_FLAGS_PROT_NONE);
  if (alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED) {  // managed memory: every processor
    data->access.assign(s.devices.size(), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    data->host_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  } else {  // pinned host memory: the host CPU by default
    data->host_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  auto pool = std::make_unique<MemoryPool>(data);
  data->handle = pool.get();
  s.default_pools.push_back(std::move(pool));
  return data;
}

int device_access(const Allocation& a, int device) noexcept {
  if (a.pool) {
    const auto index = static_cast<std::size_t>(device);
    return index < a.pool->access.size() ? a.pool->access[index] : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  }
  if (a.memory == Allocation::Memory::registered && (a.flags & CU_MEMHOSTREGISTER_READ_ONLY) != 0) {
    return CU_MEM_ACCESS_FLAGS_PROT_READ;
  }
  return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

bool device_may_access(State& s, int device, std::uintptr_t address, std::size_t bytes,
                       bool write) {
  const Allocation* const a = find_allocation(s, address);
  if (device < 0 || a == nullptr) return true;
  if (a->kind == SWCU_ADDRESS_RESERVATION) return vmm_device_may(*a, address, bytes, device, write);
  if (!a->pool || !a->pool->charges_device()) return true;
  const int flags = device_access(*a, device);
  return write ? flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
               : flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

std::shared_ptr<PoolData> current_pool(State& s, int device) {
  const Device& dev = s.devices[static_cast<std::size_t>(device)];
  return dev.current_pool != nullptr ? dev.current_pool->data : default_pool(s, device);
}

void release_pool_memory(State& s) noexcept {
  for (const auto& object : s.default_pools) {
    PoolData& pool = *static_cast<const MemoryPool&>(*object).data;
    release_reserved(s, pool, pool.release_threshold);
  }
  for (const void* h :
       s.registry(SWCU_MEMORY_POOL).handles_if([](const Object&) { return true; })) {
    PoolData& pool = *s.find<MemoryPool>(SWCU_MEMORY_POOL, h)->data;
    release_reserved(s, pool, pool.release_threshold);
  }
}

CUresult allocate_from_pool(State& s, Lock& lock, const std::shared_ptr<PoolData>& pool, Queue& q,
                            std::size_t bytes, CUdeviceptr* out) {
  const auto rounded = round_up(bytes, kAllocationGranularity);
  if (!rounded) return CUDA_ERROR_OUT_OF_MEMORY;
  if (pool->max_size != 0 && *rounded > pool->max_size - std::min(pool->max_size, pool->used)) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  // The pool reuses what it holds; it reserves more from the device only when it must (host
  // and managed memory are not charged to a device).
  Device& dev = s.devices[static_cast<std::size_t>(pool->device)];
  const unsigned long long needed = pool->used + *rounded;
  const unsigned long long growth = needed > pool->reserved ? needed - pool->reserved : 0;
  const unsigned long long charge = pool->charges_device() ? growth : 0;
  if (charge > config().device_memory - dev.memory_used) return CUDA_ERROR_OUT_OF_MEMORY;
  const Allocation::Memory memory = pool->alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED
                                        ? Allocation::Memory::managed
                                    : pool->host_pinned() ? Allocation::Memory::host
                                                          : Allocation::Memory::device;
  std::unique_ptr<Allocation> a;
  if (pool->fd >= 0) {  // a shareable pool: in its memfd, where an importer can map it
    a = std::make_unique<Allocation>(SWCU_DEVICE_ALLOCATION, memory);
    a->mapping = map_pool_memory(*pool, bytes, a->mapping_size, a->pool_offset);
    if (a->mapping == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    a->base = reinterpret_cast<std::uintptr_t>(a->mapping);
    a->size = bytes;
    a->buffer_id = s.next_buffer_id++;
  } else {
    a = new_allocation(s, memory, SWCU_DEVICE_ALLOCATION, bytes, false);
  }
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  a->stage = Allocation::Stage::pending;
  // Device memory is its pool's device's; host and managed memory the stream's device's.
  a->device = pool->charges_device() ? pool->device : q.device;
  if (memory == Allocation::Memory::managed) a->flags = CU_MEM_ATTACH_GLOBAL;
  a->pool = pool;
  a->charged = *rounded;
  const Allocation* const added = add(s, std::move(a));
  dev.memory_used += charge;
  pool->reserved += growth;
  pool->used = needed;
  pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
  pool->used_high = std::max(pool->used_high, pool->used);
  const std::uintptr_t base = added->base;
  const unsigned long long id = added->buffer_id;
  *out = static_cast<CUdeviceptr>(base);
  Op op;
  op.work = [base, id](State& state) {
    Allocation* const alloc = find_allocation(state, base);
    if (alloc != nullptr && alloc->buffer_id == id && alloc->stage == Allocation::Stage::pending) {
      alloc->stage = Allocation::Stage::live;
    }
    return CUDA_SUCCESS;
  };
  // An allocation whose operation never ran (an asynchronous fault, a broken or destroyed
  // context) never happened: it goes, so no allocation is left that no API could free.
  op.not_run = [base, id](State& state) {
    Allocation* const alloc = find_allocation(state, base);
    if (alloc != nullptr && alloc->buffer_id == id && alloc->stage != Allocation::Stage::live) {
      free_allocation(state, *alloc, false);  // pending, or already being freed
    }
  };
  enqueue(s, lock, q, std::move(op));
  return CUDA_SUCCESS;
}

Allocation* add_allocation(State& s, std::unique_ptr<Allocation> a) { return add(s, std::move(a)); }

void free_now(State& s, Allocation& a) noexcept { free_allocation(s, a, false); }

void trim_pool(State& s, PoolData& pool, unsigned long long keep) noexcept {
  release_reserved(s, pool, keep);
}

}  // namespace swcu

extern "C" {

using swcu::Allocation;
using swcu::call;
using swcu::Context;
using swcu::State;
using swcu::Sym;

CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  return call(Sym::cuMemGetInfo_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const unsigned long long capacity = swcu::config().device_memory;
    *total = capacity;
    *free = capacity - s.devices[static_cast<std::size_t>(ctx->device)].memory_used;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return call(Sym::cuMemAlloc_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    return swcu::allocate_device(s, *ctx, bytesize, dptr);
  });
}

CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes) {
  return call(Sym::cuMemAllocPitch_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (dptr == nullptr || pPitch == nullptr || WidthInBytes == 0 || Height == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto pitch = swcu::round_up(WidthInBytes, swcu::kPitchAlignment);
    if (!pitch || *pitch > static_cast<std::size_t>(swcu::kMaxPitch)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (Height > std::numeric_limits<std::size_t>::max() / *pitch) {
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (const CUresult r = swcu::allocate_device(s, *ctx, *pitch * Height, dptr)) return r;
    *pPitch = *pitch;
    return CUDA_SUCCESS;
  });
}

// Device and managed memory, at its base address. Stream-ordered allocations are freed at once
// (no implicit synchronization, as documented); others after the owning context's work is done.
// Like the real driver, this finds the allocation by its address and needs no current context.
CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return call(Sym::cuMemFree_v2, [=](State& s, swcu::Lock& lock) -> CUresult {
    Allocation* a = swcu::find_allocation(s, dptr);
    if (a == nullptr || a->base != dptr || a->kind != SWCU_DEVICE_ALLOCATION ||
        a->stage == Allocation::Stage::freeing) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (a->ctx != nullptr && a->ctx->sticky_error != CUDA_SUCCESS) return a->ctx->sticky_error;
    if (a->ctx != nullptr) {
      swcu::drain_context(s, lock, *a->ctx);
      a = swcu::find_allocation(s, dptr);  // host functions ran without the lock
      if (a == nullptr || a->base != dptr) return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::free_now(s, *a);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  return call(Sym::cuMemGetAddressRange_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const Allocation* const a = swcu::find_allocation(s, dptr);
    if (a == nullptr) return CUDA_ERROR_NOT_FOUND;
    if (pbase != nullptr) *pbase = static_cast<CUdeviceptr>(a->base);
    if (psize != nullptr) *psize = a->size;
    return CUDA_SUCCESS;
  });
}

// Page-locked host memory: its device address is its host address (unified addressing), and
// every pinned allocation is accessible from every context.
CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return call(Sym::cuMemHostAlloc, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (pp == nullptr || bytesize == 0 || (Flags & ~swcu::kHostAllocFlags) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto a = swcu::new_allocation(s, Allocation::Memory::host, bytesize);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    a->ctx = ctx;
    a->device = ctx->device;
    a->flags = Flags;
    *pp = reinterpret_cast<void*>(swcu::add(s, std::move(a))->base);
    return CUDA_SUCCESS;
  });
}

// As cuMemHostAlloc; with unified addressing such memory is portable and mapped.
CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return call(Sym::cuMemAllocHost_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (pp == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    auto a = swcu::new_allocation(s, Allocation::Memory::host, bytesize);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    a->ctx = ctx;
    a->device = ctx->device;
    a->flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
    *pp = reinterpret_cast<void*>(swcu::add(s, std::move(a))->base);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemFreeHost(void* p) {
  return call(Sym::cuMemFreeHost, [=](State& s, swcu::Lock& lock) -> CUresult {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    Allocation* a = swcu::find_allocation(s, address);
    if (a == nullptr || a->base != address || a->memory != Allocation::Memory::host || a->pool) {
      return CUDA_ERROR_INVALID_VALUE;  // host pool memory is freed as stream-ordered memory
    }
    if (a->ctx->sticky_error != CUDA_SUCCESS) return a->ctx->sticky_error;
    swcu::drain_context(s, lock, *a->ctx);  // work in flight may still use it
    a = swcu::find_allocation(s, address);
    if (a == nullptr || a->base != address) return CUDA_ERROR_INVALID_VALUE;
    swcu::free_now(s, *a);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return call(Sym::cuMemHostGetDevicePointer_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (pdptr == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const Allocation* const a = swcu::find_allocation(s, address);
    // Only mapped memory has a device pointer (CU_MEMHOSTALLOC_DEVICEMAP,
    // CU_MEMHOSTREGISTER_DEVICEMAP: the same bit).
    if (a == nullptr ||
        (a->memory != Allocation::Memory::host && a->memory != Allocation::Memory::registered) ||
        (a->flags & CU_MEMHOSTALLOC_DEVICEMAP) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *pdptr = static_cast<CUdeviceptr>(address);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  return call(Sym::cuMemHostGetFlags, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const Allocation* const a = swcu::find_allocation(s, reinterpret_cast<std::uintptr_t>(p));
    if (pFlags == nullptr || a == nullptr || a->memory != Allocation::Memory::host || a->pool) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *pFlags = a->flags;
    return CUDA_SUCCESS;
  });
}

// Registrations are tracked by page, as the driver pins whole pages: two registrations that
// share a page overlap.
CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return call(Sym::cuMemHostRegister_v2, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (p == nullptr || bytesize == 0 || (Flags & ~swcu::kRegisterFlags) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if ((Flags & CU_MEMHOSTREGISTER_IOMEMORY) != 0) return CUDA_ERROR_NOT_SUPPORTED;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if (bytesize > std::numeric_limits<std::uintptr_t>::max() - address) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::size_t page = swcu::page_size();
    const std::uintptr_t first = address / page * page;
    const auto end = swcu::round_up(address + bytesize, page);
    if (!end) return CUDA_ERROR_INVALID_VALUE;
    if (const Allocation* other = swcu::find_allocation(s, address);
        other != nullptr && other->memory != Allocation::Memory::host &&
        other->memory != Allocation::Memory::registered) {
      return CUDA_ERROR_INVALID_VALUE;  // device memory is not host memory to pin
    }
    if (swcu::overlaps_any(s, first, *end)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    auto a = std::make_unique<Allocation>(SWCU_HOST_REGISTRATION, Allocation::Memory::registered);
    a->base = address;
    a->size = bytesize;
    a->ctx = ctx;
    a->device = ctx->device;
    a->flags = Flags;
    a->buffer_id = s.next_buffer_id++;
    swcu::add(s, std::move(a));
    return CUDA_SUCCESS;
  });
}

CUresult cuMemHostUnregister(void* p) {
  return call(Sym::cuMemHostUnregister, [=](State& s, swcu::Lock& lock) -> CUresult {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    Allocation* a = swcu::find_allocation(s, address);
    if (a == nullptr || a->base != address || a->memory != Allocation::Memory::registered) {
      return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    if (a->ctx->sticky_error != CUDA_SUCCESS) return a->ctx->sticky_error;
    swcu::drain_context(s, lock, *a->ctx);
    a = swcu::find_allocation(s, address);
    if (a == nullptr || a->base != address) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    swcu::free_now(s, *a);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  return call(Sym::cuMemAllocManaged, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (dptr == nullptr || bytesize == 0 ||
        (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto a = swcu::new_allocation(s, Allocation::Memory::managed, bytesize);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    a->ctx = ctx;
    a->device = ctx->device;
    a->flags = flags;
    *dptr = static_cast<CUdeviceptr>(swcu::add(s, std::move(a))->base);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
