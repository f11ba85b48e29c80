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
#include "cuwrap/detail/owned_memory.hpp"
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
class ipc_mapping : public detail::owned_memory<T, detail::close_ipc_memory> {
  using base = detail::owned_memory<T, detail::close_ipc_memory>;

 public:
  /// Maps `count` elements of the allocation behind `handle`.
  ipc_mapping(const owning_context& ctx, const ipc_memory_handle& handle, std::size_t count,
              std::source_location where = std::source_location::current());

  /// The mapped memory.
  [[nodiscard]] device_span<T> span() const noexcept { return {this->data(), this->size()}; }
  operator device_span<T>() const noexcept { return span(); }
};

namespace detail {
CUdeviceptr open_ipc_memory(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::source_location where);
}  // namespace detail

template <class T>
ipc_mapping<T>::ipc_mapping(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::size_t count, std::source_location where)
    : base{reinterpret_cast<T*>(detail::open_ipc_memory(ctx, handle, where)),  // NOLINT
           count, ctx.lifetime()} {}

}  // namespace cuwrap
