// Multicast objects: cuMulticastCreate, cuMulticastAddDevice, cuMulticastBindMem,
// cuMulticastBindAddr, cuMulticastUnbind, cuMulticastGetGranularity, and the consistency pass
// that broadcasts stores through a multicast range (multicast.hpp).
#include "memory/multicast.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "memory/memory.hpp"
#include "memory/vmm.hpp"
#include "memory/vmm_allocation.hpp"

namespace swcu {
namespace {

constexpr std::size_t kChunk = 4096;  // the unit the consistency pass compares first

// "This size must be a multiple of the value returned by cuMulticastGetGranularity with the
// flag CU_MULTICAST_GRANULARITY_MINIMUM": 2 MiB, the granularity of device memory.
constexpr std::size_t kMulticastGranularity = kVmmGranularity;

CUresult check_properties(State& s, const CUmulticastObjectProp& prop) {
  if (prop.numDevices == 0 || prop.numDevices > s.devices.size() || prop.flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto types = static_cast<unsigned>(prop.handleTypes);
  if ((types & CU_MEM_HANDLE_TYPE_FABRIC) != 0) return CUDA_ERROR_NOT_SUPPORTED;
  if ((types & ~static_cast<unsigned>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

VmmMulticast* multicast_of(State& s, CUmemGenericAllocationHandle handle, VmmAllocation*& v) {
  v = find_vmm_allocation(s, handle);
  return v != nullptr ? v->multicast.get() : nullptr;
}

// Whether the binding `b` is the first (the primary) that covers `offset`.
bool primary_at(const VmmMulticast& m, const VmmMulticastBinding& b, std::size_t offset) {
  for (const VmmMulticastBinding& other : m.bindings) {
    if (&other == &b) return true;
    if (offset >= other.offset && offset < other.offset + other.size) return false;
  }
  return false;
}

void sync_one(VmmMulticast& m) noexcept {
  const std::size_t size = m.shadow.size();
  std::byte* const shadow = m.shadow.data();
  // Stores through the multicast range: to every binding that covers them.
  for (std::size_t at = 0; at < size; at += kChunk) {
    const std::size_t n = std::min(kChunk, size - at);
    if (std::memcmp(m.view + at, shadow + at, n) == 0) continue;
    for (std::size_t i = at; i < at + n; ++i) {
      if (m.view[i] == shadow[i]) continue;
      shadow[i] = m.view[i];
      for (VmmMulticastBinding& b : m.bindings) {
        if (i >= b.offset && i < b.offset + b.size) b.bytes[i - b.offset] = m.view[i];
      }
    }
  }
  // Stores to a primary binding's memory directly: loads through the range return them.
  for (VmmMulticastBinding& b : m.bindings) {
    for (std::size_t at = 0; at < b.size; at += kChunk) {
      const std::size_t n = std::min(kChunk, b.size - at);
      if (std::memcmp(b.bytes + at, shadow + b.offset + at, n) == 0) continue;
      if (!primary_at(m, b, b.offset + at)) continue;
      std::memcpy(shadow + b.offset + at, b.bytes + at, n);
      std::memcpy(m.view + b.offset + at, b.bytes + at, n);
    }
  }
}

// Loads through [offset, offset + size) return the primary binding's bytes again (after the
// primary went); offsets nothing covers keep their last value.
void refresh(VmmMulticast& m, std::size_t offset, std::size_t size) noexcept {
  for (std::size_t at = offset; at < offset + size; at += kChunk) {
    for (const VmmMulticastBinding& b : m.bindings) {
      if (at < b.offset || at >= b.offset + b.size) continue;
      const std::size_t n = std::min({kChunk, offset + size - at, b.offset + b.size - at});
      std::memcpy(m.view + at, b.bytes + (at - b.offset), n);
      std::memcpy(m.shadow.data() + at, b.bytes + (at - b.offset), n);
      break;
    }
  }
}

// Binds `size` bytes of `mem` from `mem_offset` at `mc_offset` of the object `v`.
CUresult bind(State& s, VmmAllocation& v, std::size_t mc_offset, VmmAllocation& mem,
              std::size_t mem_offset, std::size_t size) {
  VmmMulticast& m = *v.multicast;
  if (size == 0 || mc_offset % kMulticastGranularity != 0 || size % kMulticastGranularity != 0 ||
      mem_offset % kMulticastGranularity != 0 || mc_offset > v.size || size > v.size - mc_offset ||
      mem_offset > mem.size || size > mem.size - mem_offset || mem.multicast) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // "Any calls to cuMulticastBindMem or cuMulticastBindAddr will block until all devices have
  // been added": refused instead (nobody else could add them).
  if (m.devices.size() < m.device_count) return CUDA_ERROR_NOT_PERMITTED;
  // "The memory allocation must have been created on one of the devices that was added".
  const int device = mem.prop.location.id;
  if (raw(mem.prop.location.type) != CU_MEM_LOCATION_TYPE_DEVICE ||
      std::find(m.devices.begin(), m.devices.end(), device) == m.devices.end()) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  // "Externally shareable as well as imported multicast objects can be bound only to
  // externally shareable memory."
  if (raw(v.prop.requestedHandleTypes) != 0 && raw(mem.prop.requestedHandleTypes) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (const VmmMulticastBinding& b : m.bindings) {  // a device binds an offset once
    if (b.device == device && mc_offset < b.offset + b.size && b.offset < mc_offset + size) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  multicast_sync(s);  // earlier stores are where they belong before the new memory joins
  void* const p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, mem.fd,
                       static_cast<off_t>(mem_offset));
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  VmmMulticastBinding b{device, mc_offset, size, &mem, static_cast<std::byte*>(p)};
  try {
    m.bindings.push_back(b);
  } catch (...) {
    munmap(p, size);
    throw;
  }
  ++mem.mappings;
  // The first memory bound at an offset is what loads through the range return from now on.
  for (std::size_t at = 0; at < size; at += kChunk) {
    if (primary_at(m, m.bindings.back(), mc_offset + at)) {
      const std::size_t n = std::min(kChunk, size - at);
      std::memcpy(m.view + mc_offset + at, b.bytes + at, n);
      std::memcpy(m.shadow.data() + mc_offset + at, b.bytes + at, n);
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace

void multicast_sync(State& s) noexcept {
  const auto handles = s.registry(SWCU_VMM_ALLOCATION).handles_if([](const Object& o) {
    return static_cast<const VmmAllocation&>(o).multicast != nullptr;
  });
  for (const void* h : handles) {
    auto* const v = s.find<VmmAllocation>(SWCU_VMM_ALLOCATION, h);
    if (v != nullptr && !v->multicast->bindings.empty()) sync_one(*v->multicast);
  }
}

void release_multicast(State& s, VmmAllocation& v) noexcept {
  VmmMulticast& m = *v.multicast;
  std::vector<VmmMulticastBinding> bindings;
  bindings.swap(m.bindings);
  for (VmmMulticastBinding& b : bindings) {
    munmap(b.bytes, b.size);
    unmapped(s, *b.memory);
  }
  if (m.view != nullptr) munmap(m.view, v.size);
  m.view = nullptr;
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::State;
using swcu::Sym;
using swcu::VmmAllocation;
using swcu::VmmMulticast;

// Minimum and recommended: 2 MiB (a GPU recommends more; any multiple of the minimum works).
CUresult cuMulticastGetGranularity(size_t* granularity, const CUmulticastObjectProp* prop,
                                   CUmulticastGranularity_flags option) {
  const int which = swcu::raw(option);
  return call(Sym::cuMulticastGetGranularity, [=](State& s) -> CUresult {
    if (granularity == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (which != CU_MULTICAST_GRANULARITY_MINIMUM &&
        which != CU_MULTICAST_GRANULARITY_RECOMMENDED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = swcu::check_properties(s, *prop)) return r;
    *granularity = swcu::kMulticastGranularity;
    return CUDA_SUCCESS;
  });
}

// "The number of participating devices is specified by CUmulticastObjectProp::numDevices."
// "The total amount of memory that can be bound per device is specified by
// CUmulticastObjectProp::size. This size must be a multiple of the value returned by
// cuMulticastGetGranularity with the flag CU_MULTICAST_GRANULARITY_MINIMUM." Released with
// cuMemRelease.
CUresult cuMulticastCreate(CUmemGenericAllocationHandle* mcHandle,
                           const CUmulticastObjectProp* prop) {
  return call(Sym::cuMulticastCreate, [=](State& s) -> CUresult {
    if (mcHandle == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_properties(s, *prop)) return r;
    if (prop->size == 0 || prop->size % swcu::kMulticastGranularity != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto v = std::make_unique<VmmAllocation>();
    auto m = std::make_shared<VmmMulticast>();
    m->device_count = prop->numDevices;
    m->shadow.resize(prop->size);
    v->fd = memfd_create("swcuda-multicast", MFD_CLOEXEC);
    if (v->fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(v->fd, static_cast<off_t>(prop->size)) != 0) {
      v->release();
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    void* const view = mmap(nullptr, prop->size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
    if (view == MAP_FAILED) {
      v->release();
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->view = static_cast<std::byte*>(view);
    v->size = prop->size;
    v->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    v->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    v->prop.location.id = 0;
    v->prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(prop->handleTypes);
    v->block_id = s.next_buffer_id++;
    v->multicast = std::move(m);
    VmmAllocation* const raw_v = v.get();
    try {
      s.registry(SWCU_VMM_ALLOCATION).add(std::move(v));
    } catch (...) {
      munmap(raw_v->multicast->view, prop->size);
      if (v) v->release();
      throw;
    }
    s.after_device_work = &swcu::multicast_sync;
    *mcHandle = static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<std::uintptr_t>(raw_v));
    return CUDA_SUCCESS;
  });
}

// "The association of the device to the multicast object is permanent during the life time of
// the multicast object." A device added twice, or one more than numDevices, is refused.
CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev) {
  return call(Sym::cuMulticastAddDevice, [=](State& s) -> CUresult {
    VmmAllocation* v = nullptr;
    VmmMulticast* const m = swcu::multicast_of(s, mcHandle, v);
    if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (m->devices.size() >= m->device_count ||
        std::find(m->devices.begin(), m->devices.end(), dev) != m->devices.end()) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    m->devices.push_back(dev);
    return CUDA_SUCCESS;
  });
}

CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                            CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
                            unsigned long long flags) {
  return call(Sym::cuMulticastBindMem, [=](State& s) -> CUresult {
    VmmAllocation* v = nullptr;
    VmmAllocation* const mem = swcu::find_vmm_allocation(s, memHandle);
    if (swcu::multicast_of(s, mcHandle, v) == nullptr || mem == nullptr || flags != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return swcu::bind(s, *v, mcOffset, *mem, memOffset, size);
  });
}

// "Binds a memory allocation specified by its mapped address memptr": the memory mapped at
// [memptr, memptr + size), which must be one mapping of cuMemCreate memory.
CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                             CUdeviceptr memptr, size_t size, unsigned long long flags) {
  return call(Sym::cuMulticastBindAddr, [=](State& s) -> CUresult {
    VmmAllocation* v = nullptr;
    if (swcu::multicast_of(s, mcHandle, v) == nullptr || flags != 0 ||
        memptr % swcu::kMulticastGranularity != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const swcu::Allocation* const r = swcu::find_allocation(s, memptr);
    std::uintptr_t base = 0;
    const swcu::VmmMapping* const mapping =
        r == nullptr ? nullptr : swcu::vmm_mapping_at(*r, memptr, base);
    if (mapping == nullptr || size > mapping->size - (memptr - base)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return swcu::bind(s, *v, mcOffset, *mapping->allocation, mapping->offset + (memptr - base),
                      size);
  });
}

// "The mcOffset and the size must match the corresponding values specified during the bind
// call. Any other values may result in undefined behavior": refused here.
CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset,
                           size_t size) {
  return call(Sym::cuMulticastUnbind, [=](State& s) -> CUresult {
    VmmAllocation* v = nullptr;
    VmmMulticast* const m = swcu::multicast_of(s, mcHandle, v);
    if (m == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    const auto it = std::find_if(m->bindings.begin(), m->bindings.end(), [&](const auto& b) {
      return b.device == dev && b.offset == mcOffset && b.size == size;
    });
    if (it == m->bindings.end()) return CUDA_ERROR_INVALID_VALUE;
    swcu::multicast_sync(s);  // stores made before the unbind reach the memory
    const swcu::VmmMulticastBinding b = *it;
    m->bindings.erase(it);
    munmap(b.bytes, b.size);
    swcu::unmapped(s, *b.memory);
    swcu::refresh(*m, b.offset, b.size);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
