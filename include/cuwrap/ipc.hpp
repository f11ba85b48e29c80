// Inter-process sharing of device memory and events (cuIpc*), and of memory pools
// (cuMemPoolExportToShareableHandle...). Handles and pointer data are plain bytes: send them to
// another process over a pipe, a socket or MPI. An exported pool is a file descriptor, which is
// not bytes: pass it by inheritance across exec or over a Unix socket (SCM_RIGHTS).
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
#include "cuwrap/memory_pool.hpp"

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

  /// The mapped memory. Throws cuwrap::usage_error at `where` if moved from.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// The same view (a conversion takes no call site: where().line() == 0 if moved from).
  operator device_span<T>() const { return span({}); }
};

namespace detail {
CUdeviceptr open_ipc_memory(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::source_location where);
}  // namespace detail

template <class T>
ipc_mapping<T>::ipc_mapping(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::size_t count, std::source_location where)
    : base{reinterpret_cast<T*>(detail::open_ipc_memory(ctx, handle, where)),  // NOLINT
           count, ctx.lifetime(), detail::close_ipc_memory{ctx.get()}} {}

// ---- memory pools ----

namespace detail {
void close_descriptor(int fd) noexcept;
}  // namespace detail

/// An owned POSIX file descriptor, closed when destroyed. Move-only.
class file_descriptor {
 public:
  /// Owns nothing.
  file_descriptor() noexcept = default;
  /// Owns `fd` (-1: nothing).
  explicit file_descriptor(int fd) noexcept : fd_{fd} {}
  file_descriptor(file_descriptor&& other) noexcept : fd_{std::exchange(other.fd_, -1)} {}
  file_descriptor& operator=(file_descriptor&& other) noexcept {
    if (this != &other) {
      file_descriptor old{std::move(*this)};
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~file_descriptor() {
    if (fd_ >= 0) detail::close_descriptor(fd_);
  }

  /// The descriptor's number (-1 when it owns nothing).
  [[nodiscard]] int get() const noexcept { return fd_; }
  /// True when it owns a descriptor.
  explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives up ownership: the caller must close the returned descriptor.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  /// Keeps the descriptor open across exec (clears FD_CLOEXEC), so that a program this process
  /// starts inherits it under the same number. Throws std::system_error (fcntl's errno).
  void inherit_on_exec(std::source_location where = std::source_location::current()) const;

 private:
  int fd_ = -1;
};
static_assert(!std::is_copy_constructible_v<file_descriptor> &&
              std::is_nothrow_move_constructible_v<file_descriptor> &&
              sizeof(file_descriptor) == sizeof(int));

/// Exports a pool created with pool_sharing::posix_fd as a new file descriptor that this
/// process owns (cuMemPoolExportToShareableHandle). Throws cuwrap::error naming the pool's
/// handle types, before any driver call, when the pool was not created shareable.
[[nodiscard]] file_descriptor export_pool(
    const memory_pool& pool, std::source_location where = std::source_location::current());
/// Exports a pool seen through a view (cuMemPoolExportToShareableHandle): the driver decides
/// whether it is shareable.
[[nodiscard]] file_descriptor export_pool(
    memory_pool_ref pool, std::source_location where = std::source_location::current());

/// Opens a pool another process exported, from a descriptor this process holds (inherited or
/// received; it stays the caller's to close) (cuMemPoolImportFromShareableHandle). The result
/// is destroyed with cuMemPoolDestroy. An imported pool cannot allocate: import the exporter's
/// allocations from it with ipc_pool_memory.
[[nodiscard]] memory_pool import_pool(int fd,
                                      std::source_location where = std::source_location::current());
/// Opens a pool from an owned descriptor (which stays open).
[[nodiscard]] inline memory_pool import_pool(
    const file_descriptor& fd, std::source_location where = std::source_location::current()) {
  return import_pool(fd.get(), where);
}

/// The serializable data of an exported pool allocation (CUmemPoolPtrExportData).
struct ipc_pool_pointer {
  std::array<std::byte, sizeof(CUmemPoolPtrExportData)> bytes{};
  friend bool operator==(const ipc_pool_pointer&, const ipc_pool_pointer&) = default;
};
static_assert(std::is_trivially_copyable_v<ipc_pool_pointer> &&
              sizeof(ipc_pool_pointer) == sizeof(CUmemPoolPtrExportData));

/// Exports the allocation that starts at `address`, from a pool created with
/// pool_sharing::posix_fd, for an importer of that pool (cuMemPoolExportPointer).
[[nodiscard]] ipc_pool_pointer export_pool_pointer(
    CUdeviceptr address, std::source_location where = std::source_location::current());
/// Exports a pool allocation (a stream_ordered_buffer's span, say).
template <class T>
[[nodiscard]] ipc_pool_pointer export_pool_pointer(
    device_span<T> memory, std::source_location where = std::source_location::current()) {
  return export_pool_pointer(memory.address(), where);
}

namespace detail {
CUdeviceptr import_pool_pointer(const owning_context& ctx, memory_pool_ref pool,
                                const ipc_pool_pointer& pointer, std::source_location where);
}  // namespace detail

/// An allocation of another process's pool, imported for this object's life
/// (cuMemPoolImportPointer; freed with cuMemFree, which must come before the exporter frees
/// it). Move-only.
template <class T>
class ipc_pool_memory
    : public detail::owned_memory<T, detail::free_device_memory<detail::ipc_pool_memory_name>> {
  using base = detail::owned_memory<T, detail::free_device_memory<detail::ipc_pool_memory_name>>;

 public:
  /// Imports `count` elements of the allocation `pointer` names from `pool`, a pool that
  /// import_pool opened, with `ctx` current.
  ipc_pool_memory(const owning_context& ctx, memory_pool_ref pool, const ipc_pool_pointer& pointer,
                  std::size_t count, std::source_location where = std::source_location::current())
      : base{
            reinterpret_cast<T*>(detail::import_pool_pointer(ctx, pool, pointer, where)),  // NOLINT
            count, ctx.lifetime()} {}

  /// The imported memory. Throws cuwrap::usage_error at `where` if moved from.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// The same view (a conversion takes no call site: where().line() == 0 if moved from).
  operator device_span<T>() const { return span({}); }
};

}  // namespace cuwrap
