// Inter-process sharing: memory, events and memory pools (cuwrap/ipc.hpp).
#include "cuwrap/ipc.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

std::string sharing_name(pool_sharing sharing) {
  switch (sharing) {
    case pool_sharing::none: return "CU_MEM_HANDLE_TYPE_NONE";
    case pool_sharing::posix_fd: return "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR";
  }
  return std::to_string(static_cast<int>(sharing));
}

file_descriptor export_pool_handle(memory_pool_ref pool, std::source_location where) {
  detail::expect_argument_not_moved_from(!pool.empty(), nullptr, "export_pool", "memory_pool",
                                         where);
  int fd = -1;
  const CUresult r = drv().cuMemPoolExportToShareableHandle(
      &fd, pool.get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r == CUDA_ERROR_INVALID_VALUE) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolExportToShareableHandle",
                        "as a POSIX file descriptor: the pool must be created with "
                        "pool_sharing::posix_fd (not imported, not a default pool)",
                        where);
  }
  check(r, "cuMemPoolExportToShareableHandle", where);
  return file_descriptor{fd};
}

}  // namespace

namespace detail {

CUdeviceptr open_ipc_memory(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::source_location where) {
  (void)ctx.lifetime_for("ipc_mapping", "ipc_mapping", where);  // a moved-from context throws
  CUipcMemHandle native{};
  std::memcpy(&native, handle.bytes.data(), sizeof native);
  const scoped_current_context current{ctx, where};
  CUdeviceptr address{};
  check(drv().cuIpcOpenMemHandle(&address, native, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
        "cuIpcOpenMemHandle", where);
  return address;
}

void close_ipc_memory::release(const void* p) const noexcept {
  const auto address = reinterpret_cast<CUdeviceptr>(p);  // NOLINT
  CUcontext current = nullptr;
  const CUresult got = drv().cuCtxGetCurrent(&current);
  check_nothrow(got, "cuCtxGetCurrent");
  const bool switch_context = got == CUDA_SUCCESS && context != nullptr && current != context;
  if (switch_context) {
    const CUresult pushed = drv().cuCtxPushCurrent(context);
    check_nothrow(pushed, "cuCtxPushCurrent");
    if (pushed != CUDA_SUCCESS) return;
  }
  check_nothrow(drv().cuIpcCloseMemHandle(address), "cuIpcCloseMemHandle");
  if (switch_context) {
    CUcontext popped = nullptr;
    check_nothrow(drv().cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

CUdeviceptr import_pool_pointer(const owning_context& ctx, memory_pool_ref pool,
                                const ipc_pool_pointer& pointer, std::source_location where) {
  (void)ctx.lifetime_for("ipc_pool_memory", "ipc_pool_memory", where);
  expect_argument_not_moved_from(!pool.empty(), "ipc_pool_memory", "ipc_pool_memory", "memory_pool",
                                 where);
  CUmemPoolPtrExportData native{};
  std::memcpy(&native, pointer.bytes.data(), sizeof native);
  const scoped_current_context current{ctx, where};
  CUdeviceptr address{};
  const CUresult r = drv().cuMemPoolImportPointer(&address, pool.get(), &native);
  if (r == CUDA_ERROR_INVALID_VALUE) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolImportPointer",
                        "the pool must be one import_pool opened, and the data an allocation "
                        "of the pool it imports, not yet freed",
                        where);
  }
  check(r, "cuMemPoolImportPointer", where);
  return address;
}

void close_descriptor(int fd) noexcept { ::close(fd); }

}  // namespace detail

void file_descriptor::inherit_on_exec(std::source_location where) const {
  if (fd_ < 0) {
    throw usage_error{
        "cuwrap::file_descriptor::inherit_on_exec: this file_descriptor owns no "
        "descriptor (moved from, released or never opened)",
        where};
  }
  const int flags = ::fcntl(fd_, F_GETFD);
  if (flags < 0 || ::fcntl(fd_, F_SETFD, flags & ~FD_CLOEXEC) != 0) {
    throw std::system_error{errno, std::generic_category(),
                            "fcntl(" + std::to_string(fd_) + ", F_SETFD)"};
  }
}

file_descriptor export_pool(const memory_pool& pool, std::source_location where) {
  detail::expect_argument_not_moved_from(!pool.empty(), nullptr, "export_pool", "memory_pool",
                                         where);
  if (pool.sharing() != pool_sharing::posix_fd) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                        "cuMemPoolExportToShareableHandle",
                        "the pool's handle types are " + sharing_name(pool.sharing()) +
                            ": create it with pool_sharing::posix_fd to export it",
                        where);
  }
  return export_pool_handle(pool, where);
}

file_descriptor export_pool(memory_pool_ref pool, std::source_location where) {
  return export_pool_handle(pool, where);
}

memory_pool import_pool(int fd, std::source_location where) {
  if (fd < 0) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                        "cuMemPoolImportFromShareableHandle",
                        "file descriptor " + std::to_string(fd) + " is not open", where);
  }
  CUmemoryPool pool{};
  // The driver takes a POSIX descriptor as its number cast to a pointer.
  void* const handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd));  // NOLINT
  const CUresult r = drv().cuMemPoolImportFromShareableHandle(
      &pool, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolImportFromShareableHandle",
                        "file descriptor " + std::to_string(fd) +
                            (r == CUDA_ERROR_INVALID_VALUE
                                 ? ", which must be a pool's that cuMemPoolExportToShareableHandle "
                                   "made"
                                 : ""),
                        where);
  }
  return memory_pool::adopt(pool, pool_sharing::posix_fd);
}

ipc_pool_pointer export_pool_pointer(CUdeviceptr address, std::source_location where) {
  CUmemPoolPtrExportData native{};
  const CUresult r = drv().cuMemPoolExportPointer(&native, address);
  if (r == CUDA_ERROR_INVALID_VALUE) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolExportPointer",
                        "the address must be the start of a live allocation of a pool created "
                        "with pool_sharing::posix_fd",
                        where);
  }
  check(r, "cuMemPoolExportPointer", where);
  ipc_pool_pointer pointer;
  std::memcpy(pointer.bytes.data(), &native, sizeof native);
  return pointer;
}

ipc_memory_handle export_memory(CUdeviceptr address, std::source_location where) {
  CUipcMemHandle native{};
  check(drv().cuIpcGetMemHandle(&native, address), "cuIpcGetMemHandle", where);
  ipc_memory_handle handle;
  std::memcpy(handle.bytes.data(), &native, sizeof native);
  return handle;
}

ipc_event_handle export_event(event_ref e, std::source_location where) {
  detail::expect_argument_not_moved_from(!e.empty(), nullptr, "export_event", "event", where);
  CUipcEventHandle native{};
  check(drv().cuIpcGetEventHandle(&native, e.get()), "cuIpcGetEventHandle", where);
  ipc_event_handle handle;
  std::memcpy(handle.bytes.data(), &native, sizeof native);
  return handle;
}

event open_event(const owning_context& ctx, const ipc_event_handle& handle,
                 std::source_location where) {
  (void)ctx.lifetime_for("event", "open_event", where);  // a moved-from context throws here
  CUipcEventHandle native{};
  std::memcpy(&native, handle.bytes.data(), sizeof native);
  const scoped_current_context current{ctx, where};
  CUevent e{};
  check(drv().cuIpcOpenEventHandle(&e, native), "cuIpcOpenEventHandle", where);
  return event::adopt(e, ctx);
}

}  // namespace cuwrap
