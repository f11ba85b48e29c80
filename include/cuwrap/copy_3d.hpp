// 3D copies between any mix of host memory, device memory, pitched buffers and CUDA arrays
// (cuMemcpy3D), batches of copies as one driver call (cuMemcpyBatchAsync,
// cuMemcpy3DBatchAsync), and 2D memsets of pitched memory (cuMemsetD2D8/16/32). Extents are
// checked before the driver is called; errors name the offending extent.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <span>
#include <type_traits>
#include <vector>

#include "cuwrap/array.hpp"
#include "cuwrap/copy.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/pitched_buffer.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// A position in elements (x), rows (y) and slices or layers (z).
struct offset_3d {
  std::size_t x = 0;  ///< elements
  std::size_t y = 0;  ///< rows
  std::size_t z = 0;  ///< slices or layers
};

/// A size in elements, rows and slices.
struct extent_3d {
  std::size_t width = 1;   ///< elements per row
  std::size_t height = 1;  ///< rows per slice
  std::size_t depth = 1;   ///< slices
  friend constexpr bool operator==(const extent_3d&, const extent_3d&) = default;
};

namespace detail {
[[noreturn]] void throw_extent_error(const char* api, const char* what, std::size_t offset,
                                     std::size_t size, std::size_t limit,
                                     std::source_location where);
[[noreturn]] void throw_extent_mismatch(const char* api, extent_3d dst, extent_3d src,
                                        std::source_location where);
/// The cold path of a synchronous copy_3d the driver refused with `result`. With no context
/// current (CUDA_ERROR_INVALID_CONTEXT; cuMemcpy3D runs in the current context's default
/// stream), the call is made again with a context pushed: the destination's (an owning array's
/// `dst_context`, else the context of the device memory at its address), else the source's;
/// with none to be found it throws saying what to make current. Anything else throws as check().
/// Defined in src/sync_memory.cpp, beside the other synchronous copies' cold path.
[[gnu::cold]] void copy_3d_failed(CUresult result, const CUDA_MEMCPY3D& desc, CUcontext dst_context,
                                  CUcontext src_context, std::source_location where);
}  // namespace detail

/// One side of a 3D copy: a region of linear memory (host or device: the driver tells them apart
/// by address; rows `pitch_bytes` apart, slices `slice_rows` rows apart) or of a CUDA array, of
/// elements E. Make one with volume_of(), from a pitched_span or pitched_buffer, or from an
/// array or array_view; narrow it with region().
template <class E>
class volume {
 public:
  using element_type = E;  ///< the element type

  /// `width` x `height` x `depth` elements of dense linear memory at `data`.
  [[nodiscard]] static constexpr volume dense(E* data, std::size_t width, std::size_t height = 1,
                                              std::size_t depth = 1) noexcept {
    return pitched(data, width * sizeof(E), width, height, depth, height);
  }
  /// Linear memory with rows `pitch_bytes` apart and slices `slice_rows` rows apart.
  [[nodiscard]] static constexpr volume pitched(E* data, std::size_t pitch_bytes, std::size_t width,
                                                std::size_t height, std::size_t depth,
                                                std::size_t slice_rows) noexcept {
    volume v;
    v.data_ = data;
    v.pitch_ = pitch_bytes;
    v.slice_rows_ = slice_rows;
    v.size_ = {width, height, depth};
    return v;
  }
  /// A pitched 2D view (one slice).
  constexpr volume(pitched_span<E> s) noexcept  // NOLINT(google-explicit-constructor)
      : volume{pitched(s.data, s.pitch_bytes, s.width, s.height, 1, s.height)} {}
  /// A pitched buffer's view (one slice).
  template <class U>
  requires std::is_same_v<const U, E> || std::is_same_v<U, E> volume(
      const pitched_buffer<U>& b)  // NOLINT(google-explicit-constructor)
      : volume{pitched(b.data(), b.pitch_bytes(), b.width(), b.height(), 1, b.height())} {}
  /// A whole array (E must be the array's element type).
  template <class T, unsigned C>
  requires std::is_same_v<std::remove_const_t<E>, array_element_t<T, C>>
  constexpr volume(array_view<T, C> a) noexcept  // NOLINT(google-explicit-constructor)
      : array_{a.get()}, size_{a.width(), a.height(), a.depth()} {}
  /// A whole owning array (its context is remembered: a synchronous copy_3d with no context
  /// current runs in it).
  template <class T, unsigned C>
  requires std::is_same_v<std::remove_const_t<E>, array_element_t<T, C>> volume(
      const array<T, C>& a)  // NOLINT(google-explicit-constructor)
      : volume{static_cast<array_view<T, C>>(a)} {
    context_ = a.context();
  }
  /// volume<T> converts to volume<const T>.
  constexpr operator volume<const E>() const noexcept {  // NOLINT(google-explicit-constructor)
    return volume<const E>::from_parts(data_, array_, pitch_, slice_rows_, at_, size_, context_);
  }

