// device_span<T>: a non-owning pointer and count into device memory.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <source_location>
#include <span>
#include <type_traits>

#include "cuwrap/error.hpp"

namespace cuwrap {

/// A view of `size()` elements of type T in device memory. Like std::span, but never
/// dereferenceable on the host: it has no operator[] and no iterators. Pass it to copies,
/// fills and kernels.
template <class T>
class device_span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;

  /// An empty span.
  constexpr device_span() noexcept = default;
  /// `count` elements at device address `data`.
  constexpr device_span(T* data, std::size_t count) noexcept : data_{data}, size_{count} {}
  /// A span over `count` elements at the driver address `address`.
  [[nodiscard]] static device_span from_address(CUdeviceptr address, std::size_t count) noexcept {
    return {reinterpret_cast<T*>(address), count};  // NOLINT: device addresses are integers
  }
  /// device_span<T> converts to device_span<const T>.
  template <class U>
  requires std::is_convertible_v<U (*)[], T (*)[]>
  constexpr device_span(device_span<U> other) noexcept : data_{other.data()}, size_{other.size()} {}

  /// The device pointer (for kernel arguments). Not dereferenceable on the host.
  [[nodiscard]] constexpr T* data() const noexcept { return data_; }
  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address() const noexcept {
    return reinterpret_cast<CUdeviceptr>(data_);  // NOLINT: the driver's address type
  }
  /// The number of elements.
  [[nodiscard]] constexpr std::size_t size() const noexcept { return size_; }
  /// The number of bytes.
  [[nodiscard]] constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// True if there are no elements.
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }

  /// Elements [offset, offset + count); `count` defaults to the rest. A range past the end
  /// throws cuwrap::usage_error naming the offset, the count, the size and `where`.
  [[nodiscard]] constexpr device_span subspan(
      std::size_t offset, std::size_t count = std::dynamic_extent,
      std::source_location where = std::source_location::current()) const {
    if (offset > size_) [[unlikely]] {
      detail::throw_out_of_span("subspan", offset, count, size_, where);
    }
    if (count == std::dynamic_extent) {
      count = size_ - offset;
    }
    if (count > size_ - offset) [[unlikely]] {
      detail::throw_out_of_span("subspan", offset, count, size_, where);
    }
    return {data_ + offset, count};
  }
  /// The first `count` elements (usage_error if there are fewer).
  [[nodiscard]] constexpr device_span first(
      std::size_t count, std::source_location where = std::source_location::current()) const {
    if (count > size_) [[unlikely]] {
      detail::throw_out_of_span("first", 0, count, size_, where);
    }
    return {data_, count};
  }
  /// The last `count` elements (usage_error if there are fewer).
  [[nodiscard]] constexpr device_span last(
      std::size_t count, std::source_location where = std::source_location::current()) const {
    if (count > size_) [[unlikely]] {
      detail::throw_out_of_span("last", size_ - std::min(count, size_), count, size_, where);
    }
    return {data_ + (size_ - count), count};
  }

  friend constexpr bool operator==(device_span a, device_span b) noexcept {
    return a.data_ == b.data_ && a.size_ == b.size_;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

static_assert(sizeof(device_span<float>) == 2 * sizeof(void*));
static_assert(std::is_trivially_copyable_v<device_span<float>>);

}  // namespace cuwrap
