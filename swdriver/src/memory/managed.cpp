// Managed memory: advice (cuMemAdvise), prefetch (cuMemPrefetchAsync), the batch operations of
// CUDA 13 (cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync)
// and range attributes (cuMemRangeGetAttribute[s]). Allocation itself is in memory.cpp.
#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

// ---- locations (cuMemAdvise, cuMemPrefetchAsync) ----

struct Location {
  int type = CU_MEM_LOCATION_TYPE_INVALID;
  int id = 0;
};

// A location for prefetch or a preferred location: a device, the host, or host NUMA node 0.
CUresult parse_location(State& s, const CUmemLocation& in, Location& out) {
  out = {raw(in.type), in.id};
  switch (out.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      return s.device(in.id) == nullptr ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST: out.id = 0; return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:  // the only host NUMA node
                                          // (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID)
      return in.id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      out = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// The legacy CUdevice form of a location: a device ordinal or CU_DEVICE_CPU.
CUmemLocation legacy_location(CUdevice device) {
  CUmemLocation loc{};
  if (device == CU_DEVICE_CPU) {
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = device;
  }
  return loc;
}

// The pages of managed allocation `a` that [address, address + count) touches, rounded out to
// whole pages as documented.
std::span<PageState> pages_of(Allocation& a, std::uintptr_t address, std::size_t count) {
  const std::size_t page = page_size();
  if (a.pages.empty()) a.pages.resize((a.size + page - 1) / page);
  const std::size_t first = (address - a.base) / page;
  const std::size_t last = std::min((address - a.base + count - 1) / page, a.pages.size() - 1);
  return std::span<PageState>(a.pages).subspan(first, last - first + 1);
}

// A managed range for cuMemAdvise, cuMemPrefetchAsync and the range attributes.
CUresult managed_range(State& s, CUdeviceptr address, std::size_t count, Allocation*& out) {
  if (count == 0) return CUDA_ERROR_INVALID_VALUE;
  out = find_range(s, address, count, Access::now);
  if (out == nullptr || out->memory != Allocation::Memory::managed) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult advise(Sym sym, CUdeviceptr address, std::size_t count, int advice,
                const CUmemLocation& location) {
  return call(sym, [=](State& s) -> CUresult {
    // Advice needs a current context: CUDA_ERROR_INVALID_CONTEXT without one (observed for the
    // CUmemLocation form on an H200, driver 580.159.04; the device-ordinal form does the same).
    Context* current = nullptr;
    if (const CUresult r = current_context(s, current)) return r;
    Allocation* a = nullptr;
    if (const CUresult r = managed_range(s, address, count, a)) return r;
    Location loc;
    switch (advice) {
      case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
        if (const CUresult r = parse_location(s, location, loc)) return r;
        break;
      case CU_MEM_ADVISE_SET_ACCESSED_BY:
      case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
        loc = {raw(location.type), location.id};
        if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE) {
          if (s.device(location.id) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
        } else if (loc.type != CU_MEM_LOCATION_TYPE_HOST) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      case CU_MEM_ADVISE_SET_READ_MOSTLY:
      case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
      case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: break;  // the location is ignored
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    const unsigned bit =
        loc.type == CU_MEM_LOCATION_TYPE_HOST ? kHostBit : static_cast<unsigned>(loc.id);
    for (PageState& p : pages_of(*a, address, count)) {
      switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY: p.read_mostly = true; break;
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY: p.read_mostly = false; break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
          p.preferred_type = static_cast<std::int8_t>(loc.type);
          p.preferred_id = static_cast<std::int8_t>(loc.id);
          break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
          p.preferred_type = CU_MEM_LOCATION_TYPE_INVALID;
          p.preferred_id = 0;
          break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY: p.accessed_by |= 1U << bit; break;
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY: p.accessed_by &= ~(1U << bit); break;
        default: break;
      }
    }
    return CUDA_SUCCESS;
  });
}

// The last prefetch location is recorded when the prefetch is requested, as documented ("no
// indication as to whether the prefetch operation has completed or even begun"); the migration
// itself is a stream operation that costs what copying the range would.
CUresult prefetch(Sym sym, NullStream null, CUdeviceptr address, std::size_t count,
                  const CUmemLocation& location, unsigned int flags, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    Allocation* a = nullptr;
    if (const CUresult r = managed_range(s, address, count, a)) return r;
    Location loc;
    if (const CUresult r = parse_location(s, location, loc)) return r;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    // No graph node holds a prefetch (CUgraphNodeType has none): a capture refuses it.
    if (const auto r = capture_other(s, *q)) return *r;
    for (PageState& p : pages_of(*a, address, count)) {
      p.prefetch_type = static_cast<std::int8_t>(loc.type);
      p.prefetch_id = static_cast<std::int8_t>(loc.id);
    }
    Op op;
    op.bytes = count;
    op.work = [address, count](State& state) {
      return find_range(state, address, count, Access::execute) != nullptr
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_ILLEGAL_ADDRESS;
    };
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

// ---- batch operations (cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync,
// cuMemDiscardAndPrefetchBatchAsync) ----

// What a discarded byte reads as until it is written again. cuda.h: "Reading from a discarded
// range, without a subsequent write or prefetch to that part of the range, will return an
// indeterminate value"; this driver makes that value this byte, at once and for the whole
// range, so that a program that reads discarded data sees garbage rather than its old data. A
// prefetch after the discard keeps the poison (any value is one the real driver may return).
constexpr unsigned char kDiscardedByte = 0xDB;

enum class Batch { prefetch, discard, discard_and_prefetch };

struct BatchRange {
  CUdeviceptr address = 0;
  std::size_t size = 0;
  Location to;  // where it is prefetched (unused for a discard)
};

// The prefetch location of each operation: "the first entry in prefetchLocIdxs must always be
// 0. Also, each entry must be greater than the previous entry and the last entry should be less
// than count. Furthermore, numPrefetchLocs must be lesser than or equal to count."
CUresult batch_locations(State& s, std::size_t count, const CUmemLocation* locations,
                         const std::size_t* first_ops, std::size_t location_count,
                         std::vector<BatchRange>& ranges) {
  if (location_count == 0 || location_count > count || locations == nullptr ||
      first_ops == nullptr || first_ops[0] != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (std::size_t k = 0; k < location_count; ++k) {
    if (k > 0 && first_ops[k] <= first_ops[k - 1]) return CUDA_ERROR_INVALID_VALUE;
    if (first_ops[k] >= count) return CUDA_ERROR_INVALID_VALUE;
    Location loc;
    if (const CUresult r = parse_location(s, locations[k], loc)) return r;
    const std::size_t end = k + 1 < location_count ? first_ops[k + 1] : count;
    for (std::size_t i = first_ops[k]; i < end; ++i) ranges[i].to = loc;
  }
  return CUDA_SUCCESS;
}

// The batch as a whole is one operation of the stream; its ranges are checked (each must be
// managed memory: this driver reports CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS 0) and its
// prefetch locations recorded when it is enqueued, as cuMemPrefetchAsync's are. "hStream - ...
// Must not be legacy NULL stream": CUDA_ERROR_INVALID_VALUE; "flags - ... Must be zero".
CUresult batch(Sym sym, NullStream null, Batch kind, CUdeviceptr* dptrs, std::size_t* sizes,
               std::size_t count, CUmemLocation* locations, std::size_t* first_ops,
               std::size_t location_count, unsigned long long flags, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (q->kind == Queue::Kind::legacy) return CUDA_ERROR_INVALID_VALUE;
    if (flags != 0 || count == 0 || dptrs == nullptr || sizes == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::vector<BatchRange> ranges(count);
    for (std::size_t i = 0; i < count; ++i) {
      Allocation* a = nullptr;
      if (const CUresult r = managed_range(s, dptrs[i], sizes[i], a)) return r;
      ranges[i].address = dptrs[i];
      ranges[i].size = sizes[i];
    }
    if (kind != Batch::discard) {
      if (const CUresult r =
              batch_locations(s, count, locations, first_ops, location_count, ranges)) {
        return r;
      }
    }
    if (const auto r = capture_other(s, *q)) return *r;
    unsigned long long bytes = 0;
    if (kind != Batch::discard) {
      for (const BatchRange& range : ranges) {
        Allocation* const a = find_range(s, range.address, range.size, Access::now);
        for (PageState& p : pages_of(*a, range.address, range.size)) {
          p.prefetch_type = static_cast<std::int8_t>(range.to.type);
          p.prefetch_id = static_cast<std::int8_t>(range.to.id);
        }
        bytes += range.size;
      }
    }
    Op op;
    op.bytes = bytes;
    op.work = [ranges = std::move(ranges), kind](State& state) {
      for (const BatchRange& range : ranges) {
        if (find_range(state, range.address, range.size, Access::execute) == nullptr) {
          return CUDA_ERROR_ILLEGAL_ADDRESS;
        }
      }
      if (kind != Batch::prefetch) {
        for (const BatchRange& range : ranges) {
          std::memset(reinterpret_cast<void*>(range.address), kDiscardedByte, range.size);
        }
      }
      return CUDA_SUCCESS;
    };
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

// ---- range attributes ----

// The value every page has, or nullopt when they differ.
template <class Get>
auto uniform(std::span<const PageState> pages, Get get) -> std::optional<decltype(get(pages[0]))> {
  const auto first = get(pages.front());
  for (const PageState& p : pages) {
    if (get(p) != first) return std::nullopt;
  }
  return first;
}

Location preferred(std::span<const PageState> pages) {
  const auto loc = uniform(pages, [](const PageState& p) {
    return std::pair<int, int>(p.preferred_type, p.preferred_id);
  });
  return loc ? Location{loc->first, loc->second} : Location{};
}

Location last_prefetch(std::span<const PageState> pages) {
  const auto loc = uniform(pages, [](const PageState& p) {
    return std::pair<int, int>(p.prefetch_type, p.prefetch_id);
  });
  return loc ? Location{loc->first, loc->second} : Location{};
}

// The legacy device-id form: an ordinal, CU_DEVICE_CPU or CU_DEVICE_INVALID.
int device_id(const Location& loc) {
  switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return loc.id;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return CU_DEVICE_CPU;
    default: return CU_DEVICE_INVALID;
  }
}

CUresult range_attribute(std::span<const PageState> pages, int attribute, void* data,
                         std::size_t size) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
    if (size == 0 || size % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
    std::uint32_t mask = ~0U;
    for (const PageState& p : pages) mask &= p.accessed_by;
    std::vector<int> ids;
    for (unsigned d = 0; d < kHostBit; ++d) {
      if ((mask & (1U << d)) != 0) ids.push_back(static_cast<int>(d));
    }
    if ((mask & (1U << kHostBit)) != 0) ids.push_back(CU_DEVICE_CPU);
    ids.resize(std::max(ids.size(), size / 4), CU_DEVICE_INVALID);
    std::memcpy(data, ids.data(), size);
    return CUDA_SUCCESS;
  }
  if (size != 4) return CUDA_ERROR_INVALID_VALUE;
  int value = 0;
  switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
      value =
          std::all_of(pages.begin(), pages.end(), [](const PageState& p) { return p.read_mostly; })
              ? 1
              : 0;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: value = device_id(preferred(pages)); break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: value = preferred(pages).type; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: value = preferred(pages).id; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      value = device_id(last_prefetch(pages));
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      value = last_prefetch(pages).type;
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: value = last_prefetch(pages).id; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(data, &value, sizeof value);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::Allocation;
using swcu::call;
using swcu::Context;
using swcu::State;
using swcu::Sym;

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                        CUmemLocation location) {
  return swcu::advise(Sym::cuMemAdvise_v2, devPtr, count, swcu::raw(advice), location);
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  return swcu::advise(Sym::cuMemAdvise, devPtr, count, swcu::raw(advice),
                      swcu::legacy_location(device));
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                               unsigned int flags, CUstream hStream) {
  return swcu::prefetch(Sym::cuMemPrefetchAsync_v2, swcu::NullStream::legacy, devPtr, count,
                        location, flags, hStream);
}

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                    unsigned int flags, CUstream hStream) {
  return swcu::prefetch(Sym::cuMemPrefetchAsync_v2_ptsz, swcu::NullStream::per_thread, devPtr,
                        count, location, flags, hStream);
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                            CUstream hStream) {
  return swcu::prefetch(Sym::cuMemPrefetchAsync, swcu::NullStream::legacy, devPtr, count,
                        swcu::legacy_location(dstDevice), 0, hStream);
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                 CUstream hStream) {
  return swcu::prefetch(Sym::cuMemPrefetchAsync_ptsz, swcu::NullStream::per_thread, devPtr, count,
                        swcu::legacy_location(dstDevice), 0, hStream);
}

CUresult cuMemPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                 CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                 size_t numPrefetchLocs, unsigned long long flags,
                                 CUstream hStream) {
  return swcu::batch(Sym::cuMemPrefetchBatchAsync, swcu::NullStream::legacy, swcu::Batch::prefetch,
                     dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                     hStream);
}

CUresult cuMemPrefetchBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                      CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                      size_t numPrefetchLocs, unsigned long long flags,
                                      CUstream hStream) {
  return swcu::batch(Sym::cuMemPrefetchBatchAsync_ptsz, swcu::NullStream::per_thread,
                     swcu::Batch::prefetch, dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                     numPrefetchLocs, flags, hStream);
}

CUresult cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                unsigned long long flags, CUstream hStream) {
  return swcu::batch(Sym::cuMemDiscardBatchAsync, swcu::NullStream::legacy, swcu::Batch::discard,
                     dptrs, sizes, count, nullptr, nullptr, 0, flags, hStream);
}

CUresult cuMemDiscardBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                     unsigned long long flags, CUstream hStream) {
  return swcu::batch(Sym::cuMemDiscardBatchAsync_ptsz, swcu::NullStream::per_thread,
                     swcu::Batch::discard, dptrs, sizes, count, nullptr, nullptr, 0, flags,
                     hStream);
}

CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                           CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                           size_t numPrefetchLocs, unsigned long long flags,
                                           CUstream hStream) {
  return swcu::batch(Sym::cuMemDiscardAndPrefetchBatchAsync, swcu::NullStream::legacy,
                     swcu::Batch::discard_and_prefetch, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

CUresult cuMemDiscardAndPrefetchBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                CUmemLocation* prefetchLocs,
                                                size_t* prefetchLocIdxs, size_t numPrefetchLocs,
                                                unsigned long long flags, CUstream hStream) {
  return swcu::batch(Sym::cuMemDiscardAndPrefetchBatchAsync_ptsz, swcu::NullStream::per_thread,
                     swcu::Batch::discard_and_prefetch, dptrs, sizes, count, prefetchLocs,
                     prefetchLocIdxs, numPrefetchLocs, flags, hStream);
}

CUresult cuMemRangeGetAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute,
                                CUdeviceptr devPtr, size_t count) {
  const int attr = swcu::raw(attribute);
  return call(Sym::cuMemRangeGetAttribute, [=](State& s) -> CUresult {
    // A current context is needed (CUDA_ERROR_INVALID_CONTEXT without one: observed on an H200,
    // driver 580.159.04, 2026-11-27; cuMemRangeGetAttributes is taken to do the same).
    swcu::Context* current = nullptr;
    if (const CUresult r = swcu::current_context(s, current)) return r;
    Allocation* a = nullptr;
    if (const CUresult r = swcu::managed_range(s, devPtr, count, a)) return r;
    return swcu::range_attribute(swcu::pages_of(*a, devPtr, count), attr, data, dataSize);
  });
}

CUresult cuMemRangeGetAttributes(void** data, size_t* dataSizes, CUmem_range_attribute* attributes,
                                 size_t numAttributes, CUdeviceptr devPtr, size_t count) {
  return call(Sym::cuMemRangeGetAttributes, [=](State& s) -> CUresult {
    if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* current = nullptr;
    if (const CUresult r = swcu::current_context(s, current)) return r;
    Allocation* a = nullptr;
    if (const CUresult r = swcu::managed_range(s, devPtr, count, a)) return r;
    const auto pages = swcu::pages_of(*a, devPtr, count);
    for (std::size_t i = 0; i < numAttributes; ++i) {
      if (const CUresult r =
              swcu::range_attribute(pages, swcu::raw(attributes[i]), data[i], dataSizes[i])) {
        return r;
      }
    }
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
