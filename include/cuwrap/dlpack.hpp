// DLPack: exporting cuwrap memory as DLPack managed tensors, importing DLPack tensors as
// typed views or owners, and the stream handshake of the exchange protocol (docs/dlpack.md).
#pragma once

#include <cuda.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <type_traits>
#include <utility>

#include "cuwrap/device_buffer.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/dlpack_abi.hpp"
#include "cuwrap/host_memory.hpp"
#include "cuwrap/managed_buffer.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::dlpack {

/// Calls a managed tensor's deleter (if it has one) when its owner goes.
struct tensor_deleter {
  /// deleter(t) for a versioned tensor.
  void operator()(DLManagedTensorVersioned* t) const noexcept {
    if (t->deleter != nullptr) {
      t->deleter(t);
    }
  }
  /// deleter(t) for a legacy tensor.
  void operator()(DLManagedTensor* t) const noexcept {
    if (t->deleter != nullptr) {
      t->deleter(t);
    }
  }
};
/// An owned versioned tensor; release() hands it to a consumer (a PyCapsule, say).
using unique_tensor = std::unique_ptr<DLManagedTensorVersioned, tensor_deleter>;
/// An owned legacy (pre-1.0) tensor.
using unique_legacy_tensor = std::unique_ptr<DLManagedTensor, tensor_deleter>;

/// The DLPack type of an element type T: `value` is its DLDataType. Defined for bool, the
/// integer types, float, double and std::complex<float/double>; specialize it for other
/// types of the same layout (`__half` as {kDLFloat, 16, 1}, `__nv_bfloat16` as
/// {kDLBfloat, 16, 1}). const T has T's type.
template <class T>
struct element_type;
template <class T>
requires std::is_const_v<T>
struct element_type<T> : element_type<std::remove_const_t<T>> {
};
template <>
struct element_type<bool> {
  static constexpr DLDataType value{kDLBool, 8, 1};  ///< DLPack's bool: one byte
};
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
         !std::is_const_v<T>) struct element_type<T> {
  /// kDLInt or kDLUInt of T's width
  static constexpr DLDataType value{std::is_signed_v<T> ? kDLInt : kDLUInt,
                                    static_cast<std::uint8_t>(8 * sizeof(T)), 1};
};
template <>
struct element_type<float> {
  static constexpr DLDataType value{kDLFloat, 32, 1};  ///< IEEE binary32
};
template <>
struct element_type<double> {
  static constexpr DLDataType value{kDLFloat, 64, 1};  ///< IEEE binary64
};
template <>
struct element_type<std::complex<float>> {
  static constexpr DLDataType value{kDLComplex, 64, 1};  ///< two binary32, real first
};
template <>
struct element_type<std::complex<double>> {
  static constexpr DLDataType value{kDLComplex, 128, 1};  ///< two binary64, real first
};

/// True if T has a DLPack type (element_type<T> is defined).
template <class T>
concept exportable = requires {
  element_type<T>::value;
};

/// The DLDataType of T.
template <exportable T>
inline constexpr DLDataType dtype_of = element_type<T>::value;

/// How an export describes the memory, and which streams it orders.
struct export_options {
  /// The extents, outermost first; empty: one dimension of the memory's size. Their product
  /// must not exceed the number of elements.
  std::span<const std::int64_t> shape{};
  /// Strides in elements, one per extent, non-negative; empty: compact row-major. The
  /// tensor always carries explicit strides, never a null pointer.
  std::span<const std::int64_t> strides{};
  /// Marks the tensor read-only (versioned tensors only: DLPACK_FLAG_BITMASK_READ_ONLY).
  bool read_only = false;
  /// The stream the memory's pending writes are queued on (for a stream_ordered_buffer, its
  /// stream unless set). With `consumer`, the export makes the consumer wait for it.
  std::optional<stream_ref> producer{};
  /// The stream the consumer will use the tensor on (the `stream` argument of Python's
  /// `__dlpack__`; consumer_stream() decodes it). Set with `producer`, the export records an
  /// event on the producer and makes the consumer wait for it (wait_for_producer()).
  std::optional<stream_ref> consumer{};
};

/// Makes later work on `consumer` wait for the work queued on `producer` so far: the DLPack
/// exchange protocol's handshake. Nothing when both are the same stream; otherwise
/// cuStreamGetCtx, the context made current if it is not, cuEventCreate (no timing),
/// cuEventRecord on the producer, cuStreamWaitEvent on the consumer, cuEventDestroy (the wait
/// keeps what it needs). Neither stream is synchronized with the host.
void wait_for_producer(stream_ref producer, stream_ref consumer,
                       std::source_location where = std::source_location::current());

