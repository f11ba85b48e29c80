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
/// its context alive. Zero elements allocate nothing.
template <class T>
class device_buffer : public detail::owned_memory<T, detail::free_device_memory> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_device_memory>;

 public:
  /// Allocates `count` elements in `ctx` (made current for the call only if it is not).
  /// Throws cuwrap::out_of_memory naming the bytes and the device.
  device_buffer(const owning_context& ctx, std::size_t count,
                std::source_location where = std::source_location::current())
      : base{
            reinterpret_cast<T*>(detail::allocate_device(ctx, count * sizeof(T), where)),  // NOLINT
            count, ctx.lifetime()} {}
  /// Takes ownership of `memory`, which cuMemAlloc returned in `ctx`.
  [[nodiscard]] static device_buffer adopt(const owning_context& ctx,
                                           device_span<T> memory) noexcept {
    return device_buffer{memory, ctx.lifetime()};
  }

  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address() const noexcept { return span().address(); }
  /// A view of the whole buffer.
  [[nodiscard]] device_span<T> span() const noexcept { return {this->data(), this->size()}; }
  operator device_span<T>() const noexcept { return span(); }
  operator device_span<const T>() const noexcept { return span(); }

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

/// `count` elements of T allocated in stream order (cuMemAllocAsync or
/// cuMemAllocFromPoolAsync: usable by work queued on the stream after the allocation) and
/// freed in the same stream's order when destroyed (cuMemFreeAsync). One driver call each way.
/// The stream should outlive the buffer; if it is gone the memory is freed with cuMemFree.
template <class T>
class stream_ordered_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");

 public:
  /// Allocates `count` elements on `s` from the device's current pool (cuMemAllocAsync).
  stream_ordered_buffer(const cuwrap::stream& s, std::size_t count,
                        std::source_location where = std::source_location::current())
      : data_{nullptr}, size_{count}, stream_{s.get()}, context_{s.context_lifetime()} {
    CUdeviceptr address{};
    const CUresult r = detail::driver().cuMemAllocAsync(&address, count * sizeof(T), s.get());
    if (r != CUDA_SUCCESS) [[unlikely]] {
      detail::throw_allocation_error(r, "cuMemAllocAsync", count * sizeof(T),
                                     context_ ? context_->device : CUdevice{}, where);
    }
    data_ = reinterpret_cast<T*>(address);  // NOLINT: device addresses are integers
  }
  /// Takes ownership of memory allocated in stream order on `s` (what memory_pool uses).
  [[nodiscard]] static stream_ordered_buffer adopt(const cuwrap::stream& s,
                                                   device_span<T> memory) noexcept {
    return stream_ordered_buffer{memory, s.get(), s.context_lifetime()};
  }
  stream_ordered_buffer(stream_ordered_buffer&& other) noexcept
      : data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)},
        stream_{other.stream_},
        context_{std::move(other.context_)} {}
  stream_ordered_buffer& operator=(stream_ordered_buffer&& other) noexcept {
    if (this != &other) {
      stream_ordered_buffer old{std::move(*this)};  // frees the previous memory
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
      context_ = std::move(other.context_);
    }
    return *this;
  }
  ~stream_ordered_buffer() {
    if (data_ != nullptr) {
      const CUresult r = detail::driver().cuMemFreeAsync(address(), stream_);
      if (r == CUDA_ERROR_INVALID_HANDLE) [[unlikely]] {  // the stream is gone
        check_nothrow(detail::driver().cuMemFree(address()), "cuMemFree");
      } else {
        check_nothrow(r, "cuMemFreeAsync");
      }
    }
  }

  /// The device pointer.
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address() const noexcept { return span().address(); }
  /// The number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The number of bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// The stream the memory is ordered on.
  [[nodiscard]] stream_ref stream() const noexcept { return stream_ref{stream_}; }
  /// A view of the whole buffer.
  [[nodiscard]] device_span<T> span() const noexcept { return {data_, size_}; }
  operator device_span<T>() const noexcept { return span(); }
  operator device_span<const T>() const noexcept { return span(); }

 private:
  stream_ordered_buffer(device_span<T> memory, CUstream s,
                        std::shared_ptr<const detail::context_owner> ctx) noexcept
      : data_{memory.data()}, size_{memory.size()}, stream_{s}, context_{std::move(ctx)} {}

  T* data_;
  std::size_t size_;
  CUstream stream_;
  std::shared_ptr<const detail::context_owner> context_;
};

static_assert(!std::is_copy_constructible_v<stream_ordered_buffer<int>> &&
              std::is_nothrow_move_constructible_v<stream_ordered_buffer<int>>);

}  // namespace cuwrap
