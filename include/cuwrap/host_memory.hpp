// Page-locked host memory: pinned buffers (cuMemHostAlloc) and registrations of existing
// host ranges (cuMemHostRegister).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/owned_memory.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/flags.hpp"

namespace cuwrap {

/// How pinned memory is allocated (CU_MEMHOSTALLOC_*). Combine with |.
enum class pinned_flags : unsigned {
  none = 0,
  portable = CU_MEMHOSTALLOC_PORTABLE,             ///< pinned for every context, not just this one
  device_mapped = CU_MEMHOSTALLOC_DEVICEMAP,       ///< also mapped into the device's address space
  write_combined = CU_MEMHOSTALLOC_WRITECOMBINED,  ///< fast host writes and transfers, slow reads
};
/// pinned_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<pinned_flags> = true;

/// How an existing host range is registered (CU_MEMHOSTREGISTER_*). Combine with |.
enum class registration_flags : unsigned {
  none = 0,
  portable = CU_MEMHOSTREGISTER_PORTABLE,        ///< pinned for every context
  device_mapped = CU_MEMHOSTREGISTER_DEVICEMAP,  ///< also mapped into the device's address space
  read_only = CU_MEMHOSTREGISTER_READ_ONLY,      ///< the device only reads it
};
/// registration_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<registration_flags> = true;

namespace detail {
/// cuMemHostAlloc of `bytes` with `ctx` current; 0 bytes allocates nothing.
void* allocate_pinned(const owning_context& ctx, std::size_t bytes, unsigned flags,
                      std::source_location where);
/// The device address of mapped pinned memory (cuMemHostGetDevicePointer).
CUdeviceptr mapped_device_address(const void* host, std::source_location where);
}  // namespace detail

/// `count` elements of T in page-locked host memory (cuMemHostAlloc, freed with
/// cuMemFreeHost): host-accessible, and the fast path for asynchronous copies. A contiguous
/// range (data/size/begin/end/operator[]), so it passes to copy() as host memory. Move-only;
/// keeps its context alive. It passes directly as a kernel argument for a pointer parameter
/// (its host pointer is its device address under unified addressing), unless write-combined.
/// A moved-from buffer owns nothing: every operation (data(), host access, device()) throws
/// cuwrap::usage_error.
template <class T>
class pinned_buffer : public detail::owned_memory<T, detail::free_pinned_memory> {
  static_assert(std::is_trivially_copyable_v<T>, "pinned memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_pinned_memory>;

 public:
  using value_type = T;

  /// Allocates `count` elements with `flags`, in `ctx` (made current for the call only if it
  /// is not). Throws cuwrap::out_of_memory naming the bytes. The memory is not initialized.
  pinned_buffer(const owning_context& ctx, std::size_t count,
                pinned_flags flags = pinned_flags::none,
                std::source_location where = std::source_location::current())
      : base{static_cast<T*>(detail::allocate_pinned(ctx, count * sizeof(T),
                                                     static_cast<unsigned>(flags), where)),
             count, ctx.lifetime()},
        flags_{flags} {}

  /// The flags the memory was allocated with.
  [[nodiscard]] pinned_flags flags() const noexcept { return flags_; }
  /// True unless the memory is write-combined: under unified addressing, pinned memory is
  /// reached from kernels through its host pointer, write-combined memory through device()
  /// (the driver API's "disjoint addressing" exceptions).
  [[nodiscard]] bool host_address_is_device_address() const noexcept {
    return !has(flags_, pinned_flags::write_combined);
  }

  /// Element `i` (host access). (An operator takes no call site: a moved-from buffer's
  /// usage_error has where().line() == 0.)
  [[nodiscard]] T& operator[](std::size_t i) const { return this->data({})[i]; }
  /// The first element (range-for and algorithms).
  [[nodiscard]] T* begin(std::source_location where = std::source_location::current()) const {
    return this->data(where);
  }
  /// One past the last element.
  [[nodiscard]] T* end(std::source_location where = std::source_location::current()) const {
    return this->data(where) + this->size();
  }
  /// The memory as a host span.
  [[nodiscard]] std::span<T> host(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// For memory allocated with pinned_flags::device_mapped: the same memory as a device span
  /// (cuMemHostGetDevicePointer).
  [[nodiscard]] device_span<T> device(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "pinned_buffer", "device", where);
    return device_span<T>::from_address(detail::mapped_device_address(this->data(where), where),
                                        this->size());
  }

 private:
  pinned_flags flags_;
};

static_assert(!std::is_copy_constructible_v<pinned_buffer<int>> &&
              std::is_nothrow_move_constructible_v<pinned_buffer<int>>);

/// Page-locks an existing host range (for example a std::vector's storage) for this object's
/// life (cuMemHostRegister, undone with cuMemHostUnregister). The range must outlive it.
/// Move-only. A moved-from registration owns nothing: data() and device_address() throw
/// cuwrap::usage_error.
class host_registration : private detail::owned_memory<std::byte, detail::unregister_host_memory> {
  using base = detail::owned_memory<std::byte, detail::unregister_host_memory>;

 public:
  /// Registers the bytes of `range` in `ctx` (made current for the call only if it is not).
  template <class T, std::size_t Extent>
  host_registration(const owning_context& ctx, std::span<T, Extent> range,
                    registration_flags flags = registration_flags::none,
                    std::source_location where = std::source_location::current())
      : host_registration{ctx, const_cast<std::remove_const_t<T>*>(range.data()),
                          range.size_bytes(), flags, where} {}
  /// Registers `bytes` bytes at `data` in `ctx`.
  host_registration(const owning_context& ctx, void* data, std::size_t bytes,
                    registration_flags flags = registration_flags::none,
                    std::source_location where = std::source_location::current());

  /// The registered range's start. Throws cuwrap::usage_error at `where` if moved from.
  [[nodiscard]] void* data(std::source_location where = std::source_location::current()) const {
    return base::data(where);
  }
  /// The registered range's size in bytes (0 once moved from).
  [[nodiscard]] std::size_t size_bytes() const noexcept { return base::size(); }
  using base::moved_from;
  /// For a registration with registration_flags::device_mapped: the device address of the
  /// range (cuMemHostGetDevicePointer).
  [[nodiscard]] CUdeviceptr device_address(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!moved_from(), "host_registration", "device_address", where);
    return detail::mapped_device_address(base::data(where), where);
  }

 private:
  static std::byte* register_range(const owning_context& ctx, void* data, std::size_t bytes,
                                   registration_flags flags, std::source_location where);
};

static_assert(!std::is_copy_constructible_v<host_registration> &&
              std::is_nothrow_move_constructible_v<host_registration>);

}  // namespace cuwrap
