// Memory pools for stream-ordered allocation (cuMemPool*).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/detail/driver.hpp"
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

/// A non-owning view of a memory pool.
class memory_pool_ref {
 public:
  using native_handle_type = CUmemoryPool;

  /// Views `handle` (not owned).
  constexpr memory_pool_ref(native_handle_type handle) noexcept : handle_{handle} {}
  memory_pool_ref(std::nullptr_t) = delete;

  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }

  /// Allocates `count` elements on `s` from this pool (cuMemAllocFromPoolAsync; one call).
  template <class T>
  [[nodiscard]] stream_ordered_buffer<T> allocate(
      const stream& s, std::size_t count,
      std::source_location where = std::source_location::current()) const {
    const CUdeviceptr address = detail::pool_allocate(handle_, count * sizeof(T), s, where);
    return stream_ordered_buffer<T>::adopt(s, device_span<T>::from_address(address, count));
  }

  /// Releases unused memory until the pool holds at most `keep_bytes` (cuMemPoolTrimTo).
  void trim(std::size_t keep_bytes) const;
  /// Memory the pool keeps when it could release it (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD).
  [[nodiscard]] std::uint64_t release_threshold() const;
  /// Sets the release threshold; UINT64_MAX keeps all memory (cuMemPoolSetAttribute).
  void set_release_threshold(std::uint64_t bytes) const;
  /// Reserved and used memory, now and at the high-water marks (4 cuMemPoolGetAttribute).
  [[nodiscard]] pool_usage usage() const;
  /// Resets the high-water marks to the current values (cuMemPoolSetAttribute).
  void reset_high_watermarks() const;
  /// Lets `dev` access memory from this pool (cuMemPoolSetAccess).
  void allow_access(const device& dev, pool_access access = pool_access::read_write) const;
  /// How `dev` may access this pool's memory (cuMemPoolGetAccess).
  [[nodiscard]] pool_access access(const device& dev) const;

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

/// An owning memory pool on a device (cuMemPoolCreate, destroyed with cuMemPoolDestroy; memory
/// still allocated from it stays valid until freed). Move-only.
class memory_pool : public memory_pool_ref {
 public:
  /// Creates a pool of `dev`'s memory, then sets its release threshold (two driver calls).
  explicit memory_pool(const device& dev, memory_pool_options options = {},
                       std::source_location where = std::source_location::current());
  memory_pool(memory_pool&& other) noexcept
      : memory_pool_ref{std::exchange(other.handle_, CUmemoryPool{})},
        sharing_{std::exchange(other.sharing_, pool_sharing::none)} {}
  memory_pool& operator=(memory_pool&& other) noexcept {
    if (this != &other) {
      memory_pool old{std::move(*this)};
      handle_ = std::exchange(other.handle_, CUmemoryPool{});
      sharing_ = std::exchange(other.sharing_, pool_sharing::none);
    }
    return *this;
  }
  ~memory_pool() {
    if (handle_ != nullptr) {
      check_nothrow(detail::driver().cuMemPoolDestroy(handle_), "cuMemPoolDestroy");
    }
  }

  /// The device's default pool, which cuMemAllocAsync uses (cuDeviceGetDefaultMemPool).
  [[nodiscard]] static memory_pool_ref default_pool(const device& dev);
  /// Takes ownership of `handle` (a pool created with `sharing`, or imported): destroyed with
  /// cuMemPoolDestroy.
  [[nodiscard]] static memory_pool adopt(native_handle_type handle,
                                         pool_sharing sharing = pool_sharing::none) noexcept {
    return memory_pool{handle, sharing};
  }
  /// How the pool can be shared: what it was created with (posix_fd for an imported pool).
  [[nodiscard]] pool_sharing sharing() const noexcept { return sharing_; }
  /// Gives up ownership: the caller must destroy the returned handle.
  [[nodiscard]] native_handle_type release() noexcept {
    sharing_ = pool_sharing::none;
    return std::exchange(handle_, CUmemoryPool{});
  }

 private:
  memory_pool(native_handle_type handle, pool_sharing sharing) noexcept
      : memory_pool_ref{handle}, sharing_{sharing} {}

  pool_sharing sharing_ = pool_sharing::none;  // known here: the driver has no query for it
};

static_assert(!std::is_copy_constructible_v<memory_pool> &&
              std::is_nothrow_move_constructible_v<memory_pool> &&
              sizeof(memory_pool) == 2 * sizeof(CUmemoryPool));

}  // namespace cuwrap
