// Device memory owned by RAII buffers: cuMemAlloc'd, or stream-ordered (cuMemAllocAsync).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/owned_memory.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

namespace detail {
/// cuMemAlloc of `bytes` with `ctx` current; 0 bytes allocates nothing. Throws
/// cuwrap::out_of_memory naming the bytes and the device.
CUdeviceptr allocate_device(const owning_context& ctx, std::size_t bytes,
                            std::source_location where);
/// Throws the error of a failed allocation: the API, the bytes and the device.
[[noreturn]] void throw_allocation_error(CUresult result, const char* api, std::size_t bytes,
                                         CUdevice device, std::source_location where);
}  // namespace detail

/// `count` elements of T in device memory (cuMemAlloc, freed with cuMemFree). Move-only; keeps
/// its context alive. Zero elements allocate nothing. A moved-from (or released) buffer owns
/// nothing: data(), span() and address() throw cuwrap::usage_error instead of giving nullptr.
template <class T>
class device_buffer
    : public detail::owned_memory<T, detail::free_device_memory<detail::device_buffer_name>> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_device_memory<detail::device_buffer_name>>;

 public:
  /// Allocates `count` elements in `ctx` (made current for the call only if it is not).
  /// Throws cuwrap::out_of_memory naming the bytes and the device.
  device_buffer(const owning_context& ctx, std::size_t count,
                std::source_location where = std::source_location::current())
      : base{
            reinterpret_cast<T*>(detail::allocate_device(ctx, count * sizeof(T), where)),  // NOLINT
            count, ctx.lifetime()} {}
  /// Takes ownership of `memory`, which cuMemAlloc returned in `ctx`. Throws
  /// cuwrap::usage_error (and takes nothing) if `ctx` was moved from.
  [[nodiscard]] static device_buffer adopt(
      const owning_context& ctx, device_span<T> memory,
      std::source_location where = std::source_location::current()) {
    return device_buffer{memory, ctx.lifetime_for("device_buffer", "adopt", where)};
  }

  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address(
      std::source_location where = std::source_location::current()) const {
    return span(where).address();
  }
  /// A view of the whole buffer.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// The same views; a conversion takes no call site, so a moved-from buffer's usage_error
  /// has where().line() == 0 (span() names the caller's line).
  operator device_span<T>() const { return span({}); }
  operator device_span<const T>() const { return span({}); }

  /// Gives up ownership: the caller must cuMemFree the returned memory.
  [[nodiscard]] device_span<T> release() noexcept {
    const auto [data, size] = this->release_memory();
    return {data, size};
  }

 private:
  device_buffer(device_span<T> memory, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : base{memory.data(), memory.size(), std::move(ctx)} {}
};

static_assert(!std::is_copy_constructible_v<device_buffer<int>> &&
              std::is_nothrow_move_constructible_v<device_buffer<int>>);

namespace detail {
/// cuMemFreeAsync on the allocating stream; cuMemFree if that stream is gone.
struct free_stream_ordered {
  static constexpr const char* name = "stream_ordered_buffer";
  CUstream stream{};
  void release(const void* p) const noexcept {
    const auto address = reinterpret_cast<CUdeviceptr>(p);  // NOLINT: device address
    const CUresult r = driver().cuMemFreeAsync(address, stream);
    if (r == CUDA_ERROR_INVALID_HANDLE) [[unlikely]] {  // the stream is gone
      check_nothrow(driver().cuMemFree(address), "cuMemFree");
    } else {
      check_nothrow(r, "cuMemFreeAsync");
    }
  }
};
}  // namespace detail

/// `count` elements of T allocated in stream order (cuMemAllocAsync or
/// cuMemAllocFromPoolAsync: usable by work queued on the stream after the allocation) and
/// freed in the same stream's order when destroyed (cuMemFreeAsync). One driver call each way.
/// The stream should outlive the buffer; if it is gone the memory is freed with cuMemFree.
/// A moved-from buffer owns nothing: data(), span() and address() throw cuwrap::usage_error.
template <class T>
class stream_ordered_buffer : public detail::owned_memory<T, detail::free_stream_ordered> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_stream_ordered>;

 public:
  /// Allocates `count` elements on `s` from the device's current pool (cuMemAllocAsync).
  /// Throws cuwrap::usage_error if `s` was moved from.
  stream_ordered_buffer(const cuwrap::stream& s, std::size_t count,
                        std::source_location where = std::source_location::current())
      : base{allocate(s, count, where), count,
             s.context_lifetime("stream_ordered_buffer", "stream_ordered_buffer", where),
             detail::free_stream_ordered{s.get()}} {}
  /// Takes ownership of memory allocated in stream order on `s` (what memory_pool uses).
  /// Throws cuwrap::usage_error (and takes nothing) if `s` was moved from.
  [[nodiscard]] static stream_ordered_buffer adopt(
      const cuwrap::stream& s, device_span<T> memory,
      std::source_location where = std::source_location::current()) {
    return stream_ordered_buffer{memory, s.get(),
                                 s.context_lifetime("stream_ordered_buffer", "adopt", where)};
  }

  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address(
      std::source_location where = std::source_location::current()) const {
    return span(where).address();
  }
  /// The stream the memory is ordered on.
  [[nodiscard]] stream_ref stream(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "stream_ordered_buffer", "stream", where);
    return stream_ref{this->freer().stream};
  }
  /// A view of the whole buffer.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// The same views (no call site in a moved-from buffer's usage_error, as for device_buffer).
  operator device_span<T>() const { return span({}); }
  operator device_span<const T>() const { return span({}); }

 private:
  stream_ordered_buffer(device_span<T> memory, CUstream s,
                        std::shared_ptr<const detail::context_owner> ctx) noexcept
      : base{memory.data(), memory.size(), std::move(ctx), detail::free_stream_ordered{s}} {}

  static T* allocate(const cuwrap::stream& s, std::size_t count, std::source_location where) {
    detail::expect_argument_not_moved_from(!s.empty(), "stream_ordered_buffer",
                                           "stream_ordered_buffer", "stream", where);
    CUdeviceptr address{};
    const CUresult r = detail::driver().cuMemAllocAsync(&address, count * sizeof(T), s.get());
    if (r != CUDA_SUCCESS) [[unlikely]] {
      const auto& owner = s.context_lifetime();
      detail::throw_allocation_error(r, "cuMemAllocAsync", count * sizeof(T),
                                     owner ? owner->device : CUdevice{}, where);
    }
    return reinterpret_cast<T*>(address);  // NOLINT: device addresses are integers
  }
};

static_assert(!std::is_copy_constructible_v<stream_ordered_buffer<int>> &&
              std::is_nothrow_move_constructible_v<stream_ordered_buffer<int>>);

}  // namespace cuwrap
