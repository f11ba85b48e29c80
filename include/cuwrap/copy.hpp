// Copies and fills between any mix of host and device memory, checked before the driver call.
#pragma once

#include <cuda.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <source_location>
#include <type_traits>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

namespace detail {
template <class T>
struct is_device_span : std::false_type {};
template <class T>
struct is_device_span<device_span<T>> : std::true_type {};
template <class T>
concept a_device_span = is_device_span<std::remove_cvref_t<T>>::value;

/// Throws invalid_value naming the operation and both element counts.
[[noreturn]] void throw_size_mismatch(const char* api, std::size_t dst, std::size_t src,
                                      std::size_t element_size, std::source_location where);
/// Adds a hint to a synchronous call that failed for want of a current context.
void check_sync(CUresult result, const char* api, std::source_location where);

/// A synchronous copy or fill, described so that it can be made again in another context.
struct sync_operation {
  /// cuMemcpy, cuMemsetD8/16/32, or cuMemcpy2D.
  enum class kind : unsigned char { copy, set8, set16, set32, copy_2d };
  kind what;                     ///< the call
  CUdeviceptr dst;               ///< the destination
  CUdeviceptr src;               ///< the source of a copy (0 for a fill)
  unsigned value;                ///< the bits a fill writes
  std::size_t count;             ///< bytes (copy) or elements (fill); 0 for a 2D copy
  const CUDA_MEMCPY2D* desc_2d;  ///< the description of a 2D copy; null otherwise
};
/// The cold path of a synchronous copy or fill the driver refused with `result`. When no
/// context is current (CUDA_ERROR_INVALID_CONTEXT), the call is made again with the context of
/// the device memory it touches pushed (the destination's, else the source's) and popped; if
/// that memory belongs to no context, throws saying which context the call needs. Any other
/// failure throws as check() does.
[[gnu::cold]] void sync_failed(CUresult result, const sync_operation& operation, const char* api,
                               std::source_location where);
/// Throws (or retries, see sync_failed) unless `result` is CUDA_SUCCESS: one compare and
/// branch on success.
[[gnu::always_inline]] inline void check_sync(CUresult result, const sync_operation& operation,
                                              const char* api, std::source_location where) {
  if (result != CUDA_SUCCESS) [[unlikely]] {
    sync_failed(result, operation, api, where);
  }
}
}  // namespace detail

/// Device memory: a device_span, or anything whose span() is one (device_buffer,
/// stream_ordered_buffer, managed_buffer).
template <class R>
concept device_memory = detail::a_device_span<R> || requires(const R& r) {
  { r.span() } -> detail::a_device_span;
};

/// Host memory: any contiguous sized range that is not device memory (std::vector, std::array,
/// std::span, pinned_buffer).
/// (Spelled with <iterator>'s range access rather than <ranges>'s concepts, which cost a
/// quarter of a second of compile time in every translation unit.)
template <class R>
concept host_memory = !device_memory<R> && requires(R & r) {
  { std::ranges::begin(r) } -> std::contiguous_iterator;
  std::ranges::end(r);
  std::ranges::data(r);
  std::ranges::size(r);
};

/// Anything copy() accepts.
template <class R>
concept memory_range = device_memory<R> || host_memory<R>;

/// Any memory range as a device_span (with unified addressing, host addresses are valid
/// driver addresses for cuMemcpy). Throws cuwrap::usage_error at `where` for a moved-from
/// buffer. The copies and fills pass their own `where`, so that error names their caller.
template <memory_range R>
[[nodiscard]] auto as_device_span(R&& r,
                                  std::source_location where = std::source_location::current()) {
  if constexpr (detail::a_device_span<R>) {
    return r;
  } else if constexpr (device_memory<R>) {
    if constexpr (requires { r.span(where); }) {
      return r.span(where);  // cuwrap's owners: a moved-from one throws naming `where`
    } else {
      return r.span();
    }
  } else {
    using element = std::remove_reference_t<decltype(*std::ranges::begin(r))>;
    if constexpr (requires { r.data(where); }) {
      return device_span<element>{r.data(where), std::ranges::size(r)};  // pinned_buffer
    } else {
      return device_span<element>{std::ranges::data(r), std::ranges::size(r)};
    }
  }
}

namespace detail {
template <class Dst, class Src>
auto checked_copy_size(const Dst& dst, const Src& src, const char* api,
                       std::source_location where) {
  using dst_type = typename Dst::element_type;
  using src_type = typename Src::element_type;
  static_assert(!std::is_const_v<dst_type>, "copy() into const memory");
  static_assert(std::is_same_v<std::remove_cv_t<dst_type>, std::remove_cv_t<src_type>>,
                "copy() between different element types");
  if (dst.size() != src.size()) [[unlikely]] {
    throw_size_mismatch(api, dst.size(), src.size(), sizeof(dst_type), where);
  }
  return dst.size_bytes();
}
}  // namespace detail

