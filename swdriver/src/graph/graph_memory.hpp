// Graph memory: the memory of memory allocation nodes (graph_memory.cpp), with the parameters of
// allocation and free nodes, and the device's graph memory usage (cuDeviceGetGraphMemAttribute).
//
// Usage, as the CUDA programming guide describes it ("Graph Memory Nodes", physical memory
// management): a node's address is reserved when the node is made and costs no memory; its
// memory is mapped when an executable graph holding the node is uploaded or launched, and stays
// mapped to that executable graph between launches (USED_MEM_CURRENT: memory mapped by at least
// one graph). Mapping takes memory from the device's graph pool, which grows when it holds too
// little (RESERVED_MEM_CURRENT) and never shrinks by itself: destroying the executable graph
// unmaps its memory back into the pool, cuDeviceGraphMemTrim releases what the pool holds
// beyond what is mapped, after unmapping the memory of executable graphs that are neither
// scheduled nor running and whose allocations are freed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/node.hpp"
#include "memory/memory.hpp"
#include "sched/sched.hpp"

namespace swcu {

/// The memory of a memory allocation node. Its address is fixed when the node is made (as the
/// driver documents) and stays reserved while the node or an executable graph of it exists; it
/// is usable (an allocation in State::address_map at the live stage) from the moment the node
/// runs until the memory is freed: by a free node, by the next launch with
/// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, or by the executable graph's destruction.
struct GraphMemory : std::enable_shared_from_this<GraphMemory> {
  GraphMemory() = default;
  ~GraphMemory();  // leaves the address map: destroyed under the state lock
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;

  std::unique_ptr<Allocation> allocation;  ///< kind SWCU_GRAPH; stage pending while not live
  CUDA_MEM_ALLOC_NODE_PARAMS params{};     ///< as given (dptr filled in)
  std::vector<CUmemAccessDesc> access;     ///< params.accessDescs points here
  bool freed_in_owner = false;             ///< a free node of the owning graph frees it
  bool freed_elsewhere = false;            ///< a free node of another graph frees it
  bool outstanding = false;                ///< a launch left it allocated (not freed in the graph)
  bool mapped = false;  ///< counted in the device's USED_MEM_CURRENT (map_graph_memory)
  /// The last launch or upload that maps it: in use until done (cuDeviceGraphMemTrim).
  std::shared_ptr<Completion> scheduled;

  /// Where the memory starts.
  [[nodiscard]] CUdeviceptr address() const noexcept {
    return static_cast<CUdeviceptr>(allocation->base);
  }
};

/// Graph memory by address (the allocation's base); nullptr for other addresses.
[[nodiscard]] GraphMemory* find_graph_memory(std::uintptr_t address) noexcept;
/// New graph memory of `bytes` on `device`; nullptr when it cannot be mapped.
[[nodiscard]] std::shared_ptr<GraphMemory> new_graph_memory(State& s, std::size_t bytes,
                                                            int device);

/// An allocation node's parameters (cuGraphAddMemAllocNode): checked, its memory made, p.dptr
/// set. CUDA_ERROR_INVALID_VALUE for bad parameters, CUDA_ERROR_OUT_OF_MEMORY when the memory
/// cannot be mapped.
[[nodiscard]] CUresult make_alloc(State& s, CUDA_MEM_ALLOC_NODE_PARAMS& p, AllocNode& out);
/// Maps the memory of the allocation nodes of the executable copy `plan` (uploaded or launched
/// by `by`): counted as used, the device's graph pool grows when it must.
void map_graph_memory(const Graph& plan, const std::shared_ptr<Completion>& by);
/// Unmaps the memory of `plan`'s allocation nodes (its executable graph went): back to the pool.
void unmap_graph_memory(const Graph& plan) noexcept;

/// A free node of `g` for the graph memory at `address` (the owner's free when its allocation
/// node is in `g`); CUDA_ERROR_INVALID_VALUE when `address` is not graph memory or is already
/// freed by a node.
[[nodiscard]] CUresult make_free(const Graph& g, CUdeviceptr address, FreeNode& out);

}  // namespace swcu
