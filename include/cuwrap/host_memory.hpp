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

namespace cuwrap {

/// How pinned memory is allocated (CU_MEMHOSTALLOC_*). Combine with |.
enum class pinned_flags : unsigned {
  none = 0,
  portable = CU_MEMHOSTALLOC_PORTABLE,             ///< pinned for every context, not just this one
  device_mapped = CU_MEMHOSTALLOC_DEVICEMAP,       ///< also mapped into the device's address space
  write_combined = CU_MEMHOSTALLOC_WRITECOMBINED,  ///< fast host writes and transfers, slow reads
};
/// Combines pinned flags.
[[nodiscard]] constexpr pinned_flags operator|(pinned_flags a, pinned_flags b) noexcept {
  return static_cast<pinned_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

/// How an existing host range is registered (CU_MEMHOSTREGISTER_*). Combine with |.
enum class registration_flags : unsigned {
  none = 0,
  portable = CU_MEMHOSTREGISTER_PORTABLE,        ///< pinned for every context
  device_mapped = CU_MEMHOSTREGISTER_DEVICEMAP,  ///< also mapped into the device's address space
  read_only = CU_MEMHOSTREGISTER_READ_ONLY,      ///< the device only reads it
};
/// Combines registration flags.
[[nodiscard]] constexpr registration_flags operator|(registration_flags a,
                                                     registration_flags b) noexcept {
  return static_cast<registration_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

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
/// keeps its context alive.
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
             count, ctx.lifetime()} {}

  /// Element `i` (host access).
  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return this->data()[i]; }
  [[nodiscard]] T* begin() const noexcept { return this->data(); }
  [[nodiscard]] T* end() const noexcept { return this->data() + this->size(); }
  /// The memory as a host span.
  [[nodiscard]] std::span<T> host() const noexcept { return {this->data(), this->size()}; }
  /// For memory allocated with pinned_flags::device_mapped: the same memory as a device span
  /// (cuMemHostGetDevicePointer).
  [[nodiscard]] device_span<T> device(
      std::source_location where = std::source_location::current()) const {
    return device_span<T>::from_address(detail::mapped_device_address(this->data(), where),
                                        this->size());
  }
};

static_assert(!std::is_copy_constructible_v<pinned_buffer<int>> &&
              std::is_nothrow_move_constructible_v<pinned_buffer<int>>);

/// Page-locks an existing host range (for example a std::vector's storage) for this object's
/// life (cuMemHostRegister, undone with cuMemHostUnregister). The range must outlive it.
class host_registration {
 public:
  /// Registers the bytes of `range` in `ctx` (made current for the call only if it is not).
  template <class T, std::size_t Extent>
  host_registration(const owning_context& ctx, std::span<T, Extent> range,
                    registration_flags flags = registration_flags::none,
                    std::source_location where = std::source_location::current())
      : host_registration{ctx, const_cast<std::remove_const_t<T>*>(range.data()),
                          range.size_bytes(), flags, where} {}
  host_registration(const owning_context& ctx, void* data, std::size_t bytes,
                    registration_flags flags = registration_flags::none,
                    std::source_location where = std::source_location::current());
  host_registration(host_registration&& other) noexcept
      : data_{std::exchange(other.data_, nullptr)},
        bytes_{std::exchange(other.bytes_, 0)},
        context_{std::move(other.context_)} {}
  host_registration& operator=(host_registration&& other) noexcept {
    if (this != &other) {
      host_registration old{std::move(*this)};
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      context_ = std::move(other.context_);
    }
    return *this;
  }
  ~host_registration() {
    if (data_ != nullptr) {
      check_nothrow(detail::driver().cuMemHostUnregister(data_), "cuMemHostUnregister");
    }
  }

  /// The registered range's start.
  [[nodiscard]] void* data() const noexcept { return data_; }
  /// The registered range's size in bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_; }
  /// For a registration with registration_flags::device_mapped: the device address of the
  /// range (cuMemHostGetDevicePointer).
  [[nodiscard]] CUdeviceptr device_address(
      std::source_location where = std::source_location::current()) const {
    return detail::mapped_device_address(data_, where);
  }

 private:
  void* data_;
  std::size_t bytes_;
  std::shared_ptr<const detail::context_owner> context_;
};

static_assert(!std::is_copy_constructible_v<host_registration> &&
              std::is_nothrow_move_constructible_v<host_registration>);

}  // namespace cuwrap