/// Copies `src` into `dst`, which must have the same number of elements (else
/// errc::invalid_value naming both sizes, before any driver call). Host and device memory in
/// any combination; returns when the copy is done (cuMemcpy; one driver call, in the current
/// context). With no context current, the copy is made in the context of the device memory it
/// touches (pushed and popped: three more calls), or throws errc::invalid_context saying
/// which context it needs.
template <memory_range Dst, memory_range Src>
void copy(Dst&& dst, Src&& src, std::source_location where = std::source_location::current()) {
  const auto d = as_device_span(dst, where);
  const auto s = as_device_span(src, where);
  const auto bytes = detail::checked_copy_size(d, s, "cuMemcpy", where);
  detail::check_sync(
      detail::driver().cuMemcpy(d.address(), s.address(), bytes),
      {detail::sync_operation::kind::copy, d.address(), s.address(), 0, bytes, nullptr}, "cuMemcpy",
      where);
}

/// Queues a copy of `src` into `dst` on `s` (cuMemcpyAsync; one driver call). Sizes are
/// checked as for copy(dst, src). Host memory should be pinned for the copy to be
/// asynchronous; it must stay valid until the stream reaches the copy.
template <memory_range Dst, memory_range Src>
void copy(stream_ref s, Dst&& dst, Src&& src,
          std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy", "stream", where);
  const auto d = as_device_span(dst, where);
  const auto sr = as_device_span(src, where);
  const auto bytes = detail::checked_copy_size(d, sr, "cuMemcpyAsync", where);
  check(detail::driver().cuMemcpyAsync(d.address(), sr.address(), bytes, s.get()), "cuMemcpyAsync",
        where);
}

namespace detail {
template <class T>
concept fillable = sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4;

template <class T>
auto bits_of(T value) noexcept {
  if constexpr (sizeof(T) == 1) {
    return std::bit_cast<std::uint8_t>(value);
  } else if constexpr (sizeof(T) == 2) {
    return std::bit_cast<std::uint16_t>(value);
  } else {
    return std::bit_cast<std::uint32_t>(value);
  }
}
}  // namespace detail

/// Sets every element of device memory `dst` to `value` (cuMemsetD8/16/32 by element size;
/// one driver call, in the current context; with none current, in `dst`'s context as for
/// copy()).
template <device_memory Dst,
          class T = typename decltype(as_device_span(std::declval<Dst&>()))::value_type>
requires detail::fillable<T>
void fill(Dst&& dst, std::type_identity_t<T> value,
          std::source_location where = std::source_location::current()) {
  using kind = detail::sync_operation::kind;
  const auto d = as_device_span(dst, where);
  const auto& drv = detail::driver();
  const unsigned bits = detail::bits_of(value);
  if constexpr (sizeof(T) == 1) {
    detail::check_sync(drv.cuMemsetD8(d.address(), detail::bits_of(value), d.size()),
                       {kind::set8, d.address(), 0, bits, d.size(), nullptr}, "cuMemsetD8", where);
  } else if constexpr (sizeof(T) == 2) {
    detail::check_sync(drv.cuMemsetD16(d.address(), detail::bits_of(value), d.size()),
                       {kind::set16, d.address(), 0, bits, d.size(), nullptr}, "cuMemsetD16",
                       where);
  } else {
    detail::check_sync(drv.cuMemsetD32(d.address(), detail::bits_of(value), d.size()),
                       {kind::set32, d.address(), 0, bits, d.size(), nullptr}, "cuMemsetD32",
                       where);
  }
}

/// Queues setting every element of `dst` to `value` on `s` (cuMemsetD8/16/32Async; one
/// driver call).
template <device_memory Dst,
          class T = typename decltype(as_device_span(std::declval<Dst&>()))::value_type>
requires detail::fillable<T>
void fill(stream_ref s, Dst&& dst, std::type_identity_t<T> value,
          std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "fill", "stream", where);
  const auto d = as_device_span(dst, where);
  const auto& drv = detail::driver();
  if constexpr (sizeof(T) == 1) {
    check(drv.cuMemsetD8Async(d.address(), detail::bits_of(value), d.size(), s.get()),
          "cuMemsetD8Async", where);
  } else if constexpr (sizeof(T) == 2) {
    check(drv.cuMemsetD16Async(d.address(), detail::bits_of(value), d.size(), s.get()),
          "cuMemsetD16Async", where);
  } else {
    check(drv.cuMemsetD32Async(d.address(), detail::bits_of(value), d.size(), s.get()),
          "cuMemsetD32Async", where);
  }
}

/// Sets every byte of device memory `dst` to zero (cuMemsetD8; one driver call; with no
/// context current, in `dst`'s context as for copy()).
template <device_memory Dst>
void zero(Dst&& dst, std::source_location where = std::source_location::current()) {
  const auto d = as_device_span(dst, where);
  detail::check_sync(
      detail::driver().cuMemsetD8(d.address(), 0, d.size_bytes()),
      {detail::sync_operation::kind::set8, d.address(), 0, 0, d.size_bytes(), nullptr},
      "cuMemsetD8", where);
}

/// Queues zeroing every byte of `dst` on `s` (cuMemsetD8Async; one driver call).
template <device_memory Dst>
void zero(stream_ref s, Dst&& dst, std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "zero", "stream", where);
  const auto d = as_device_span(dst, where);
  check(detail::driver().cuMemsetD8Async(d.address(), 0, d.size_bytes(), s.get()),
        "cuMemsetD8Async", where);
}

}  // namespace cuwrap
