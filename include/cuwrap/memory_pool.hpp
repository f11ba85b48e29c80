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
  /// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED for posix_fd).
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

/// An owning memory pool on a device (cuMemPoolCreate, destroyed with cuMemPoolDestroy; memory
/// still allocated from it stays valid until freed). Move-only. A moved-from pool is empty: its
/// operations throw cuwrap::usage_error.
class memory_pool : public detail::unique_handle<detail::memory_pool_traits> {
 public:
  /// Creates a pool of `dev`'s memory, then sets its release threshold (two driver calls).
  explicit memory_pool(const device& dev, memory_pool_options options = {},
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

static_assert(!std::is_copy_constructible_v<memory_pool> &&
              std::is_nothrow_move_constructible_v<memory_pool> &&
              sizeof(memory_pool) == 2 * sizeof(CUmemoryPool));

}  // namespace cuwrap