/// The consumer's stream as Python's `__dlpack__(stream=...)` passes it for CUDA memory:
/// nullopt (None) and 1 are the legacy default stream, 2 the per-thread default stream, any
/// other positive value a CUstream handle; -1 means "do not synchronize" (returns nullopt).
/// 0 is ambiguous and forbidden by the protocol: it throws cuwrap::error
/// (CUDA_ERROR_INVALID_VALUE), as does any other negative value.
[[nodiscard]] std::optional<stream_ref> consumer_stream(
    std::optional<std::intptr_t> python_stream,
    std::source_location where = std::source_location::current());

/// Which access an import needs.
enum class access {
  device,  ///< device code: kDLCUDA (of the expected device, if given), kDLCUDAManaged, kDLCUDAHost
  host,    ///< host code: kDLCPU, kDLCUDAHost, kDLCUDAManaged
};

namespace detail {

/// What every exported tensor keeps alive; its destructor runs in the tensor's deleter.
struct owner_base {
  virtual ~owner_base() = default;
};
/// Keeps an `O` (a buffer, a shared_ptr, ...) until the deleter runs.
template <class O>
struct owner_of final : owner_base {
  template <class U>
  explicit owner_of(U&& o) : value{std::forward<U>(o)} {}
  O value;
};

/// What an export describes: `count` elements of type `dtype` at `data`.
struct export_request {
  void* data;
  std::size_t count;
  DLDataType dtype;
  DLDevice device;
};

/// The device of `data` for an export: kDLCUDA with its ordinal, kDLCUDAHost, kDLCUDAManaged
/// or (for host == true) kDLCPU for memory CUDA does not know (one cuPointerGetAttributes).
/// Memory of the wrong kind throws, naming `api`.
DLDevice device_of(const void* data, bool host, const char* api, std::source_location where);

/// Builds the tensor; `owner` moves into it (and is destroyed here if anything throws).
/// Runs the stream handshake of `options`.
DLManagedTensorVersioned* make_versioned(const export_request& request,
                                         const export_options& options,
                                         std::unique_ptr<owner_base> owner, const char* api,
                                         std::source_location where);
/// Keeps nothing (an unowned export).
struct no_owner {};
/// Throws cuwrap::error: device memory viewed from the host.
[[noreturn]] void throw_not_host_accessible(const char* api, std::source_location where);

/// A checked import: the first element, the element count, the device.
struct imported_view {
  void* first;
  std::size_t count;
  DLDevice device;
};
/// The requirements of an import.
struct import_request {
  DLDataType dtype;
  std::size_t element_size;
  std::size_t alignment;
  bool writable;
  dlpack::access access;
  std::optional<int> device_ordinal;
};
/// Checks `t` (null for a null pointer) against `request`: version, device, dtype,
/// contiguity, byte_offset alignment, read-only flag. Throws cuwrap::error naming `api`.
imported_view check_import(const DLManagedTensorVersioned* t, const import_request& request,
                           const char* api, std::source_location where);
imported_view check_import(const DLManagedTensor* t, const import_request& request, const char* api,
                           std::source_location where);

template <class T>
import_request request_for(access a, std::optional<int> device_ordinal) {
  return {dtype_of<T>, sizeof(T), alignof(T), !std::is_const_v<T>, a, device_ordinal};
}

/// `owner` on the heap (nothing for no_owner), before anything can fail: from here on, a
/// failed export destroys it.
template <class Owner>
std::unique_ptr<owner_base> hold(Owner&& owner) {
  if constexpr (std::is_same_v<std::remove_cvref_t<Owner>, no_owner>) {
    return nullptr;
  } else {
    return std::make_unique<owner_of<std::remove_cvref_t<Owner>>>(std::forward<Owner>(owner));
  }
}

template <class T, class Buffer>
DLManagedTensorVersioned* export_buffer(Buffer&& buffer, DLDeviceType type, bool ask_device,
                                        const export_options& options, const char* api,
                                        std::source_location where) {
  T* const data = buffer.data(where);  // a moved-from buffer throws here, before anything
  const std::size_t count = buffer.size();
  auto held = hold(std::move(buffer));
  DLDevice device{type, 0};
  if (ask_device && data != nullptr) {
    device = device_of(data, false, api, where);
  }
  return make_versioned({data, count, dtype_of<T>, device}, options, std::move(held), api, where);
}

template <class T, class Owner>
DLManagedTensorVersioned* export_span(T* data, std::size_t count, bool host, export_options options,
                                      Owner&& owner, const char* api, std::source_location where) {
  auto held = hold(std::forward<Owner>(owner));
  DLDevice device{host ? kDLCPU : kDLCUDA, 0};
  if (data != nullptr) {
    device = device_of(data, host, api, where);
  }
  if constexpr (std::is_const_v<T>) {
    options.read_only = true;
  }
  return make_versioned({const_cast<std::remove_const_t<T>*>(data), count, dtype_of<T>, device},
                        options, std::move(held), api, where);
}

}  // namespace detail

