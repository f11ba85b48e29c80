// Inter-process sharing of device memory and events (cuIpc*). Handles are plain bytes: send
// them to another process over a pipe, a socket or MPI.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/event.hpp"

namespace cuwrap {

/// The serializable handle of an exported device allocation (CUipcMemHandle).
struct ipc_memory_handle {
  std::array<std::byte, CU_IPC_HANDLE_SIZE> bytes{};
  friend bool operator==(const ipc_memory_handle&, const ipc_memory_handle&) = default;
};
/// The serializable handle of an exported interprocess event (CUipcEventHandle).
struct ipc_event_handle {
  std::array<std::byte, CU_IPC_HANDLE_SIZE> bytes{};
  friend bool operator==(const ipc_event_handle&, const ipc_event_handle&) = default;
};
static_assert(std::is_trivially_copyable_v<ipc_memory_handle> &&
              sizeof(ipc_memory_handle) == sizeof(CUipcMemHandle));
static_assert(std::is_trivially_copyable_v<ipc_event_handle> &&
              sizeof(ipc_event_handle) == sizeof(CUipcEventHandle));

/// Exports the allocation that contains `memory` (cuIpcGetMemHandle). The memory must come from
/// cuMemAlloc (a device_buffer), not from a pool or managed memory.
[[nodiscard]] ipc_memory_handle export_memory(
    CUdeviceptr address, std::source_location where = std::source_location::current());
/// Exports a device span's allocation.
template <class T>
[[nodiscard]] ipc_memory_handle export_memory(
    device_span<T> memory, std::source_location where = std::source_location::current()) {
  return export_memory(memory.address(), where);
}

/// Exports an event created with event_flags::interprocess (cuIpcGetEventHandle).
[[nodiscard]] ipc_event_handle export_event(
    event_ref e, std::source_location where = std::source_location::current());

/// Opens an event another process exported, in `ctx` (cuIpcOpenEventHandle).
[[nodiscard]] event open_event(const owning_context& ctx, const ipc_event_handle& handle,
                               std::source_location where = std::source_location::current());

/// Device memory of another process, mapped into `ctx` for this object's life
/// (cuIpcOpenMemHandle with lazy peer access, cuIpcCloseMemHandle). Move-only.
template <class T>
class ipc_mapping {
 public:
  /// Maps `count` elements of the allocation behind `handle`.
  ipc_mapping(const owning_context& ctx, const ipc_memory_handle& handle, std::size_t count,
              std::source_location where = std::source_location::current());
  ipc_mapping(ipc_mapping&& other) noexcept
      : data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)},
        context_{std::move(other.context_)} {}
  ipc_mapping& operator=(ipc_mapping&& other) noexcept {
    if (this != &other) {
      ipc_mapping old{std::move(*this)};
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      context_ = std::move(other.context_);
    }
    return *this;
  }
  ~ipc_mapping() {
    if (data_ != nullptr) {
      check_nothrow(detail::driver().cuIpcCloseMemHandle(span().address()), "cuIpcCloseMemHandle");
    }
  }

  /// The mapped memory.
  [[nodiscard]] device_span<T> span() const noexcept { return {data_, size_}; }
  operator device_span<T>() const noexcept { return span(); }
  /// The device pointer.
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// The number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const detail::context_owner> context_;
};

namespace detail {
CUdeviceptr open_ipc_memory(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::source_location where);
}  // namespace detail

template <class T>
ipc_mapping<T>::ipc_mapping(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::size_t count, std::source_location where)
    : data_{reinterpret_cast<T*>(detail::open_ipc_memory(ctx, handle, where))},  // NOLINT
      size_{count},
      context_{ctx.lifetime()} {}

}  // namespace cuwrap
