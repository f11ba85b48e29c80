// Memory pools for stream-ordered allocation (cuMemPool*).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/device_buffer.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// How a device may access a pool's memory (CUmemAccess_flags).
enum class pool_access {
  none = CU_MEM_ACCESS_FLAGS_PROT_NONE,
  read = CU_MEM_ACCESS_FLAGS_PROT_READ,
  read_write = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
};

/// What memory a pool holds and where (CUmemPoolProps::allocType and location): pinned memory
/// of a device, pinned host memory (of the host, or of one host NUMA node), or managed memory
/// (CUDA 13) with a preferred location or none.
class pool_location {
 public:
  /// Pinned memory of `dev` (the pools of CUDA 11.2).
  [[nodiscard]] static pool_location device(const cuwrap::device& dev) noexcept {
    return {CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal()};
  }
  /// Pinned host memory (CU_MEM_LOCATION_TYPE_HOST). The driver does not share such pools with
  /// other processes: use host_numa for that.
  [[nodiscard]] static constexpr pool_location host() noexcept {
    return {CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0};
  }
  /// Pinned host memory of NUMA node `node` (CU_MEM_LOCATION_TYPE_HOST_NUMA; a device's
  /// nearest node is CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID). Shareable with other processes.
  [[nodiscard]] static constexpr pool_location host_numa(int node) noexcept {
    return {CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, node};
  }
  /// Managed memory with no preferred location (CU_MEM_ALLOCATION_TYPE_MANAGED,
  /// CU_MEM_LOCATION_TYPE_NONE).
  [[nodiscard]] static constexpr pool_location managed() noexcept {
    return {CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE, 0};
  }
  /// Managed memory that prefers `dev`.
  [[nodiscard]] static pool_location managed(const cuwrap::device& dev) noexcept {
    return {CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal()};
  }
  /// Managed memory that prefers the host.
  [[nodiscard]] static constexpr pool_location managed_on_host() noexcept {
    return {CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST, 0};
  }

  /// Pinned or managed.
  [[nodiscard]] constexpr CUmemAllocationType allocation_type() const noexcept { return type_; }
  /// Device, host, host NUMA node, or none (managed memory only).
  [[nodiscard]] constexpr CUmemLocationType location_type() const noexcept { return where_; }
  /// The device ordinal or NUMA node (0 for the others).
  [[nodiscard]] constexpr int id() const noexcept { return id_; }
  /// True for managed memory.
  [[nodiscard]] constexpr bool is_managed() const noexcept {
    return type_ == CU_MEM_ALLOCATION_TYPE_MANAGED;
  }
  /// True when the host can access the memory: host and host NUMA pools, managed pools.
  [[nodiscard]] constexpr bool host_accessible() const noexcept {
    return is_managed() || where_ == CU_MEM_LOCATION_TYPE_HOST ||
           where_ == CU_MEM_LOCATION_TYPE_HOST_NUMA;
  }
  /// As the driver's location struct.
  [[nodiscard]] constexpr CUmemLocation native() const noexcept {
    return CUmemLocation{where_, id_};
  }
  friend constexpr bool operator==(pool_location, pool_location) noexcept = default;

 private:
  constexpr pool_location(CUmemAllocationType type, CUmemLocationType where, int id) noexcept
      : type_{type}, where_{where}, id_{id} {}
  CUmemAllocationType type_;
  CUmemLocationType where_;
  int id_;
};

/// When a pool may reuse memory freed in stream order for another stream's allocation
/// (CU_MEMPOOL_ATTR_REUSE_*; each is on by default).
enum class pool_reuse {
  /// After an event dependency on the freeing stream
  /// (CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES).
  follow_event_dependencies = CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
  /// When the free is known to be complete (CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC).
  allow_opportunistic = CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
  /// By inserting a dependency on the free (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES).
  allow_internal_dependencies = CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
};

