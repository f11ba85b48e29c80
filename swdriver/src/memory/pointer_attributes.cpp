// Pointer attributes: cuPointerGetAttribute, cuPointerGetAttributes, cuPointerSetAttribute.
#include <algorithm>
#include <cstring>
#include <optional>
#include <span>

#include "memory/memory.hpp"
#include "memory/vmm.hpp"
#include "memory/vmm_allocation.hpp"

namespace swcu {
namespace {

// ---- pointer attributes ----

template <class T>
void put(void* data, const T& value) {
  std::memcpy(data, &value, sizeof value);
}

// cuMemAlloc and cuMemAllocPitch memory (not a pool's, an IPC mapping or a VMM range).
bool plain_device_memory(const Allocation& a) {
  return a.kind == SWCU_DEVICE_ALLOCATION && a.memory == Allocation::Memory::device && !a.pool;
}

// CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS of `a` from the device of `ctx` (the current context):
// pool memory as the pool allows it (cuMemPoolSetAccess); device memory of another context as
// peer access from `ctx` allows it (cuCtxEnablePeerAccess); host, managed and own memory
// read-write (a read-only registration: read); a reserved range as cuMemSetAccess set the
// mapping at `ptr`.
int access_flags(const State& s, const Allocation& a, std::uintptr_t ptr, const Context& ctx) {
  int flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;  // CUmemAccess_flags
  if (a.kind == SWCU_ADDRESS_RESERVATION) {
    std::uintptr_t base = 0;
    const VmmMapping* const m = vmm_mapping_at(a, ptr, base);
    const auto device = static_cast<std::size_t>(ctx.device);
    if (m != nullptr && device < m->access.size()) flags = m->access[device];
  } else if (a.pool || a.memory != Allocation::Memory::device || a.ctx == nullptr ||
             a.ctx == &ctx || a.device == ctx.device ||
             s.peer_access.contains({ctx.id, a.ctx->id})) {
    flags = device_access(a, ctx.device);  // not another context's memory without peer access
  }
  switch (flags) {
    case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
    case CU_MEM_ACCESS_FLAGS_PROT_READ: return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ;
    default: return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
  }
}

// Writes one attribute of `a` (nullptr: memory the driver does not know); `ctx` is the current
// context (nullptr: none). `strict`: the cuPointerGetAttribute rules (errors for what does not
// apply); else cuPointerGetAttributes' (defaults instead of errors).
CUresult pointer_attribute(const State& s, int attribute, void* data, const Allocation* a,
                           std::uintptr_t ptr, const Context* ctx, bool strict) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const bool known = a != nullptr;
  if (!known && strict) return CUDA_ERROR_INVALID_VALUE;
  using M = Allocation::Memory;
  // In a reserved range, the cuMemMap mapping that holds `ptr` and its physical allocation.
  const bool reserved = known && a->kind == SWCU_ADDRESS_RESERVATION;
  std::uintptr_t mapping_base = 0;
  const VmmMapping* const mapping = reserved ? vmm_mapping_at(*a, ptr, mapping_base) : nullptr;
  const VmmAllocation* const physical = mapping != nullptr ? mapping->allocation : nullptr;
  const bool host_memory = known && (a->memory == M::host || a->memory == M::registered);
  // Host memory has a device address when it is mapped (DEVICEMAP); host pool memory always; a
  // reserved range where cuMemMap mapped an allocation.
  const bool mapped =
      known && (a->memory != M::host || a->pool || (a->flags & CU_MEMHOSTALLOC_DEVICEMAP) != 0) &&
      (a->memory != M::registered || (a->flags & CU_MEMHOSTREGISTER_DEVICEMAP) != 0) &&
      (!reserved || mapping != nullptr);
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      // Stream-ordered allocations belong to no context (cuCtxDestroy does not free them).
      put(data, known && a->ctx != nullptr ? a->ctx->handle() : CUcontext{});
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: {
      unsigned type = 0;
      if (known) {
        type = host_memory ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        // Managed memory reports where it lives: the host after a prefetch there.
        if (a->memory == M::managed && !a->pages.empty()) {
          const auto& p = a->pages[(ptr - a->base) / page_size()];
          if (p.prefetch_type == CU_MEM_LOCATION_TYPE_HOST ||
              p.prefetch_type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
            type = CU_MEMORYTYPE_HOST;
          }
        }
      }
      put(data, type);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {
      if (strict && !mapped) return CUDA_ERROR_INVALID_VALUE;
      put(data, static_cast<CUdeviceptr>(mapped ? ptr : 0));
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: {
      const bool host_visible = known && a->memory != M::device;
      if (strict && !host_visible) return CUDA_ERROR_INVALID_VALUE;
      put(data, host_visible ? reinterpret_cast<void*>(ptr) : nullptr);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
      // The nv-p2p.h kernel interface (GPUDirect RDMA) does not exist here, and
      // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED says so; "ptr must be a pointer to memory
      // obtained from cuMemAlloc()": other memory is an invalid value.
      if (!strict) return CUDA_ERROR_INVALID_VALUE;  // not in cuPointerGetAttributes' list
      return plain_device_memory(*a) ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      put(data, static_cast<unsigned>(known && a->sync_memops ? 1 : 0));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      put(data, known ? a->buffer_id : 0ULL);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      put(data, known && a->memory == M::managed ? 1 : 0);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
      int ordinal = known ? a->device : static_cast<int>(CU_DEVICE_INVALID);
      // Mapped device memory is its physical allocation's device's.
      if (physical != nullptr && raw(physical->prop.location.type) == CU_MEM_LOCATION_TYPE_DEVICE) {
        ordinal = physical->prop.location.id;
      }
      put(data, ordinal);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      put(data, static_cast<CUdeviceptr>(known ? a->base : 0));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      put(data, known ? a->size : std::size_t{0});
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      // "in a valid address range that is mapped to a backing allocation": in a reserved range,
      // only where cuMemMap mapped one.
      put(data, known && (!reserved || mapping != nullptr) ? 1 : 0);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      // cuIpcGetMemHandle takes cuMemAlloc and cuMemAllocPitch memory (ipc.cpp).
      put(data, known && plain_device_memory(*a) ? 1 : 0);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: {
      // "the allowed handle types for an allocation that may be passed to
      // cuMemExportToShareableHandle": a mapping's cuMemCreate requestedHandleTypes; a pool's
      // handle types (cuMemPoolExportToShareableHandle); none for other memory.
      unsigned long long types = known && a->pool ? a->pool->handle_types : 0;
      if (physical != nullptr) {
        types = static_cast<unsigned>(raw(physical->prop.requestedHandleTypes));
      }
      put(data, types);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      put(data, 0);  // no GPUDirect RDMA (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED is 0)
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      // "the access flags the device associated with the current context has": no current
      // context is an error alone, no access among several.
      if (strict && ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
      put(data,
          static_cast<unsigned>(known && ctx != nullptr ? access_flags(s, *a, ptr, *ctx)
                                                        : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      put(data, known && a->pool
                    ? reinterpret_cast<CUmemoryPool>(const_cast<void*>(a->pool->handle))
                    : CUmemoryPool{});
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: {
      // A reserved range: the cuMemMap mapping that holds the pointer. Any other allocation is
      // one mapping of its own.
      std::uintptr_t base = known ? a->base : 0;
      std::size_t size = known ? a->size : 0;
      if (reserved) {
        base = mapping != nullptr ? mapping_base : 0;
        size = mapping != nullptr ? mapping->size : 0;
      }
      if (attribute == CU_POINTER_ATTRIBUTE_MAPPING_SIZE) {
        put(data, size);
      } else {
        put(data, reinterpret_cast<void*>(base));
      }
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      // "A process-wide unique id corresponding to the physical allocation the pointer belongs
      // to": in a reserved range the cuMemCreate allocation mapped there (every mapping of it,
      // and every handle of it in this process, gives the same id; 0 where nothing is mapped);
      // any other allocation is its own physical allocation.
      put(data, physical != nullptr  ? physical->block_id
                : known && !reserved ? a->buffer_id
                                     : 0ULL);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put(data, 0); return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::Allocation;
using swcu::call;
using swcu::Context;
using swcu::State;
using swcu::Sym;

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  const int attr = swcu::raw(attribute);
  return call(Sym::cuPointerGetAttribute, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (attr == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
        attr == CU_POINTER_ATTRIBUTE_ACCESS_FLAGS) {  // "in the current context"
      if (const CUresult r = swcu::current_context(s, ctx)) return r;
    }
    const Allocation* const a = swcu::find_allocation(s, ptr);
    return swcu::pointer_attribute(s, attr, data, a, ptr, ctx, true);
  });
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes,
                                void** data, CUdeviceptr ptr) {
  return call(Sym::cuPointerGetAttributes, [=](State& s) -> CUresult {
    if (numAttributes == 0 || attributes == nullptr || data == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Context* ctx = nullptr;  // ACCESS_FLAGS: none without a current context
    if (swcu::current_context(s, ctx) != CUDA_SUCCESS) ctx = nullptr;
    const Allocation* const a = swcu::find_allocation(s, ptr);
    for (unsigned i = 0; i < numAttributes; ++i) {
      if (const CUresult r =
              swcu::pointer_attribute(s, swcu::raw(attributes[i]), data[i], a, ptr, ctx, false)) {
        return r;
      }
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuPointerSetAttribute(const void* value, CUpointer_attribute attribute, CUdeviceptr ptr) {
  const int attr = swcu::raw(attribute);
  return call(Sym::cuPointerSetAttribute, [=](State& s) -> CUresult {
    Allocation* const a = swcu::find_allocation(s, ptr);
    if (value == nullptr || a == nullptr || attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned flag = 0;
    std::memcpy(&flag, value, sizeof flag);
    a->sync_memops = flag != 0;  // every synchronous operation synchronizes here anyway
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