  /// The part of this region at `at` (relative to it) of `size`. Throws errc::invalid_value
  /// naming the extent that leaves the region ("x 3 + width 6 exceeds 8").
  [[nodiscard]] volume region(offset_3d at, extent_3d size,
                              std::source_location where = std::source_location::current()) const {
    check_axis("x", at.x, size.width, size_.width, where);
    check_axis("y", at.y, size.height, size_.height, where);
    check_axis("z", at.z, size.depth, size_.depth, where);
    volume v = *this;
    v.at_ = {at_.x + at.x, at_.y + at.y, at_.z + at.z};
    v.size_ = size;
    return v;
  }
  /// The size of the region.
  [[nodiscard]] constexpr extent_3d extent() const noexcept { return size_; }
  /// True for an array side.
  [[nodiscard]] constexpr bool is_array() const noexcept { return array_ != nullptr; }
  /// True when neither memory nor an array is set (a moved-from array's view).
  [[nodiscard]] constexpr bool empty() const noexcept {
    return array_ == nullptr && data_ == nullptr;
  }
  /// The array of an array side.
  [[nodiscard]] constexpr CUarray array_handle() const noexcept { return array_; }
  /// The address of the region's first element (linear sides).
  [[nodiscard]] CUdeviceptr address() const noexcept {
    return reinterpret_cast<CUdeviceptr>(data_) + (at_.z * slice_rows_ + at_.y) * pitch_ +
           at_.x * sizeof(E);
  }
  /// Bytes between rows (linear sides).
  [[nodiscard]] constexpr std::size_t pitch_bytes() const noexcept { return pitch_; }
  /// Rows between slices (linear sides).
  [[nodiscard]] constexpr std::size_t slice_rows() const noexcept { return slice_rows_; }
  /// The region's offset in the array (array sides).
  [[nodiscard]] constexpr offset_3d array_offset() const noexcept { return at_; }
  /// The context of an array side made from an owning array; null otherwise.
  [[nodiscard]] constexpr CUcontext array_context() const noexcept { return context_; }

  /// Builds a volume from its parts (the const conversion).
  [[nodiscard]] static constexpr volume from_parts(E* data, CUarray a, std::size_t pitch,
                                                   std::size_t slice_rows, offset_3d at,
                                                   extent_3d size,
                                                   CUcontext context = nullptr) noexcept {
    volume v;
    v.data_ = data;
    v.array_ = a;
    v.pitch_ = pitch;
    v.slice_rows_ = slice_rows;
    v.at_ = at;
    v.size_ = size;
    v.context_ = context;
    return v;
  }

 private:
  constexpr volume() noexcept = default;
  static void check_axis(const char* axis, std::size_t at, std::size_t size, std::size_t limit,
                         std::source_location where) {
    if (at > limit || size > limit - at) {
      detail::throw_extent_error("volume::region", axis, at, size, limit, where);
    }
  }

  E* data_ = nullptr;
  CUarray array_ = nullptr;
  std::size_t pitch_ = 0, slice_rows_ = 0;
  offset_3d at_;
  extent_3d size_;
  CUcontext context_ = nullptr;
};

/// A dense volume over host or device memory `r` (std::vector, device_buffer, device_span...):
/// `e.width * e.height * e.depth` must be its size, else errc::invalid_value naming both.
template <memory_range R>
[[nodiscard]] auto volume_of(R&& r, extent_3d e,
                             std::source_location where = std::source_location::current()) {
  const auto s = as_device_span(r, where);
  using E = typename decltype(s)::element_type;
  if (e.width * e.height * e.depth != s.size()) [[unlikely]] {
    detail::throw_size_mismatch("volume_of", e.width * e.height * e.depth, s.size(), sizeof(E),
                                where);
  }
  return volume<E>::dense(s.data(), e.width, e.height, e.depth);
}

