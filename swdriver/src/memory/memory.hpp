// Memory: device, host (page-locked), registered and managed allocations, and memory pools.
//
// Device memory is real host memory (anonymous mmap, MAP_NORESERVE: untouched pages cost
// nothing), so host-emulated kernels and copies can use it. Every allocation and registration is
// an Allocation object in the registry of its kind and in State::address_map (by base address;
// ranges never overlap), which is how every address argument is checked: a device range must lie
// inside one allocation.
//
// Capacity: each device has SWCUDA_DEVICE_MEMORY bytes. cuMemAlloc/cuMemAllocPitch charge their
// size rounded up to kAllocationGranularity; pools charge what they reserve. Managed memory is
// not charged (the device oversubscribes it, as with concurrent managed access), nor is host
// memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/state.hpp"
#include "sched/sched.hpp"

namespace swcu {

inline constexpr std::size_t kAllocationGranularity = 256;  ///< alignment and accounting unit
inline constexpr std::size_t kPitchAlignment = 512;         ///< cuMemAllocPitch rounds up to it

/// What a memory pool accounts (shared with its allocations, which may outlive the handle).
struct PoolData {
  PoolData() = default;
  ~PoolData();  ///< closes `fd`
  PoolData(const PoolData&) = delete;
  PoolData& operator=(const PoolData&) = delete;

  int device = 0;  ///< the device a device pool's memory is on (and charged to); 0 otherwise
  /// CUmemAllocationType: CU_MEM_ALLOCATION_TYPE_PINNED or CU_MEM_ALLOCATION_TYPE_MANAGED.
  int alloc_type = CU_MEM_ALLOCATION_TYPE_PINNED;
  /// CUmemLocationType: DEVICE, HOST, HOST_NUMA, or NONE (a managed pool with no preference).
  int location_type = CU_MEM_LOCATION_TYPE_DEVICE;
  int location_id = 0;  ///< the device ordinal or host NUMA node; 0 for HOST and NONE
  int host_access = 0;  ///< CUmemAccess_flags of the host CPU (host pools: read-write)
  /// A default pool of another location than a device's pinned memory: the pool
  /// cuMemSetMemPool made current there (nullptr: this one). Devices keep Device::current_pool.
  const void* current = nullptr;
  const void* handle = nullptr;  ///< the pool's handle, for CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE
  bool is_default = false;
  bool destroyed = false;           ///< the handle was destroyed; freed when nothing is used
  unsigned long long max_size = 0;  ///< 0: no limit but the device's capacity
  unsigned int handle_types = 0;
  unsigned long long release_threshold = 0;
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  unsigned long long reserved = 0, reserved_high = 0;
  unsigned long long used = 0, used_high = 0;
  std::vector<int> access;  ///< CUmemAccess_flags per device (the owner: read-write)
  /// A pool shareable as a POSIX file descriptor keeps its allocations in this memfd (ipc.hpp);
  /// an imported pool holds its own descriptor of the exporter's memfd. -1 for other pools.
  int fd = -1;
  bool imported = false;          ///< cuMemPoolImportFromShareableHandle made it: no allocations
  std::uint64_t inode = 0;        ///< of `fd`: what exported pointer data names
  std::uint64_t file_size = 0;    ///< of `fd` (the exporter grows it)
  std::uint64_t next_offset = 0;  ///< where the exporter's next allocation goes in `fd`

  /// Pinned device memory: what it reserves is charged to the device's capacity.
  [[nodiscard]] bool charges_device() const noexcept {
    return alloc_type == CU_MEM_ALLOCATION_TYPE_PINNED &&
           location_type == CU_MEM_LOCATION_TYPE_DEVICE;
  }
  /// Pinned host memory (HOST or HOST_NUMA).
  [[nodiscard]] bool host_pinned() const noexcept {
    return alloc_type == CU_MEM_ALLOCATION_TYPE_PINNED && !charges_device();
  }
};

/// Gives a new pool the access cuMemPoolCreate documents, over `devices` devices: "By default,
/// the pool's memory will be accessible from the device it is allocated on", a host pool's "from
/// the host CPU"; managed memory from every processor.
void give_default_access(PoolData& pool, std::size_t devices);

/// A memory pool handle: SWCU_MEMORY_POOL for created pools; default pools are not handles the
/// program owns and live in State::default_pools.
struct MemoryPool final : Object {
  explicit MemoryPool(std::shared_ptr<PoolData> d) noexcept
      : Object(SWCU_MEMORY_POOL), data(std::move(d)) {}
  /// Lets go of the pool (its allocations may keep it) before the handle waits in the graveyard.
  void release() noexcept override { data.reset(); }
  std::shared_ptr<PoolData> data;
};

/// Advice and prefetch state of one page of managed memory (cuMemAdvise, cuMemPrefetchAsync).
struct PageState {
  bool read_mostly = false;
  std::int8_t preferred_type = CU_MEM_LOCATION_TYPE_INVALID;  ///< CUmemLocationType
  std::int8_t preferred_id = 0;
  std::int8_t prefetch_type = CU_MEM_LOCATION_TYPE_INVALID;
  std::int8_t prefetch_id = 0;
  std::uint32_t accessed_by = 0;  ///< bit d: device d; bit kHostBit: the host
};
inline constexpr unsigned kHostBit = 31;

struct VmmRanges;  // vmm.hpp

/// One allocation or registration.
struct Allocation final : Object {
  enum class Memory { device, managed, host, registered };
  /// Where a stream-ordered allocation is in its stream's order.
  enum class Stage { pending, live, freeing };

