// Graph memory (graph_memory.hpp): the memory of allocation nodes, mapped when the node is made,
// found by address; the parameters of allocation and free nodes; the devices' graph memory
// usage and its exports: cuDeviceGetGraphMemAttribute, cuDeviceSetGraphMemAttribute,
// cuDeviceGraphMemTrim.
#include "graph/graph_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "graph/graph.hpp"

namespace swcu {
namespace {

// Graph memory by base address.
std::map<std::uintptr_t, GraphMemory*>& memory_map() noexcept {
  static auto* const map = new std::map<std::uintptr_t, GraphMemory*>;  // never destroyed
  return *map;
}

// A device's graph memory usage, in bytes (the CU_GRAPH_MEM_ATTR_* values).
struct Usage {
  unsigned long long used = 0, used_high = 0, reserved = 0, reserved_high = 0;
};

// By device ordinal; never destroyed.
std::map<int, Usage>& usages() noexcept {
  static auto* const all = new std::map<int, Usage>;
  return *all;
}

Usage& usage(int device) { return usages()[device]; }

void map_one(GraphMemory& m) {
  if (m.mapped) return;
  Usage& u = usage(m.allocation->device);
  u.used += m.allocation->mapping_size;
  u.reserved = std::max(u.reserved, u.used);  // the pool grows only when it must
  u.used_high = std::max(u.used_high, u.used);
  u.reserved_high = std::max(u.reserved_high, u.reserved);
  m.mapped = true;
}

void unmap_one(GraphMemory& m) noexcept {
  if (!m.mapped) return;
  Usage& u = usages().find(m.allocation->device)->second;  // made when it was mapped
  u.used -= std::min<unsigned long long>(u.used, m.allocation->mapping_size);
  m.mapped = false;
}

// In use: allocated (not freed), or needed by a launch or upload that has not finished.
bool in_use(const GraphMemory& m) noexcept {
  return m.outstanding || m.allocation->stage != Allocation::Stage::pending ||
         (m.scheduled && !m.scheduled->done);
}

CUresult device_arg(State& s, CUdevice device) noexcept {
  return s.device(device) == nullptr ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

}  // namespace

void map_graph_memory(const Graph& plan, const std::shared_ptr<Completion>& by) {
  for (const auto& n : plan.nodes) {
    if (n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) continue;
    if (GraphMemory* const m = n->memory()) {
      map_one(*m);
      m->scheduled = by;
    }
  }
}

void unmap_graph_memory(const Graph& plan) noexcept {
  for (const auto& n : plan.nodes) {
    if (n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) continue;
    if (GraphMemory* const m = n->memory()) {
      unmap_one(*m);
      m->scheduled.reset();
    }
  }
}

GraphMemory::~GraphMemory() {
  if (!allocation) return;
  unmap_one(*this);
  State& s = state();
  memory_map().erase(allocation->base);
  const auto it = s.address_map.find(allocation->base);
  if (it != s.address_map.end() && it->second == allocation.get()) s.address_map.erase(it);
  allocation->release();
}

GraphMemory* find_graph_memory(std::uintptr_t address) noexcept {
  const auto& memory = memory_map();
  const auto it = memory.find(address);
  return it == memory.end() ? nullptr : it->second;
}

std::shared_ptr<GraphMemory> new_graph_memory(State& s, std::size_t bytes, int device) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > std::numeric_limits<std::size_t>::max() - page) return nullptr;
  const std::size_t mapped = (bytes + page - 1) / page * page;
  auto a = std::make_unique<Allocation>(SWCU_GRAPH, Allocation::Memory::device);
  void* const p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  a->mapping = p;
  a->mapping_size = mapped;
  a->base = reinterpret_cast<std::uintptr_t>(p);
  a->size = bytes;
  a->device = device;
  a->buffer_id = s.next_buffer_id++;
  a->stage = Allocation::Stage::pending;  // usable from the moment its node runs
  auto m = std::make_shared<GraphMemory>();
  Allocation* const raw_allocation = a.get();
  m->allocation = std::move(a);
  memory_map().emplace(raw_allocation->base, m.get());
  s.address_map.emplace(raw_allocation->base, raw_allocation);
  return m;
}

