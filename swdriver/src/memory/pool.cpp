// Memory pools and the stream-ordered allocator.
//
// A pool accounts `used` (its live allocations) and `reserved` (what it holds from the device:
// charged to the device's capacity). An allocation reserves more only when used would exceed
// reserved; freed memory stays reserved until a stream, event or context synchronize releases
// what exceeds the release threshold (default 0), or cuMemPoolTrimTo. The memory of each
// allocation is its own mapping: reuse is accounted, not simulated.
#include <cstring>

#include "core/config.hpp"
#include "memory/ipc.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

constexpr unsigned int kKnownHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                           CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT |
                                           CU_MEM_HANDLE_TYPE_FABRIC;

// Where a pool's memory is: its allocation type and location.
struct Where {
  int alloc_type = CU_MEM_ALLOCATION_TYPE_PINNED;
  int location_type = CU_MEM_LOCATION_TYPE_DEVICE;
  int location_id = 0;
};

// A location of pool memory, as cuMemGetDefaultMemPool, cuMemGetMemPool and cuMemSetMemPool
// document it: DEVICE, HOST or HOST_NUMA for pinned and managed memory, NONE ("no preferred
// location") for managed memory; every other case is CUDA_ERROR_INVALID_VALUE. An unknown
// device is `bad_device`; the host's only NUMA node is 0 (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).
CUresult check_location(State& s, const CUmemLocation* location, int type, CUresult bad_device,
                        Where& out) {
  if (location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const int location_type = raw(location->type);
  out = Where{type, location_type, 0};
  switch (location_type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (s.device(location->id) == nullptr) return bad_device;
      out.location_id = location->id;
      return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST: return CUDA_SUCCESS;  // the id is ignored
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      return location->id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEM_LOCATION_TYPE_NONE:
      return type == CU_MEM_ALLOCATION_TYPE_MANAGED ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;  // HOST_NUMA_CURRENT included
  }
}

// cuMemPoolCreate's properties. Pinned device, host and host NUMA pools and managed pools
// (CUDA 13); a HOST pool is "not IPC capable and handleTypes must be 0", and so is a managed
// pool here; HOST_NUMA_CURRENT is CUDA_ERROR_INVALID_VALUE, as documented.
CUresult check_props(State& s, const CUmemPoolProps& props, Where& where) {
  if (const CUresult r = check_location(s, &props.location, raw(props.allocType),
                                        CUDA_ERROR_INVALID_VALUE, where)) {
    return r;
  }
  const auto handles = static_cast<unsigned int>(raw(props.handleTypes));
  if ((handles & ~kKnownHandleTypes) != 0) return CUDA_ERROR_INVALID_VALUE;
  if ((handles & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;  // not on Linux
  }
  const bool host = where.location_type == CU_MEM_LOCATION_TYPE_HOST;
  if (handles != 0 && (host || where.alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED)) {
    return CUDA_ERROR_INVALID_VALUE;
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

// Devices get access as cuMemPoolSetAccess asks, all checked before any is applied: a device
// pool's own device keeps read-write, a peer needs a link (SWCUDA_P2P), else
// CUDA_ERROR_INVALID_DEVICE; host and managed memory is reachable from every device. The host
// CPU's access (HOST, HOST_NUMA locations) is fixed: read-write for host and managed pools.
CUresult set_access(State& s, PoolData& pool, const CUmemAccessDesc* map, std::size_t count) {
  if (count != 0 && map == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < count; ++i) {
    const CUmemAccessDesc& d = map[i];
    const int flags = raw(d.flags);
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int type = raw(d.location.type);
    if (type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
      if (pool.host_access == CU_MEM_ACCESS_FLAGS_PROT_NONE || flags != pool.host_access) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      continue;
    }
    if (type != CU_MEM_LOCATION_TYPE_DEVICE || s.device(d.location.id) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!pool.charges_device()) continue;
    if (d.location.id == pool.device) {
      if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_VALUE;
    } else if (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
               !config().can_access_peer(d.location.id, pool.device)) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (raw(map[i].location.type) == CU_MEM_LOCATION_TYPE_DEVICE) {
      pool.access[static_cast<std::size_t>(map[i].location.id)] = raw(map[i].flags);
    }
  }
  return CUDA_SUCCESS;
}

CUmemoryPool handle_of(const PoolData& pool) {
  return reinterpret_cast<CUmemoryPool>(const_cast<void*>(pool.handle));
}

bool is_device_pinned(const Where& w) {
  return w.alloc_type == CU_MEM_ALLOCATION_TYPE_PINNED &&
         w.location_type == CU_MEM_LOCATION_TYPE_DEVICE;
}

// The pool a location allocates from now.
std::shared_ptr<PoolData> current_at(State& s, const Where& w) {
  if (is_device_pinned(w)) return current_pool(s, w.location_id);
  auto fallback = default_pool_at(s, w.alloc_type, w.location_type, w.location_id);
  if (fallback->current != nullptr) {
    if (const auto* p = s.find<MemoryPool>(SWCU_MEMORY_POOL, fallback->current)) return p->data;
  }
  return fallback;
}

CUresult get_default_pool(State& s, CUmemoryPool* out, int device) {
  if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = handle_of(*default_pool(s, device));
  return CUDA_SUCCESS;
}

CUresult get_current_pool(State& s, CUmemoryPool* out, int device) {
  if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = handle_of(*current_pool(s, device));
  return CUDA_SUCCESS;
}

// Makes `handle` the current pool of `w`: "the location and allocation type specified must
// match those of the pool otherwise CUDA_ERROR_INVALID_VALUE"; an imported pool cannot allocate.
CUresult set_current_at(State& s, const Where& w, CUmemoryPool handle) {
  const auto pool = find_pool(s, handle);
  if (!pool || pool->imported || pool->alloc_type != w.alloc_type ||
      pool->location_type != w.location_type || pool->location_id != w.location_id) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (is_device_pinned(w)) {
    s.devices[static_cast<std::size_t>(w.location_id)].current_pool =
        pool->is_default ? nullptr : s.find<MemoryPool>(SWCU_MEMORY_POOL, handle);
  } else {
    default_pool_at(s, w.alloc_type, w.location_type, w.location_id)->current =
        pool->is_default ? nullptr : pool->handle;
  }
  return CUDA_SUCCESS;
}

CUresult set_current_pool(State& s, int device, CUmemoryPool handle) {
  if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  return set_current_at(
      s, Where{CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, device}, handle);
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
      // Graph allocation nodes hold device memory only.
      if (!pool->charges_device() && q->capture) return CUDA_ERROR_NOT_SUPPORTED;
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
    // A free that never ran did not happen: the allocation is live again, and cuMemFree (which
    // needs no context) or another cuMemFreeAsync can free it.
    op.not_run = [dptr, id](State& state) {
      Allocation* const alloc = find_allocation(state, dptr);
      if (alloc != nullptr && alloc->buffer_id == id &&
          alloc->stage == Allocation::Stage::freeing) {
        alloc->stage = Allocation::Stage::live;
      }
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
    swcu::Where where;
    if (const CUresult r = swcu::check_props(s, *poolProps, where)) return r;
    auto data = std::make_shared<swcu::PoolData>();
    data->alloc_type = where.alloc_type;
    data->location_type = where.location_type;
    data->location_id = where.location_id;
    data->device = where.location_type == CU_MEM_LOCATION_TYPE_DEVICE ? where.location_id : 0;
    data->max_size = poolProps->maxSize;
    data->handle_types = static_cast<unsigned int>(swcu::raw(poolProps->handleTypes));
    swcu::give_default_access(*data, s.devices.size());
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
    const swcu::PoolData& data = *p->data;
    if (data.charges_device()) {
      swcu::Device& dev = s.devices[static_cast<std::size_t>(data.device)];
      if (dev.current_pool == p) dev.current_pool = nullptr;  // back to the default pool
    } else if (const auto fallback =
                   swcu::default_pool_at(s, data.alloc_type, data.location_type, data.location_id);
               fallback->current == p) {
      fallback->current = nullptr;
    }
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
        *flags = static_cast<CUmemAccess_flags>(p->host_access);  // none for device pools
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
    swcu::Where where;
    if (const CUresult r =
            swcu::check_location(s, location, allocation_type, CUDA_ERROR_INVALID_DEVICE, where)) {
      return r;
    }
    if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pool_out = swcu::handle_of(
        *swcu::default_pool_at(s, where.alloc_type, where.location_type, where.location_id));
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  const int allocation_type = swcu::raw(type);
  return call(Sym::cuMemGetMemPool, [=](State& s) -> CUresult {
    swcu::Where where;
    if (const CUresult r =
            swcu::check_location(s, location, allocation_type, CUDA_ERROR_INVALID_DEVICE, where)) {
      return r;
    }
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pool = swcu::handle_of(*swcu::current_at(s, where));
    return CUDA_SUCCESS;
  });
}

CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
  const int allocation_type = swcu::raw(type);
  return call(Sym::cuMemSetMemPool, [=](State& s) -> CUresult {
    swcu::Where where;
    if (const CUresult r =
            swcu::check_location(s, location, allocation_type, CUDA_ERROR_INVALID_DEVICE, where)) {
      return r;
    }
    return swcu::set_current_at(s, where, pool);
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