namespace detail {
/// One side of a CUDA_MEMCPY3D from a volume (dst: `to_dst`).
template <class E>
void describe_side(CUDA_MEMCPY3D& d, const volume<E>& v, bool to_dst) noexcept {
  if (v.is_array()) {
    const offset_3d at = v.array_offset();
    (to_dst ? d.dstMemoryType : d.srcMemoryType) = CU_MEMORYTYPE_ARRAY;
    (to_dst ? d.dstArray : d.srcArray) = v.array_handle();
    (to_dst ? d.dstXInBytes : d.srcXInBytes) = at.x * sizeof(E);
    (to_dst ? d.dstY : d.srcY) = at.y;
    (to_dst ? d.dstZ : d.srcZ) = at.z;
  } else {
    (to_dst ? d.dstMemoryType : d.srcMemoryType) = CU_MEMORYTYPE_UNIFIED;
    (to_dst ? d.dstDevice : d.srcDevice) = v.address();
    (to_dst ? d.dstPitch : d.srcPitch) = v.pitch_bytes();
    (to_dst ? d.dstHeight : d.srcHeight) = v.slice_rows();
  }
}
template <class E>
CUDA_MEMCPY3D describe_3d(const volume<E>& dst, const volume<const E>& src, const char* api,
                          std::source_location where) {
  expect_argument_not_moved_from(!dst.empty(), nullptr, "copy_3d", "destination", where);
  expect_argument_not_moved_from(!src.empty(), nullptr, "copy_3d", "source", where);
  if (dst.extent() != src.extent()) [[unlikely]] {
    throw_extent_mismatch(api, dst.extent(), src.extent(), where);
  }
  CUDA_MEMCPY3D d{};
  describe_side(d, dst, true);
  describe_side(d, src, false);
  d.WidthInBytes = dst.extent().width * sizeof(E);
  d.Height = dst.extent().height;
  d.Depth = dst.extent().depth;
  return d;
}
}  // namespace detail

/// Copies region `src` into region `dst` (same extents, else errc::invalid_value naming both
/// before any driver call). Any mix of host, device, pitched and array memory; returns when
/// done (cuMemcpy3D; one driver call in the current context). With no context current it runs
/// in the context of the memory it touches, as the synchronous copies do (copy.hpp): an owning
/// array's, or device memory's.
template <class E>
void copy_3d(volume<E> dst, std::type_identity_t<volume<const E>> src,
             std::source_location where = std::source_location::current()) {
  static_assert(!std::is_const_v<E>, "copy_3d into const memory");
  const CUDA_MEMCPY3D d = detail::describe_3d(dst, src, "cuMemcpy3D", where);
  const CUresult r = detail::driver().cuMemcpy3D(&d);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::copy_3d_failed(r, d, dst.array_context(), src.array_context(), where);
  }
}

/// Queues copy_3d on `s` (cuMemcpy3DAsync; one driver call).
template <class E>
void copy_3d(stream_ref s, volume<E> dst, std::type_identity_t<volume<const E>> src,
             std::source_location where = std::source_location::current()) {
  static_assert(!std::is_const_v<E>, "copy_3d into const memory");
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_3d", "stream", where);
  const CUDA_MEMCPY3D d = detail::describe_3d(dst, src, "cuMemcpy3DAsync", where);
  check(detail::driver().cuMemcpy3DAsync(&d, s.get()), "cuMemcpy3DAsync", where);
}

/// When a batch copy may read its source (CUmemcpySrcAccessOrder).
enum class src_access_order : int {
  stream = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,                ///< in stream order
  during_call = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,  ///< before the call returns
  any = CU_MEMCPY_SRC_ACCESS_ORDER_ANY,                      ///< any time
};

/// One copy of a batch (copy_3d_batch): made by batch_copy_3d(), checked there.
using copy_3d_batch_op = CUDA_MEMCPY3D_BATCH_OP;

namespace detail {
/// A batch operand from a volume; `element` is the batch op's element size (1 between pointers).
template <class E>
CUmemcpy3DOperand batch_operand(const volume<E>& v, std::size_t element,
                                std::source_location where) {
  CUmemcpy3DOperand o{};
  if (v.is_array()) {
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = v.array_handle();
    o.op.array.offset = {v.array_offset().x, v.array_offset().y, v.array_offset().z};
    return o;
  }
  if (v.pitch_bytes() % element != 0) [[unlikely]] {
    throw_extent_error("batch_copy_3d", "pitch in elements", 0, v.pitch_bytes(), element, where);
  }
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  o.op.ptr.ptr = v.address();
  o.op.ptr.rowLength = v.pitch_bytes() / element;
  o.op.ptr.layerHeight = v.slice_rows();
  return o;
}
}  // namespace detail

/// Describes one copy of a batch from `src` to `dst` (same extents, else errc::invalid_value
/// naming both); no driver call.
template <class E>
[[nodiscard]] copy_3d_batch_op batch_copy_3d(
    volume<E> dst, std::type_identity_t<volume<const E>> src,
    src_access_order order = src_access_order::stream,
    std::source_location where = std::source_location::current()) {
  (void)detail::describe_3d(dst, src, "batch_copy_3d", where);
  // Between pointers the driver counts bytes; with an array, the array's elements.
  const std::size_t element = dst.is_array() || src.is_array() ? sizeof(E) : 1;
  copy_3d_batch_op op{};
  op.dst = detail::batch_operand(dst, element, where);
  op.src = detail::batch_operand(src, element, where);
  op.extent = {dst.extent().width * (sizeof(E) / element), dst.extent().height, dst.extent().depth};
  op.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(order);
  return op;
}