// ---- Export ------------------------------------------------------------------------------
//
// An export hands its buffer or owner over before anything can fail: when it throws
// (cuwrap::error naming what was wrong, or the pointer query's or the handshake's driver error),
// the buffer has been freed and the owner destroyed. A moved-from buffer throws
// cuwrap::usage_error before anything happens.

/// A device_buffer as a versioned tensor (kDLCUDA, the buffer's device ordinal: one
/// cuPointerGetAttributes). The buffer moves into the tensor and is freed by its deleter.
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack(
    device_buffer<T>&& buffer, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return unique_tensor{detail::export_buffer<T>(std::move(buffer), kDLCUDA, true, options,
                                                "cuwrap::dlpack::to_dlpack", where)};
}
/// A stream_ordered_buffer as a versioned tensor (kDLCUDA); it moves into the tensor, and its
/// stream is the producer stream unless options.producer says otherwise.
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack(
    stream_ordered_buffer<T>&& buffer, export_options options = {},
    std::source_location where = std::source_location::current()) {
  if (!options.producer) {
    options.producer = buffer.stream(where);
  }
  return unique_tensor{detail::export_buffer<T>(std::move(buffer), kDLCUDA, true, options,
                                                "cuwrap::dlpack::to_dlpack", where)};
}
/// A pinned_buffer as a versioned tensor (kDLCUDAHost, device_id 0; no driver call).
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack(
    pinned_buffer<T>&& buffer, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return unique_tensor{detail::export_buffer<T>(std::move(buffer), kDLCUDAHost, false, options,
                                                "cuwrap::dlpack::to_dlpack", where)};
}
/// A managed_buffer as a versioned tensor (kDLCUDAManaged, device_id 0; no driver call).
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack(
    managed_buffer<T>&& buffer, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return unique_tensor{detail::export_buffer<T>(std::move(buffer), kDLCUDAManaged, false, options,
                                                "cuwrap::dlpack::to_dlpack", where)};
}
/// Device-accessible memory as a versioned tensor that keeps `owner` (moved or copied in: a
/// buffer, a shared_ptr, ...) alive until its deleter runs. The device type comes from the
/// driver (one cuPointerGetAttributes): kDLCUDA with the ordinal, kDLCUDAHost, kDLCUDAManaged;
/// memory the driver does not know throws. A span of const T is exported read-only.
template <exportable T, class Owner>
[[nodiscard]] unique_tensor to_dlpack(
    device_span<T> memory, Owner&& owner, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return unique_tensor{detail::export_span(memory.data(), memory.size(), false, options,
                                           std::forward<Owner>(owner), "cuwrap::dlpack::to_dlpack",
                                           where)};
}
/// Host memory as a versioned tensor keeping `owner` alive: kDLCPU for memory CUDA does not
/// know, kDLCUDAHost for pinned or registered memory, kDLCUDAManaged for managed memory (one
/// cuPointerGetAttributes); device memory throws.
template <exportable T, class Owner>
[[nodiscard]] unique_tensor to_dlpack(
    std::span<T> memory, Owner&& owner, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return unique_tensor{detail::export_span(memory.data(), memory.size(), true, options,
                                           std::forward<Owner>(owner), "cuwrap::dlpack::to_dlpack",
                                           where)};
}
/// The same export without an owner: the tensor does not keep the memory alive, and the caller
/// guarantees that the memory outlives the tensor's deleter.
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack_unowned(
    device_span<T> memory, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return to_dlpack(memory, detail::no_owner{}, options, where);
}
/// The same for host memory.
template <exportable T>
[[nodiscard]] unique_tensor to_dlpack_unowned(
    std::span<T> memory, const export_options& options = {},
    std::source_location where = std::source_location::current()) {
  return to_dlpack(memory, detail::no_owner{}, options, where);
}

/// A versioned tensor as a legacy (pre-1.0) DLManagedTensor, for consumers that only take the
/// "dltensor" capsule (numpy before 2.1, for one). The legacy tensor owns `tensor` and calls its
/// deleter from its own. A read-only tensor cannot be expressed without flags: it throws
/// cuwrap::error (CUDA_ERROR_INVALID_VALUE) and `tensor` is deleted. A null tensor gives null.
[[nodiscard]] unique_legacy_tensor to_legacy(
    unique_tensor tensor, std::source_location where = std::source_location::current());

// ---- Import ------------------------------------------------------------------------------
//
// Every import checks, and throws cuwrap::error naming what was wrong: a null tensor, a null
// data pointer with elements (CUDA_ERROR_INVALID_VALUE); a major version other than 1
// (CUDA_ERROR_NOT_SUPPORTED); a device type the access cannot use (CUDA_ERROR_INVALID_VALUE);
// another device's memory (CUDA_ERROR_INVALID_DEVICE); a dtype other than T's, a negative
// extent or a stride that is not compact row-major (extents of 1 may have any stride), a first
// element (data + byte_offset) not aligned for T, a read-only tensor viewed as non-const T
// (all CUDA_ERROR_INVALID_VALUE).

