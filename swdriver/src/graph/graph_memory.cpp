// Graph memory (graph_memory.hpp): the memory of allocation nodes, mapped when the node is made,
// found by address; the parameters of allocation and free nodes.
#include "graph/graph_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
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

}  // namespace

GraphMemory::~GraphMemory() {
  if (!allocation) return;
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