/// Queues every copy of `ops` on `s` as one batch (cuMemcpy3DBatchAsync; one driver call). `s`
/// must not be the legacy default stream. Copies within a batch are unordered.
void copy_3d_batch(stream_ref s, std::span<const copy_3d_batch_op> ops,
                   std::source_location where = std::source_location::current());

/// One copy of a linear batch (copy_batch): destination, source and bytes.
struct copy_batch_item {
  CUdeviceptr dst = 0;    ///< the destination (host or device address)
  CUdeviceptr src = 0;    ///< the source
  std::size_t bytes = 0;  ///< bytes to copy
};

/// Describes a copy of `src` into `dst` for copy_batch: sizes checked as copy() does; no driver
/// call.
template <memory_range Dst, memory_range Src>
[[nodiscard]] copy_batch_item batch_copy(
    Dst&& dst, Src&& src, std::source_location where = std::source_location::current()) {
  const auto d = as_device_span(dst, where);
  const auto s = as_device_span(src, where);
  return {d.address(), s.address(), detail::checked_copy_size(d, s, "batch_copy", where)};
}

/// Queues the copies of `items` on `s` as one batch, all with `order` (cuMemcpyBatchAsync; one
/// driver call). `s` must not be the legacy default stream.
void copy_batch(stream_ref s, std::span<const copy_batch_item> items,
                src_access_order order = src_access_order::stream,
                std::source_location where = std::source_location::current());

namespace detail {
template <class T>
CUresult memset_2d(CUdeviceptr dst, std::size_t pitch, T value, std::size_t width,
                   std::size_t height) {
  const auto& drv = driver();
  if constexpr (sizeof(T) == 1) {
    return drv.cuMemsetD2D8(dst, pitch, bits_of(value), width, height);
  } else if constexpr (sizeof(T) == 2) {
    return drv.cuMemsetD2D16(dst, pitch, bits_of(value), width, height);
  } else {
    return drv.cuMemsetD2D32(dst, pitch, bits_of(value), width, height);
  }
}
template <class T>
CUresult memset_2d(CUdeviceptr dst, std::size_t pitch, T value, std::size_t width,
                   std::size_t height, CUstream s) {
  const auto& drv = driver();
  if constexpr (sizeof(T) == 1) {
    return drv.cuMemsetD2D8Async(dst, pitch, bits_of(value), width, height, s);
  } else if constexpr (sizeof(T) == 2) {
    return drv.cuMemsetD2D16Async(dst, pitch, bits_of(value), width, height, s);
  } else {
    return drv.cuMemsetD2D32Async(dst, pitch, bits_of(value), width, height, s);
  }
}
inline const char* memset_2d_name(std::size_t size, bool async) noexcept {
  if (size == 1) return async ? "cuMemsetD2D8Async" : "cuMemsetD2D8";
  if (size == 2) return async ? "cuMemsetD2D16Async" : "cuMemsetD2D16";
  return async ? "cuMemsetD2D32Async" : "cuMemsetD2D32";
}
}  // namespace detail

/// Sets every element of the pitched device region `dst` to `value` (cuMemsetD2D8/16/32 by
/// element size; one driver call).
template <class T>
requires detail::fillable<T>
void fill_2d(pitched_span<T> dst, std::type_identity_t<T> value,
             std::source_location where = std::source_location::current()) {
  check(detail::memset_2d<T>(reinterpret_cast<CUdeviceptr>(dst.data), dst.pitch_bytes, value,
                             dst.width, dst.height),
        detail::memset_2d_name(sizeof(T), false), where);
}

/// Queues fill_2d on `s` (cuMemsetD2D8/16/32Async; one driver call).
template <class T>
requires detail::fillable<T>
void fill_2d(stream_ref s, pitched_span<T> dst, std::type_identity_t<T> value,
             std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "fill_2d", "stream", where);
  check(detail::memset_2d<T>(reinterpret_cast<CUdeviceptr>(dst.data), dst.pitch_bytes, value,
                             dst.width, dst.height, s.get()),
        detail::memset_2d_name(sizeof(T), true), where);
}

/// fill_2d of a whole pitched_buffer (usage_error naming the caller if it was moved from).
template <class T>
requires detail::fillable<T>
void fill_2d(const pitched_buffer<T>& dst, std::type_identity_t<T> value,
             std::source_location where = std::source_location::current()) {
  fill_2d(dst.view(where), value, where);
}

/// The queued fill_2d of a whole pitched_buffer.
template <class T>
requires detail::fillable<T>
void fill_2d(stream_ref s, const pitched_buffer<T>& dst, std::type_identity_t<T> value,
             std::source_location where = std::source_location::current()) {
  fill_2d(s, dst.view(where), value, where);
}

}  // namespace cuwrap