/// The elements of `t` as a device span (a view: `t` must outlive it). `device_ordinal`, if
/// given, is the device kDLCUDA memory must be on.
template <exportable T>
[[nodiscard]] device_span<T> device_view(
    const DLManagedTensorVersioned* t, std::optional<int> device_ordinal = std::nullopt,
    std::source_location where = std::source_location::current()) {
  const auto v = detail::check_import(t, detail::request_for<T>(access::device, device_ordinal),
                                      "cuwrap::dlpack::device_view", where);
  return {static_cast<T*>(v.first), v.count};
}
/// The same for a legacy tensor.
template <exportable T>
[[nodiscard]] device_span<T> device_view(
    const DLManagedTensor* t, std::optional<int> device_ordinal = std::nullopt,
    std::source_location where = std::source_location::current()) {
  const auto v = detail::check_import(t, detail::request_for<T>(access::device, device_ordinal),
                                      "cuwrap::dlpack::device_view", where);
  return {static_cast<T*>(v.first), v.count};
}
/// The elements of `t` as a host span: kDLCPU, kDLCUDAHost or kDLCUDAManaged memory.
template <exportable T>
[[nodiscard]] std::span<T> host_view(const DLManagedTensorVersioned* t,
                                     std::source_location where = std::source_location::current()) {
  const auto v = detail::check_import(t, detail::request_for<T>(access::host, std::nullopt),
                                      "cuwrap::dlpack::host_view", where);
  return {static_cast<T*>(v.first), v.count};
}
/// The same for a legacy tensor.
template <exportable T>
[[nodiscard]] std::span<T> host_view(const DLManagedTensor* t,
                                     std::source_location where = std::source_location::current()) {
  const auto v = detail::check_import(t, detail::request_for<T>(access::host, std::nullopt),
                                      "cuwrap::dlpack::host_view", where);
  return {static_cast<T*>(v.first), v.count};
}

/// An imported tensor that owns it: its deleter runs once, when this object goes (or, if the
/// constructor throws, before the exception leaves it). Move-only. span() is the device view;
/// host() the host view of host-accessible memory.
template <exportable T>
class tensor {
 public:
  /// Takes `t` and checks it for `a` (and kDLCUDA memory against `device_ordinal`).
  explicit tensor(unique_tensor t, access a = access::device,
                  std::optional<int> device_ordinal = std::nullopt,
                  std::source_location where = std::source_location::current())
      : view_{detail::check_import(t.get(), detail::request_for<T>(a, device_ordinal),
                                   "cuwrap::dlpack::tensor", where)},
        versioned_{std::move(t)} {}
  /// Takes the legacy tensor `t` and checks it the same way.
  explicit tensor(unique_legacy_tensor t, access a = access::device,
                  std::optional<int> device_ordinal = std::nullopt,
                  std::source_location where = std::source_location::current())
      : view_{detail::check_import(t.get(), detail::request_for<T>(a, device_ordinal),
                                   "cuwrap::dlpack::tensor", where)},
        legacy_{std::move(t)} {}

  /// The elements as a device span (all of them, row-major).
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    expect_held("span", where);
    return {static_cast<T*>(view_.first), view_.count};
  }
  /// The same view (no call site in a moved-from tensor's usage_error).
  operator device_span<T>() const { return span({}); }
  /// The elements as a host span. Device memory (kDLCUDA) throws cuwrap::error.
  [[nodiscard]] std::span<T> host(
      std::source_location where = std::source_location::current()) const {
    expect_held("host", where);
    if (view_.device.device_type == kDLCUDA) [[unlikely]] {
      detail::throw_not_host_accessible("cuwrap::dlpack::tensor::host", where);
    }
    return {static_cast<T*>(view_.first), view_.count};
  }
  /// The number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return view_.count; }
  /// Where the memory is.
  [[nodiscard]] DLDevice device() const noexcept { return view_.device; }
  /// The DLTensor (shape, strides, ...); null once moved from.
  [[nodiscard]] const DLTensor* dl_tensor() const noexcept {
    return versioned_ ? &versioned_->dl_tensor : legacy_ ? &legacy_->dl_tensor : nullptr;
  }

 private:
  void expect_held(const char* operation, std::source_location where) const {
    cuwrap::detail::expect_not_moved_from(versioned_ || legacy_, "dlpack::tensor", operation,
                                          where);
  }
  detail::imported_view view_;
  unique_tensor versioned_;
  unique_legacy_tensor legacy_;
};

}  // namespace cuwrap::dlpack
