// External memory and semaphores: memory and synchronization objects another API (Vulkan, a
// file) exported as POSIX file descriptors, imported into CUDA (cuImportExternalMemory,
// cuImportExternalSemaphore). See docs/external-memory.md.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <utility>

#include "cuwrap/array.hpp"
#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/device_buffer.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

namespace detail {
/// Checks `offset` and `bytes` against an imported object of `size` bytes and maps them
/// (cuExternalMemoryGetMappedBuffer, with `ctx` made current for the call if it is not); the
/// caller owns the returned memory (cuMemFree).
[[nodiscard]] CUdeviceptr map_external_buffer(CUcontext ctx, CUexternalMemory memory,
                                              std::size_t size, std::size_t offset,
                                              std::size_t bytes, std::size_t alignment,
                                              std::source_location where);

/// Maps a mipmapped array of `levels` levels described by `desc` whose level 0 starts `offset`
/// bytes into an imported object of `size` bytes (cuExternalMemoryGetMappedMipmappedArray, with
/// `ctx` made current for the call if it is not); the caller owns the returned array
/// (cuMipmappedArrayDestroy).
[[nodiscard]] CUmipmappedArray map_external_mipmapped_array(CUcontext ctx, CUexternalMemory memory,
                                                            std::size_t size, std::size_t offset,
                                                            const array_descriptor& desc,
                                                            unsigned levels,
                                                            std::source_location where);

/// An owning_context made from a lifetime token, for adopting memory in the context an
/// imported object keeps alive.
class context_of_lifetime : public owning_context {
 public:
  explicit context_of_lifetime(std::shared_ptr<const context_owner> owner) noexcept
      : owning_context{std::move(owner)} {}
};

/// What an external_memory keeps beside its handle.
struct external_memory_state {
  std::shared_ptr<const context_owner> ctx;  ///< the context of the import
  std::size_t size = 0;                      ///< the imported size in bytes
};

struct external_memory_traits {
  using ref_type = handle_view<CUexternalMemory>;
  using state_type = external_memory_state;
  static constexpr CUexternalMemory empty_handle() noexcept { return nullptr; }
  static void destroy(CUexternalMemory handle) noexcept {
    check_nothrow(driver().cuDestroyExternalMemory(handle), "cuDestroyExternalMemory");
  }
};

struct external_semaphore_traits;
}  // namespace detail

/// Memory another API exported as a file descriptor, imported into a context
/// (cuImportExternalMemory with CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD). Destroyed with
/// cuDestroyExternalMemory; move-only; keeps its context alive. Buffers mapped from it
/// (mapped_buffer()) are independent device allocations that outlive it, as cuda.h says.
/// A moved-from object is empty: its operations throw cuwrap::usage_error.
class external_memory : public detail::unique_handle<detail::external_memory_traits> {
 public:
  /// Imports `bytes` of the object behind `fd` into `ctx` (made current for the call if it is
  /// not); `dedicated` sets CUDA_EXTERNAL_MEMORY_DEDICATED (Vulkan's dedicated allocations). On
  /// success the driver owns `fd` (cuda.h: "Ownership of the file descriptor is transferred
  /// to the CUDA driver"): do not use or close it; on failure it is still the caller's.
  /// Throws cuwrap::error naming the descriptor and the size; a negative `fd` or zero `bytes`
  /// throws before the driver is called.
  [[nodiscard]] static external_memory import_fd(
      const owning_context& ctx, int fd, std::size_t bytes, bool dedicated = false,
      std::source_location where = std::source_location::current());

  /// The imported size in bytes (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return state().size; }

  /// Maps `count` elements of T starting `offset` bytes into the object as device memory
  /// (cuExternalMemoryGetMappedBuffer): a device_buffer that kernels, copies and pointer
  /// queries use like cuMemAlloc memory, freed with cuMemFree when it goes. It keeps the
  /// context alive and stays valid after this object is destroyed. The range must lie inside
  /// size() and `offset` be aligned to alignof(T); both are checked before the driver call.
  template <class T = std::byte>
  [[nodiscard]] device_buffer<T> mapped_buffer(
      std::size_t offset, std::size_t count,
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "external_memory", "mapped_buffer", where);
    const CUdeviceptr p = detail::map_external_buffer(state().ctx->handle, handle_, state().size,
                                                      offset, count * sizeof(T), alignof(T), where);
    return device_buffer<T>::adopt(detail::context_of_lifetime{state().ctx},
                                   device_span<T>{reinterpret_cast<T*>(p), count},  // NOLINT
                                   where);
  }

  /// Maps a mipmapped array of elements of `Channels` channels of T, `levels` levels (at least
  /// 1; clamped as cuMipmappedArrayCreate clamps them) of `extent` and `flags`, whose level 0
  /// starts `offset` bytes into the object (cuExternalMemoryGetMappedMipmappedArray). The
  /// result owns the array (destroyed with cuMipmappedArrayDestroy, as cuda.h requires), keeps
  /// the context alive and stays valid after this object is destroyed; its levels read and
  /// write the imported memory. `offset` inside size() and `levels` are checked before the
  /// driver call; the driver checks the descriptor and that the levels fit.
  template <class T, unsigned Channels = 1>
  [[nodiscard]] mipmapped_array<T, Channels> mapped_mipmapped_array(
      std::size_t offset, array_extent extent, unsigned levels,
      array_flags flags = array_flags::none,
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "external_memory", "mapped_mipmapped_array", where);
    const CUmipmappedArray h = detail::map_external_mipmapped_array(
        state().ctx->handle, handle_, state().size, offset,
        {texel_format<T>::format, Channels, extent, flags}, levels, where);
    return mipmapped_array<T, Channels>::adopt(detail::context_of_lifetime{state().ctx}, h, extent,
                                               detail::clamp_levels(extent, flags, levels), flags);
  }

 private:
  external_memory(CUexternalMemory handle, detail::external_memory_state state) noexcept
      : unique_handle{detail::handle_view<CUexternalMemory>{handle}, std::move(state)} {}
};

