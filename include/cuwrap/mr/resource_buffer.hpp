// Buffers whose memory comes from a memory resource: resource_buffer (any device-accessible
// resource) and ordered_resource_buffer (any stream-ordered device-accessible resource).
#pragma once

#include <concepts>
#include <cstddef>
#include <exception>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/mr/any_resource.hpp"
#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

namespace detail {
/// Reports an exception a stream-ordered deallocation threw in a destructor to the nothrow
/// handler (src/mr/logging.cpp).
void report_deallocation_failure(std::exception_ptr error) noexcept;

/// The views both resource buffers give of their memory. `Derived` has the members `data_` and
/// `size_`, moved_from(), and `kName` (its name in usage_error messages).
template <class Derived, class T>
class resource_buffer_views {
 public:
  /// The device pointer. Throws cuwrap::usage_error once moved from.
  [[nodiscard]] T* data(std::source_location where = std::source_location::current()) const {
    cuwrap::detail::expect_not_moved_from(!self().moved_from(), Derived::kName, "data", where);
    return self().data_;
  }
  /// A view of the whole buffer.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {data(where), self().size_};
  }
  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address(
      std::source_location where = std::source_location::current()) const {
    return span(where).address();
  }
  /// The same views (no call site in a moved-from buffer's usage_error).
  operator device_span<T>() const { return span({}); }
  operator device_span<const T>() const { return span({}); }
  /// The number of elements (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return self().size_; }
  /// The number of bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return self().size_ * sizeof(T); }
  /// True when there are no elements.
  [[nodiscard]] bool empty() const noexcept { return self().size_ == 0; }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};
}  // namespace detail

/// `count` elements of T from a device-accessible resource. The buffer keeps a copy of the
/// resource (an any_resource<device_accessible>: the resource's own copy semantics apply, so a
/// device_resource keeps its context alive, and a pool_resource refers to its pool, which must
/// outlive the buffer) and frees its memory with deallocate(p, bytes, alignof(T)) when
/// destroyed. Move-only. Zero elements allocate nothing. A moved-from buffer owns nothing:
/// data(), span() and address() throw cuwrap::usage_error. Passes to copy() and fill() as
/// device memory (span()).
template <class T>
class resource_buffer : public detail::resource_buffer_views<resource_buffer<T>, T> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  friend class detail::resource_buffer_views<resource_buffer, T>;

 public:
  /// The name in usage_error messages.
  static constexpr const char* kName = "resource_buffer";
  /// Allocates `count` elements from (a copy of) `resource`, aligned to alignof(T). Only
  /// device-accessible resources are accepted (a compile-time constraint).
  template <resource_with<device_accessible> R>
  requires std::constructible_from<any_resource<device_accessible>, R> resource_buffer(
      R resource, std::size_t count, std::source_location where = std::source_location::current())
      : resource_{std::move(resource)},
        data_{static_cast<T*>(resource_.allocate(count * sizeof(T), alignof(T), where))},
        size_{count} {}
  resource_buffer(resource_buffer&& other) noexcept
      : resource_{std::move(other.resource_)},
        data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)} {}
  resource_buffer& operator=(resource_buffer&& other) noexcept {
    if (this != &other) {
      resource_buffer old{std::move(*this)};
      resource_ = std::move(other.resource_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  resource_buffer(const resource_buffer&) = delete;
  resource_buffer& operator=(const resource_buffer&) = delete;
  ~resource_buffer() {
    if (data_ != nullptr) {
      resource_.deallocate(data_, size_ * sizeof(T), alignof(T));
    }
  }

  /// True once moved from.
  [[nodiscard]] bool moved_from() const noexcept { return resource_.empty(); }
  /// The resource the memory came from (a copy of the one given).
  [[nodiscard]] const any_resource<device_accessible>& resource() const noexcept {
    return resource_;
  }

 private:
  any_resource<device_accessible> resource_;
  T* data_;
  std::size_t size_;
};

/// `count` elements of T allocated in stream order from a stream-ordered device-accessible
/// resource (allocate(s, ...): usable by work queued on `s` after it), and freed in the same
/// stream's order when destroyed (deallocate(s, ...); an exception it throws goes to the nothrow
/// handler). Keeps a copy of the resource (an any_stream_ordered_resource<device_accessible>);
/// the stream must outlive the buffer. Move-only. A moved-from buffer owns nothing: data(),
/// span() and address() throw cuwrap::usage_error.
template <class T>
class ordered_resource_buffer
    : public detail::resource_buffer_views<ordered_resource_buffer<T>, T> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  friend class detail::resource_buffer_views<ordered_resource_buffer, T>;

 public:
  /// The name in usage_error messages.
  static constexpr const char* kName = "ordered_resource_buffer";
  /// Allocates `count` elements on `s` from (a copy of) `resource`, aligned to alignof(T).
  /// Only stream-ordered, device-accessible resources are accepted (a compile-time constraint).
  template <stream_ordered_resource_with<device_accessible> R>
  requires std::constructible_from<any_stream_ordered_resource<device_accessible>, R>
  ordered_resource_buffer(R resource, stream_ref s, std::size_t count,
                          std::source_location where = std::source_location::current())
      : resource_{std::move(resource)},
        stream_{s},
        data_{static_cast<T*>(resource_.allocate(s, count * sizeof(T), alignof(T), where))},
        size_{count} {}
  ordered_resource_buffer(ordered_resource_buffer&& other) noexcept
      : resource_{std::move(other.resource_)},
        stream_{other.stream_},
        data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)} {}
  ordered_resource_buffer& operator=(ordered_resource_buffer&& other) noexcept {
    if (this != &other) {
      ordered_resource_buffer old{std::move(*this)};
      resource_ = std::move(other.resource_);
      stream_ = other.stream_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ordered_resource_buffer(const ordered_resource_buffer&) = delete;
  ordered_resource_buffer& operator=(const ordered_resource_buffer&) = delete;
  ~ordered_resource_buffer() {
    if (data_ != nullptr) {
      try {
        resource_.deallocate(stream_, data_, size_ * sizeof(T), alignof(T));
      } catch (...) {
        detail::report_deallocation_failure(std::current_exception());
      }
    }
  }

  /// The stream the memory is ordered on.
  [[nodiscard]] stream_ref stream() const noexcept { return stream_; }
  /// True once moved from.
  [[nodiscard]] bool moved_from() const noexcept { return resource_.empty(); }
  /// The resource the memory came from (a copy of the one given).
  [[nodiscard]] const any_stream_ordered_resource<device_accessible>& resource() const noexcept {
    return resource_;
  }

 private:
  any_stream_ordered_resource<device_accessible> resource_;
  stream_ref stream_;
  T* data_;
  std::size_t size_;
};

}  // namespace cuwrap::mr
