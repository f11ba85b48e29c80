// Memory pools and the stream-ordered allocator.
//
// A pool accounts `used` (its live allocations) and `reserved` (what it holds from the device:
// charged to the device's capacity). An allocation reserves more only when used would exceed
// reserved; freed memory stays reserved until a stream, event or context synchronize releases
// what exceeds the release threshold (default 0), or cuMemPoolTrimTo. The memory of each
// allocation is its own mapping: reuse is accounted, not simulated.
#include <cstring>

#include "core/config.hpp"
#include "graph/capture.hpp"
#include "memory/ipc.hpp"
#include "memory/memory.hpp"

namespace swcu {
namespace {

constexpr unsigned int kKnownHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                           CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT |
                                           CU_MEM_HANDLE_TYPE_FABRIC;

CUresult check_props(State& s, const CUmemPoolProps& props) {
  if (raw(props.allocType) != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  switch (raw(props.location.type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (s.device(props.location.id) == nullptr) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return CUDA_ERROR_NOT_SUPPORTED;  // device pools only
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  const auto handles = static_cast<unsigned int>(raw(props.handleTypes));
  if ((handles & ~kKnownHandleTypes) != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((handles & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // not on Linux
  }
  if ((handles & CU_MEM_HANDLE_TYPE_FABRIC) != 0) return CUDA_ERROR_NOT_SUPPORTED;
  if (props.win32SecurityAttributes != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (props.usage == CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS) return CUDA_ERROR_NOT_SUPPORTED;
  if (props.usage != 0) return CUDA_ERROR_INVALID_VALUE;
  for (const unsigned char b : props.reserved) {
    if (b != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

std::shared_ptr<PoolData> pool_of(State& s, CUmemoryPool handle) { return find_pool(s, handle); }

CUresult get_attribute(const PoolData& pool, int attribute, void* value) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto put64 = [value](unsigned long long v) {
    const cuuint64_t out = v;
    std::memcpy(value, &out, sizeof out);
    return CUDA_SUCCESS;
  };
  const auto put_int = [value](int v) {
    std::memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
  };
  switch (attribute) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      return put_int(pool.reuse_follow_event_dependencies);
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: return put_int(pool.reuse_allow_opportunistic);
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      return put_int(pool.reuse_allow_internal_dependencies);
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: return put64(pool.release_threshold);
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: return put64(pool.reserved);
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: return put64(pool.reserved_high);
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: return put64(pool.used);
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: return put64(pool.used_high);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult set_attribute(PoolData& pool, int attribute, const void* value) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuuint64_t v64 = 0;
  int v = 0;
  switch (attribute) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      std::memcpy(&v, value, sizeof v);
      *(attribute == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
            ? &pool.reuse_follow_event_dependencies
        : attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC
            ? &pool.reuse_allow_opportunistic
            : &pool.reuse_allow_internal_dependencies) = v != 0 ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      std::memcpy(&v64, value, sizeof v64);
      pool.release_threshold = v64;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:  // only 0: reset to the current value
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      std::memcpy(&v64, value, sizeof v64);
      if (v64 != 0) return CUDA_ERROR_INVALID_VALUE;
      if (attribute == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) {
        pool.reserved_high = pool.reserved;
      } else {
        pool.used_high = pool.used;
      }
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;  // the current values are read-only
  }
}

CUresult set_access(State& s, PoolData& pool, const CUmemAccessDesc* map, std::size_t count) {
  if (count != 0 && map == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < count; ++i) {  // all checked before any is applied
    const CUmemAccessDesc& d = map[i];
    const int flags = raw(d.flags);
    if (raw(d.location.type) != CU_MEM_LOCATION_TYPE_DEVICE || s.device(d.location.id) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (d.location.id == pool.device) {
      if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_VALUE;
    } else if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
               !config().can_access_peer(d.location.id, pool.device)) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    pool.access[static_cast<std::size_t>(map[i].location.id)] = raw(map[i].flags);
  }
  return CUDA_SUCCESS;
}

// Pools of one device location with pinned allocations (the only kind simulated).
CUresult device_location(State& s, const CUmemLocation* location, int type, int& device) {
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (raw(location->type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE: break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return CUDA_ERROR_NOT_SUPPORTED;
    case CU_MEM_LOCATION_TYPE_NONE:
      return type == CU_MEM_ALLOCATION_TYPE_MANAGED ? CUDA_ERROR_NOT_SUPPORTED
                                                    : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (type == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;
  if (type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (s.device(location->id) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  device = location->id;
  return CUDA_SUCCESS;
}

CUresult get_default_pool(State& s, CUmemoryPool* out, int device) {
  if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUmemoryPool>(const_cast<void*>(default_pool(s, device)->handle));
  return CUDA_SUCCESS;
}

CUresult get_current_pool(State& s, CUmemoryPool* out, int device) {
  if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUmemoryPool>(const_cast<void*>(current_pool(s, device)->handle));
  return CUDA_SUCCESS;
}

CUresult set_current_pool(State& s, int device, CUmemoryPool handle) {
  Device* const dev = s.device(device);
  if (dev == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  const auto pool = find_pool(s, handle);
  if (!pool || pool->device != device || pool->imported) {
    return CUDA_ERROR_INVALID_VALUE;  // must be local, and able to allocate
  }
  dev->current_pool = pool->is_default ? nullptr : s.find<MemoryPool>(SWCU_MEMORY_POOL, handle);
  return CUDA_SUCCESS;
}

CUresult alloc_async(Sym sym, NullStream null, CUdeviceptr* dptr, std::size_t bytes,
                     CUmemoryPool pool_handle, bool from_pool, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (dptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<PoolData> pool;
    if (from_pool) {
      pool = pool_of(s, pool_handle);
      if (!pool || pool->imported) return CUDA_ERROR_INVALID_VALUE;  // imported: no allocations
    } else {
      pool = current_pool(s, q->device);
    }
    if (const auto r = capture_alloc(s, *q, bytes, pool->device, dptr)) return *r;
    return allocate_from_pool(s, lock, pool, *q, bytes, dptr);
  });
}

// Frees in stream order: the allocation stays live (and counted) until the stream gets there.
CUresult free_async(Sym sym, NullStream null, CUdeviceptr dptr, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (const auto r = capture_free(s, *q, dptr)) return *r;
    Allocation* const a = find_allocation(s, dptr);
    if (a == nullptr || a->base != dptr || !a->pool || a->stage == Allocation::Stage::freeing) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    a->stage = Allocation::Stage::freeing;
    const unsigned long long id = a->buffer_id;
    Op op;
    op.work = [dptr, id](State& state) {
      Allocation* const alloc = find_allocation(state, dptr);
      if (alloc != nullptr && alloc->buffer_id == id) free_now(state, *alloc);
      return CUDA_SUCCESS;
    };
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::NullStream;
using swcu::State;
using swcu::Sym;

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  return call(Sym::cuMemPoolCreate, [=](State& s) -> CUresult {
    if (pool == nullptr || poolProps == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_props(s, *poolProps)) return r;
    auto data = std::make_shared<swcu::PoolData>();
    data->device = poolProps->location.id;
    data->max_size = poolProps->maxSize;
    data->handle_types = static_cast<unsigned int>(swcu::raw(poolProps->handleTypes));
    data->access.assign(s.devices.size(), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    data->access[static_cast<std::size_t>(data->device)] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if ((data->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0 &&
        !swcu::create_pool_file(*data)) {
      return CUDA_ERROR_OUT_OF_MEMORY;  // no descriptor or memory left for its shared file
    }
    auto* const created =
        s.registry(SWCU_MEMORY_POOL).add(std::make_unique<swcu::MemoryPool>(data));
    data->handle = created;
    *pool = reinterpret_cast<CUmemoryPool>(created);
    return CUDA_SUCCESS;
  });
}

// Outstanding allocations keep the pool's memory until they are freed.
CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  return call(Sym::cuMemPoolDestroy, [=](State& s) -> CUresult {
    swcu::MemoryPool* const p = s.find<swcu::MemoryPool>(SWCU_MEMORY_POOL, pool);
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;  // default pools included
    swcu::Device& dev = s.devices[static_cast<std::size_t>(p->data->device)];
    if (dev.current_pool == p) dev.current_pool = nullptr;  // back to the default pool
    p->data->destroyed = true;
    swcu::trim_pool(s, *p->data, 0);
    s.destroy(SWCU_MEMORY_POOL, pool);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  return call(Sym::cuMemPoolTrimTo, [=](State& s) -> CUresult {
    const auto p = swcu::pool_of(s, pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    swcu::trim_pool(s, *p, minBytesToKeep);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  const int attribute = swcu::raw(attr);
  return call(Sym::cuMemPoolSetAttribute, [=](State& s) -> CUresult {
    const auto p = swcu::pool_of(s, pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return swcu::set_attribute(*p, attribute, value);
  });
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  const int attribute = swcu::raw(attr);
  return call(Sym::cuMemPoolGetAttribute, [=](State& s) -> CUresult {
    const auto p = swcu::pool_of(s, pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return swcu::get_attribute(*p, attribute, value);
  });
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  return call(Sym::cuMemPoolSetAccess, [=](State& s) -> CUresult {
    const auto p = swcu::pool_of(s, pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return swcu::set_access(s, *p, map, count);
  });
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool,
                            CUmemLocation* location) {
  return call(Sym::cuMemPoolGetAccess, [=](State& s) -> CUresult {
    const auto p = swcu::pool_of(s, memPool);
    if (!p || flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    switch (swcu::raw(location->type)) {
      case CU_MEM_LOCATION_TYPE_DEVICE:
        if (s.device(location->id) == nullptr) return CUDA_ERROR_INVALID_VALUE;
        *flags = static_cast<CUmemAccess_flags>(p->access[static_cast<std::size_t>(location->id)]);
        return CUDA_SUCCESS;
      case CU_MEM_LOCATION_TYPE_HOST:
      case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;  // device pools are not host memory
        return CUDA_SUCCESS;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  });
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  return call(Sym::cuDeviceGetDefaultMemPool,
              [=](State& s) -> CUresult { return swcu::get_default_pool(s, pool_out, dev); });
}

CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return call(Sym::cuDeviceGetMemPool,
              [=](State& s) -> CUresult { return swcu::get_current_pool(s, pool, dev); });
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return call(Sym::cuDeviceSetMemPool,
              [=](State& s) -> CUresult { return swcu::set_current_pool(s, dev, pool); });
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location,
                                CUmemAllocationType type) {
  const int allocation_type = swcu::raw(type);
  return call(Sym::cuMemGetDefaultMemPool, [=](State& s) -> CUresult {
    int device = 0;
    if (const CUresult r = swcu::device_location(s, location, allocation_type, device)) return r;
    return swcu::get_default_pool(s, pool_out, device);
  });
}

CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  const int allocation_type = swcu::raw(type);
  return call(Sym::cuMemGetMemPool, [=](State& s) -> CUresult {
    int device = 0;
    if (const CUresult r = swcu::device_location(s, location, allocation_type, device)) return r;
    return swcu::get_current_pool(s, pool, device);
  });
}

CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
  const int allocation_type = swcu::raw(type);
  return call(Sym::cuMemSetMemPool, [=](State& s) -> CUresult {
    int device = 0;
    if (const CUresult r = swcu::device_location(s, location, allocation_type, device)) return r;
    return swcu::set_current_pool(s, device, pool);
  });
}

CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return swcu::alloc_async(Sym::cuMemAllocAsync, NullStream::legacy, dptr, bytesize, nullptr, false,
                           hStream);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return swcu::alloc_async(Sym::cuMemAllocAsync_ptsz, NullStream::per_thread, dptr, bytesize,
                           nullptr, false, hStream);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream) {
  return swcu::alloc_async(Sym::cuMemAllocFromPoolAsync, NullStream::legacy, dptr, bytesize, pool,
                           true, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream) {
  return swcu::alloc_async(Sym::cuMemAllocFromPoolAsync_ptsz, NullStream::per_thread, dptr,
                           bytesize, pool, true, hStream);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return swcu::free_async(Sym::cuMemFreeAsync, NullStream::legacy, dptr, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return swcu::free_async(Sym::cuMemFreeAsync_ptsz, NullStream::per_thread, dptr, hStream);
}

}  // extern "C"
