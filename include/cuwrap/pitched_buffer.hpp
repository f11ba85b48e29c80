// Pitched 2D device memory (cuMemAllocPitch) and 2D copies (cuMemcpy2D) with pitches.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/copy.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/owned_memory.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// A 2D view: `height` rows of `width` elements, rows `pitch_bytes` apart. Host or device
/// memory (the driver tells them apart by address).
template <class T>
struct pitched_span {
  T* data = nullptr;            ///< the first element of the first row
  std::size_t pitch_bytes = 0;  ///< bytes from one row to the next (>= width * sizeof(T))
  std::size_t width = 0;        ///< elements per row
  std::size_t height = 0;       ///< rows

  /// A dense host or device matrix: rows exactly `width` elements apart.
  [[nodiscard]] static constexpr pitched_span dense(T* data, std::size_t width,
                                                    std::size_t height) noexcept {
    return {data, width * sizeof(T), width, height};
  }
  /// pitched_span<T> converts to pitched_span<const T>.
  constexpr operator pitched_span<const T>() const noexcept {
    return {data, pitch_bytes, width, height};
  }
};

namespace detail {
CUdeviceptr allocate_pitched(const owning_context& ctx, std::size_t width_bytes, std::size_t height,
                             unsigned element_size, std::size_t& pitch, std::source_location where);
CUDA_MEMCPY2D describe_2d(const void* dst, std::size_t dst_pitch, const void* src,
                          std::size_t src_pitch, std::size_t width_bytes, std::size_t height);
[[noreturn]] void throw_shape_mismatch(const char* api, std::size_t dst_width,
                                       std::size_t dst_height, std::size_t src_width,
                                       std::size_t src_height, std::source_location where);
}  // namespace detail