/// The kinds of semaphore a file descriptor can carry (CUexternalSemaphoreHandleType).
enum class external_semaphore_kind : int {
  /// A binary semaphore (Vulkan VkSemaphore exported as OPAQUE_FD): a signal sets it, a wait
  /// waits until it is set and consumes it.
  binary = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD,
  /// A timeline semaphore (TIMELINE_SEMAPHORE_FD): a 64-bit value; a signal sets it, a wait
  /// waits until it is at least the value waited for.
  timeline = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
};

namespace detail {
/// What an external_semaphore keeps beside its handle.
struct external_semaphore_state {
  std::shared_ptr<const context_owner> ctx;  ///< the context of the import
  external_semaphore_kind kind = external_semaphore_kind::binary;
};

struct external_semaphore_traits {
  using ref_type = handle_view<CUexternalSemaphore>;
  using state_type = external_semaphore_state;
  static constexpr CUexternalSemaphore empty_handle() noexcept { return nullptr; }
  static void destroy(CUexternalSemaphore handle) noexcept {
    check_nothrow(driver().cuDestroyExternalSemaphore(handle), "cuDestroyExternalSemaphore");
  }
};
}  // namespace detail

/// A semaphore another API exported as a file descriptor, imported into a context
/// (cuImportExternalSemaphore). Destroyed with cuDestroyExternalSemaphore; move-only; keeps
/// its context alive. A moved-from semaphore is empty: its operations throw
/// cuwrap::usage_error.
class external_semaphore : public detail::unique_handle<detail::external_semaphore_traits> {
 public:
  /// Imports the semaphore behind `fd` into `ctx`. On success the driver owns `fd` (do not
  /// use or close it); on failure it is still the caller's. Throws cuwrap::error naming the
  /// descriptor and the kind.
  [[nodiscard]] static external_semaphore import_fd(
      const owning_context& ctx, int fd, external_semaphore_kind kind,
      std::source_location where = std::source_location::current());

  /// The kind imported.
  [[nodiscard]] external_semaphore_kind kind() const noexcept { return state().kind; }

  /// Signals it when `s` reaches this point (cuSignalExternalSemaphoresAsync): a timeline
  /// semaphore takes `value`, a binary one is set (`value` must be 0).
  void signal(stream_ref s, std::uint64_t value = 0,
              std::source_location where = std::source_location::current()) const;
  /// Makes `s` wait until it is signaled (cuWaitExternalSemaphoresAsync): a timeline
  /// semaphore until its value is at least `value`, a binary one until it is set (`value` must
  /// be 0).
  void wait(stream_ref s, std::uint64_t value = 0,
            std::source_location where = std::source_location::current()) const;

 private:
  external_semaphore(CUexternalSemaphore handle, detail::external_semaphore_state state) noexcept
      : unique_handle{detail::handle_view<CUexternalSemaphore>{handle}, std::move(state)} {}
};

/// One semaphore of a batch and the value to signal or wait for (0 for a binary semaphore).
struct semaphore_value {
  const external_semaphore& semaphore;  ///< the semaphore
  std::uint64_t value = 0;              ///< a timeline value; 0 for a binary semaphore
};

/// Signals every semaphore of `batch` when `s` reaches this point: one
/// cuSignalExternalSemaphoresAsync. Each is checked (not moved from, binary with value 0)
/// before the driver is called.
void signal(stream_ref s, std::span<const semaphore_value> batch,
            std::source_location where = std::source_location::current());
/// Makes `s` wait for every semaphore of `batch`: one cuWaitExternalSemaphoresAsync.
void wait(stream_ref s, std::span<const semaphore_value> batch,
          std::source_location where = std::source_location::current());

}  // namespace cuwrap