CUresult make_alloc(State& s, CUDA_MEM_ALLOC_NODE_PARAMS& p, AllocNode& out) {
  const CUmemPoolProps& props = p.poolProps;
  if (raw(props.allocType) != CU_MEM_ALLOCATION_TYPE_PINNED ||
      raw(props.location.type) != CU_MEM_LOCATION_TYPE_DEVICE ||
      s.device(props.location.id) == nullptr || p.bytesize == 0 ||
      (p.accessDescCount > 0 && p.accessDescs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (std::size_t i = 0; i < p.accessDescCount; ++i) {
    const CUmemAccessDesc& d = p.accessDescs[i];
    const int flags = raw(d.flags);
    if (raw(d.location.type) != CU_MEM_LOCATION_TYPE_DEVICE || s.device(d.location.id) == nullptr ||
        (flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
         flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  auto memory = new_graph_memory(s, p.bytesize, props.location.id);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  memory->access.assign(p.accessDescs, p.accessDescs + p.accessDescCount);
  memory->params = p;
  memory->params.accessDescs = memory->access.data();
  memory->params.dptr = memory->address();
  p.dptr = memory->address();
  out.memory = std::move(memory);
  return CUDA_SUCCESS;
}

CUresult make_free(const Graph& g, CUdeviceptr address, FreeNode& out) {
  GraphMemory* const m = find_graph_memory(address);
  if (m == nullptr || m->freed_in_owner || m->freed_elsewhere) return CUDA_ERROR_INVALID_VALUE;
  // Is the allocation node in this graph? Then this is the owner's free.
  const bool own = std::any_of(g.nodes.begin(), g.nodes.end(), [m](const std::unique_ptr<Node>& n) {
    return n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && n->memory() == m;
  });
  (own ? m->freed_in_owner : m->freed_elsewhere) = true;
  out.memory = m->shared_from_this();
  out.address = address;
  return CUDA_SUCCESS;
}

}  // namespace swcu

extern "C" {

using swcu::State;
using swcu::Sym;

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  return swcu::call(Sym::cuDeviceGetGraphMemAttribute, [=](State& s) -> CUresult {
    if (const CUresult r = swcu::device_arg(s, device)) return r;
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const swcu::Usage& u = swcu::usage(device);
    cuuint64_t v = 0;  // every attribute is a cuuint64_t
    switch (swcu::raw(attr)) {
      case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: v = u.used; break;
      case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: v = u.used_high; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = u.reserved; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = u.reserved_high; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    std::memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
  });
}

// Only the high watermarks can be set, and only to 0 ("High watermark can only be reset to
// zero"): they start again from the current value, as a memory pool's do.
CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  return swcu::call(Sym::cuDeviceSetGraphMemAttribute, [=](State& s) -> CUresult {
    if (const CUresult r = swcu::device_arg(s, device)) return r;
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t v = 0;
    std::memcpy(&v, value, sizeof v);
    swcu::Usage& u = swcu::usage(device);
    const int a = swcu::raw(attr);
    if (v != 0 ||
        (a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (a == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) {
      u.used_high = u.used;
    } else {
      u.reserved_high = u.reserved;
    }
    return CUDA_SUCCESS;
  });
}

// "Blocks which are not in use by a graph that is either currently executing or scheduled to
// execute are freed back to the operating system."
CUresult cuDeviceGraphMemTrim(CUdevice device) {
  return swcu::call(Sym::cuDeviceGraphMemTrim, [=](State& s) -> CUresult {
    if (const CUresult r = swcu::device_arg(s, device)) return r;
    for (const auto& [base, m] : swcu::memory_map()) {
      if (m->allocation->device == device && !swcu::in_use(*m)) swcu::unmap_one(*m);
    }
    swcu::Usage& u = swcu::usage(device);
    u.reserved = u.used;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