/// `height` rows of `width` elements of T in device memory, each row aligned by the driver
/// (cuMemAllocPitch, freed with cuMemFree). Move-only; keeps its context alive. A moved-from
/// buffer owns nothing: data() and view() throw cuwrap::usage_error.
template <class T>
class pitched_buffer
    : private detail::owned_memory<T, detail::free_device_memory<detail::pitched_buffer_name>> {
  static_assert(std::is_trivially_copyable_v<T>, "device memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_device_memory<detail::pitched_buffer_name>>;

 public:
  /// Allocates in `ctx` (made current for the call only if it is not).
  pitched_buffer(const owning_context& ctx, std::size_t width, std::size_t height,
                 std::source_location where = std::source_location::current())
      : pitched_buffer{ctx, width, height, 0, where} {}

  /// The first element (device pointer). Throws cuwrap::usage_error at `where` if moved from.
  [[nodiscard]] T* data(std::source_location where = std::source_location::current()) const {
    return base::data(where);
  }
  /// Bytes between rows, as chosen by the driver.
  [[nodiscard]] std::size_t pitch_bytes() const noexcept { return pitch_; }
  /// Elements per row.
  [[nodiscard]] std::size_t width() const noexcept { return width_; }
  /// Rows.
  [[nodiscard]] std::size_t height() const noexcept { return height_; }
  using base::moved_from;
  /// The buffer as a 2D view.
  [[nodiscard]] pitched_span<T> view(
      std::source_location where = std::source_location::current()) const {
    return {data(where), pitch_, width_, height_};
  }
  /// The same view (a conversion takes no call site: where().line() == 0 if moved from; pass
  /// the buffer itself to copy_2d, which does name the caller's line).
  operator pitched_span<T>() const { return view({}); }
  operator pitched_span<const T>() const { return view({}); }

 private:
  // `pitch` receives the driver's pitch before the base is made from the address.
  pitched_buffer(const owning_context& ctx, std::size_t width, std::size_t height,
                 std::size_t pitch, std::source_location where)
      : base{reinterpret_cast<T*>(detail::allocate_pitched(  // NOLINT: device address
                 ctx, width * sizeof(T), height, element_size(), pitch, where)),
             width * height, ctx.lifetime()},
        pitch_{pitch},
        width_{width},
        height_{height} {}

  static constexpr unsigned element_size() noexcept {
    return sizeof(T) >= 16 ? 16U : sizeof(T) >= 8 ? 8U : 4U;  // what cuMemAllocPitch accepts
  }

  std::size_t pitch_ = 0;
  std::size_t width_;
  std::size_t height_;
};

/// Copies a 2D region; `dst` and `src` must have the same width and height (else
/// errc::invalid_value naming both shapes, before any driver call). Returns when done
/// (cuMemcpy2D; one driver call, in the current context; with none current, in the context of
/// the device memory it touches, as copy() does).
template <class T>
void copy_2d(pitched_span<T> dst, std::type_identity_t<pitched_span<const T>> src,
             std::source_location where = std::source_location::current()) {
  if (dst.width != src.width || dst.height != src.height) [[unlikely]] {
    detail::throw_shape_mismatch("cuMemcpy2D", dst.width, dst.height, src.width, src.height, where);
  }
  const auto desc = detail::describe_2d(dst.data, dst.pitch_bytes, src.data, src.pitch_bytes,
                                        dst.width * sizeof(T), dst.height);
  detail::check_sync(
      detail::driver().cuMemcpy2D(&desc),
      {detail::sync_operation::kind::copy_2d, desc.dstDevice, desc.srcDevice, 0, 0, &desc},
      "cuMemcpy2D", where);
}

/// Queues a 2D copy on `s` (cuMemcpy2DAsync; one driver call). Shapes checked as copy_2d.
template <class T>
void copy_2d(stream_ref s, pitched_span<T> dst, std::type_identity_t<pitched_span<const T>> src,
             std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_2d", "stream", where);
  if (dst.width != src.width || dst.height != src.height) [[unlikely]] {
    detail::throw_shape_mismatch("cuMemcpy2DAsync", dst.width, dst.height, src.width, src.height,
                                 where);
  }
  const auto desc = detail::describe_2d(dst.data, dst.pitch_bytes, src.data, src.pitch_bytes,
                                        dst.width * sizeof(T), dst.height);
  check(detail::driver().cuMemcpy2DAsync(&desc, s.get()), "cuMemcpy2DAsync", where);
}

namespace detail {
template <class T>
struct is_pitched_buffer : std::false_type {};
template <class T>
struct is_pitched_buffer<pitched_buffer<T>> : std::true_type {};
template <class T>
struct is_pitched_span : std::false_type {};
template <class T>
struct is_pitched_span<pitched_span<T>> : std::true_type {};
template <class R>
concept a_pitched_buffer = is_pitched_buffer<std::remove_cvref_t<R>>::value;
template <class R>
concept pitched_memory = a_pitched_buffer<R> || is_pitched_span<std::remove_cvref_t<R>>::value;
/// A buffer's view (usage_error at `where` if it was moved from), or a span as it is.
template <pitched_memory R>
[[nodiscard]] auto as_pitched_span(const R& r, std::source_location where) {
  if constexpr (a_pitched_buffer<R>) {
    return r.view(where);
  } else {
    return r;
  }
}
}  // namespace detail

/// copy_2d with a pitched_buffer on either side or both: copies between their views. A
/// moved-from buffer throws cuwrap::usage_error naming the caller's line, before any driver
/// call (the buffers' conversions to pitched_span cannot carry it).
template <detail::pitched_memory Dst, detail::pitched_memory Src>
requires(detail::a_pitched_buffer<Dst> || detail::a_pitched_buffer<Src>) void copy_2d(
    const Dst& dst, const Src& src, std::source_location where = std::source_location::current()) {
  copy_2d(detail::as_pitched_span(dst, where), detail::as_pitched_span(src, where), where);
}

/// The queued copy_2d with a pitched_buffer on either side or both (cuMemcpy2DAsync).
template <detail::pitched_memory Dst, detail::pitched_memory Src>
requires(detail::a_pitched_buffer<Dst> || detail::a_pitched_buffer<Src>) void copy_2d(
    stream_ref s, const Dst& dst, const Src& src,
    std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_2d", "stream", where);
  copy_2d(s, detail::as_pitched_span(dst, where), detail::as_pitched_span(src, where), where);
}

}  // namespace cuwrap