  Allocation(swcu_handle_kind k, Memory m) noexcept : Object(k), memory(m) {}
  void release() noexcept override;

  const Memory memory;
  Stage stage = Stage::live;
  std::uintptr_t base = 0;
  std::size_t size = 0;
  void* mapping = nullptr;  ///< owned memory (nullptr for registrations)
  std::size_t mapping_size = 0;
  /// The memfd behind `mapping` for cuMemAlloc memory, which other processes open to map it
  /// (ipc.hpp); -1 for memory no other process can map.
  int fd = -1;
  Context* ctx = nullptr;  ///< the owning context; nullptr for stream-ordered allocations
  int device = 0;
  unsigned int flags = 0;  ///< host-alloc, registration or managed attach flags
  unsigned long long buffer_id = 0;
  unsigned long long charged = 0;  ///< bytes charged to the device (cuMemAlloc, cuMemAllocPitch)
  std::shared_ptr<PoolData> pool;  ///< stream-ordered allocations (and imported pool pointers)
  std::uint64_t pool_offset = 0;   ///< where `mapping` lies in the pool's file (pool->fd >= 0)
  bool sync_memops = false;
  std::vector<PageState> pages;    ///< managed memory, once advised or prefetched
  std::shared_ptr<VmmRanges> vmm;  ///< the mappings of an address reservation (vmm.hpp)
};

/// How an address is about to be used, which decides the stream-ordered stages it accepts.
enum class Access {
  now,      ///< by a synchronous call: the allocation must be live
  enqueue,  ///< by an operation being enqueued: pending (allocated earlier in stream order) or live
  execute,  ///< by an operation executing: live, or freed later in stream order
};

/// The host page size (sysconf), read once.
[[nodiscard]] std::size_t page_size() noexcept;

/// The allocation that contains `address`, of any kind and stage; nullptr if none.
[[nodiscard]] Allocation* find_allocation(State& s, std::uintptr_t address) noexcept;

/// The allocation that contains all of [address, address + bytes) and accepts `access`;
/// nullptr otherwise (bytes 0 counts as 1).
[[nodiscard]] Allocation* find_range(State& s, std::uintptr_t address, std::size_t bytes,
                                     Access access) noexcept;

/// Frees what a destroyed context owns (device, managed and host allocations, registrations),
/// each counted as reclaimed. Stream-ordered allocations are not the context's (cuCtxDestroy).
void reclaim_memory(State& s, Context& ctx) noexcept;

/// Releases the reserved memory of pools above their release threshold (what a stream, event or
/// context synchronize does).
void release_pool_memory(State& s) noexcept;

/// The pool behind a handle (created or default); nullptr if none.
[[nodiscard]] std::shared_ptr<PoolData> find_pool(State& s, const void* handle) noexcept;

/// A device's default pool (created on first use).
[[nodiscard]] std::shared_ptr<PoolData> default_pool(State& s, int device);

/// The pool cuMemAllocAsync uses on `device`.
[[nodiscard]] std::shared_ptr<PoolData> current_pool(State& s, int device);

/// The default pool of a location (already validated) and allocation type (created on first
/// use): a device's pinned pool is default_pool(); the others live in State::default_pools too.
[[nodiscard]] std::shared_ptr<PoolData> default_pool_at(State& s, int alloc_type, int location_type,
                                                        int location_id);

/// Whether `device` may access `a` (CUmemAccess_flags of pool memory; other memory: read-write,
/// read-only for a read-only registration). What copies and kernels check when they execute.
[[nodiscard]] int device_access(const Allocation& a, int device) noexcept;

/// Whether a copy or memset that `device` runs may touch the `bytes` at `address` (write:
/// read-write, else read). Memory of a device pool is mapped only for the devices
/// cuMemPoolSetAccess lets in, and a reserved range (vmm.hpp) only for the devices cuMemSetAccess
/// lets in: a GPU's copy engine faults on it elsewhere (CUDA_ERROR_ILLEGAL_ADDRESS, sticky); it
/// does not follow peer access. True for a negative `device` (a copy no device runs) and for
/// memory the driver does not know.
[[nodiscard]] bool device_may_access(State& s, int device, std::uintptr_t address,
                                     std::size_t bytes, bool write);

/// Allocates `bytes` from `pool` for a stream-ordered allocation in `q`, enqueuing the
/// allocation; CUDA_ERROR_OUT_OF_MEMORY when the pool or device cannot hold it.
[[nodiscard]] CUresult allocate_from_pool(State& s, Lock& lock,
                                          const std::shared_ptr<PoolData>& pool, Queue& q,
                                          std::size_t bytes, CUdeviceptr* out);

/// Makes `a` live: adds it to its registry and the address map (nothing on failure).
Allocation* add_allocation(State& s, std::unique_ptr<Allocation> a);

/// Frees an allocation of any kind now (no synchronization), as its owner asked.
void free_now(State& s, Allocation& a) noexcept;

/// Releases reserved memory of `pool` that no allocation uses, keeping at least `keep` bytes.
void trim_pool(State& s, PoolData& pool, unsigned long long keep) noexcept;

}  // namespace swcu