/// A pool's memory statistics, in bytes.
struct pool_usage {
  std::uint64_t reserved_current = 0;  ///< backing memory the pool holds now
  std::uint64_t reserved_high = 0;     ///< the most it held since the last reset
  std::uint64_t used_current = 0;      ///< memory handed out to allocations now
  std::uint64_t used_high = 0;         ///< the most handed out since the last reset
};

namespace detail {
CUdeviceptr pool_allocate(CUmemoryPool pool, std::size_t bytes, const stream& s,
                          std::source_location where);
}  // namespace detail

/// A non-owning view of a memory pool. A view of a moved-from pool is empty: its operations
/// throw cuwrap::usage_error before any driver call.
class memory_pool_ref {
 public:
  using native_handle_type = CUmemoryPool;

  /// Views `handle` (not owned).
  constexpr memory_pool_ref(native_handle_type handle) noexcept : handle_{handle} {}
  memory_pool_ref(std::nullptr_t) = delete;

  /// The driver's handle (null for a moved-from pool).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a moved-from or released pool, and for views of one.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }

  /// Allocates `count` elements on `s` from this pool (cuMemAllocFromPoolAsync; one call).
  template <class T>
  [[nodiscard]] stream_ordered_buffer<T> allocate(
      const stream& s, std::size_t count,
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "memory_pool", "allocate", where);
    const CUdeviceptr address = detail::pool_allocate(handle_, count * sizeof(T), s, where);
    return stream_ordered_buffer<T>::adopt(s, device_span<T>::from_address(address, count), where);
  }

  /// Releases unused memory until the pool holds at most `keep_bytes` (cuMemPoolTrimTo).
  void trim(std::size_t keep_bytes,
            std::source_location where = std::source_location::current()) const;
  /// Memory the pool keeps when it could release it (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD).
  [[nodiscard]] std::uint64_t release_threshold(
      std::source_location where = std::source_location::current()) const;
  /// Sets the release threshold; UINT64_MAX keeps all memory (cuMemPoolSetAttribute).
  void set_release_threshold(std::uint64_t bytes,
                             std::source_location where = std::source_location::current()) const;
  /// Reserved and used memory, now and at the high-water marks (4 cuMemPoolGetAttribute).
  [[nodiscard]] pool_usage usage(
      std::source_location where = std::source_location::current()) const;
  /// Whether the pool follows a reuse policy (cuMemPoolGetAttribute).
  [[nodiscard]] bool reuse(pool_reuse policy,
                           std::source_location where = std::source_location::current()) const;
  /// Turns a reuse policy on or off (cuMemPoolSetAttribute).
  void set_reuse(pool_reuse policy, bool enabled,
                 std::source_location where = std::source_location::current()) const;
  /// Resets the high-water marks to the current values (cuMemPoolSetAttribute).
  void reset_high_watermarks(std::source_location where = std::source_location::current()) const;
  /// Lets `dev` access memory from this pool (cuMemPoolSetAccess).
  void allow_access(const device& dev, pool_access access = pool_access::read_write,
                    std::source_location where = std::source_location::current()) const;
  /// How `dev` may access this pool's memory (cuMemPoolGetAccess).
  [[nodiscard]] pool_access access(
      const device& dev, std::source_location where = std::source_location::current()) const;

  friend constexpr bool operator==(memory_pool_ref, memory_pool_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

/// Whether, and as what, a pool can be shared with other processes (CUmemPoolProps::handleTypes).
enum class pool_sharing {
  none = CU_MEM_HANDLE_TYPE_NONE,  ///< not shareable (the driver's default)
  /// Exportable as a POSIX file descriptor (export_pool in ipc.hpp).
  posix_fd = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
};

/// Options for a new pool.
struct memory_pool_options {
  std::size_t max_size = 0;  ///< the most the pool may reserve; 0: no limit
  /// Memory the pool keeps instead of releasing it at synchronization. The default keeps
  /// everything, so repeated allocations are fast; the driver's own default is 0.
  std::uint64_t release_threshold = UINT64_MAX;
  /// How other processes may share the pool (a real driver needs
  /// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED for posix_fd; device and
  /// host NUMA pools only: the driver refuses it for host and managed pools).
  pool_sharing sharing = pool_sharing::none;
};

namespace detail {
/// How a pool owner destroys its handle (cuMemPoolDestroy); see unique_handle. Beside the
/// handle it keeps how the pool can be shared (the driver has no query for it).
struct memory_pool_traits {
  using ref_type = memory_pool_ref;
  using state_type = pool_sharing;
  static constexpr CUmemoryPool empty_handle() noexcept { return nullptr; }
  static void destroy(CUmemoryPool handle) noexcept {
    check_nothrow(driver().cuMemPoolDestroy(handle), "cuMemPoolDestroy");
  }
};
}  // namespace detail

/// An owning memory pool of any location (cuMemPoolCreate, destroyed with cuMemPoolDestroy;
/// memory still allocated from it stays valid until freed). Move-only. A moved-from pool is
/// empty: its operations throw cuwrap::usage_error.
class memory_pool : public detail::unique_handle<detail::memory_pool_traits> {
 public:
  /// Creates a pool of `dev`'s memory, then sets its release threshold (two driver calls).
  explicit memory_pool(const device& dev, memory_pool_options options = {},
                       std::source_location where = std::source_location::current());
  /// Creates a pool of `location` (device, host, host NUMA node or managed memory), then sets
  /// its release threshold (two driver calls).
  explicit memory_pool(pool_location location, memory_pool_options options = {},
                       std::source_location where = std::source_location::current());

  /// The device's default pool, which cuMemAllocAsync uses (cuDeviceGetDefaultMemPool).
  [[nodiscard]] static memory_pool_ref default_pool(
      const device& dev, std::source_location where = std::source_location::current());
  /// Takes ownership of `handle` (a pool created with `sharing`, or imported): destroyed with
  /// cuMemPoolDestroy.
  [[nodiscard]] static memory_pool adopt(native_handle_type handle,
                                         pool_sharing sharing = pool_sharing::none) noexcept {
    return memory_pool{handle, sharing};
  }
  /// How the pool can be shared: what it was created with (posix_fd for an imported pool;
  /// none once moved from or released).
  [[nodiscard]] pool_sharing sharing() const noexcept { return state(); }

 private:
  memory_pool(native_handle_type handle, pool_sharing sharing) noexcept
      : unique_handle{handle, sharing} {}
};

/// The pool cuMemAllocAsync uses on `dev` now (cuDeviceGetMemPool).
[[nodiscard]] memory_pool_ref current_pool(
    const device& dev, std::source_location where = std::source_location::current());
/// Makes `pool`, a pool of `dev`'s memory, the one cuMemAllocAsync uses on `dev`
/// (cuDeviceSetMemPool). The pool must outlive its use: destroying it makes the default current.
void set_current_pool(const device& dev, memory_pool_ref pool,
                      std::source_location where = std::source_location::current());
/// The default pool of a location (cuMemGetDefaultMemPool, CUDA 13).
[[nodiscard]] memory_pool_ref default_pool(
    pool_location location, std::source_location where = std::source_location::current());
/// The current pool of a location (cuMemGetMemPool, CUDA 13).
[[nodiscard]] memory_pool_ref current_pool(
    pool_location location, std::source_location where = std::source_location::current());
/// Makes `pool`, a pool of that location and kind, the current pool of `location`
/// (cuMemSetMemPool, CUDA 13).
void set_current_pool(pool_location location, memory_pool_ref pool,
                      std::source_location where = std::source_location::current());

static_assert(!std::is_copy_constructible_v<memory_pool> &&
              std::is_nothrow_move_constructible_v<memory_pool> &&
              sizeof(memory_pool) == 2 * sizeof(CUmemoryPool));

}  // namespace cuwrap
