// Peer access, peer copies and IPC.
#include "cuwrap/peer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <gsl/assert>
#include <string>
#include <system_error>

#include "cuwrap/ipc.hpp"

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

file_descriptor export_pool_handle(CUmemoryPool pool, std::source_location where) {
  Expects(pool != nullptr);
  int fd = -1;
  const CUresult r = drv().cuMemPoolExportToShareableHandle(
      &fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r == CUDA_ERROR_INVALID_VALUE) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolExportToShareableHandle",
                        "as a POSIX file descriptor: the pool must be created with "
                        "pool_sharing::posix_fd (not imported, not a default pool)",
                        where);
  }
  check(r, "cuMemPoolExportToShareableHandle", where);
  return file_descriptor{fd};
}

std::string two_devices(CUdevice a, CUdevice b) {
  return "device " + std::to_string(a) + " and device " + std::to_string(b);
}

int p2p_attribute(const device& from, const device& to, CUdevice_P2PAttribute attribute) {
  int value = 0;
  const CUresult r = drv().cuDeviceGetP2PAttribute(&value, attribute, from.get(), to.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDeviceGetP2PAttribute",
                        two_devices(from.get(), to.get()), {});
  }
  return value;
}

}  // namespace

peer_attributes p2p_attributes(const device& from, const device& to) {
  return {p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK),
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED) != 0,
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED) != 0,
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED) != 0};
}

peer_topology peer_matrix() {
  peer_topology t;
  t.devices = device::all();
  const auto n = t.devices.size();
  t.can_access.assign(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      t.can_access[i][j] = i != j && t.devices[i].can_access_peer(t.devices[j]);
    }
  }
  return t;
}

peer_access::peer_access(const owning_context& from, const owning_context& to,
                         std::source_location where)
    : from_{from.lifetime()}, to_{to.lifetime()} {
  Expects(!from.empty() && !to.empty());
  const scoped_current_context current{from, where};
  const CUresult r = drv().cuCtxEnablePeerAccess(to.get(), 0);
  if (r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return;  // someone else enabled it; they decide when it ends
  }
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuCtxEnablePeerAccess",
                        "from " + two_devices(from_->device, to_->device) +
                            (r == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
                                 ? std::string{": these devices cannot access each other"}
                                 : std::string{}),
                        where);
  }
  enabled_here_ = true;
}

peer_access::~peer_access() {
  if (!enabled_here_) {
    return;
  }
  // Disabling acts on the current context: make `from` current without throwing.
  const auto& d = drv();
  CUcontext current{};
  if (const CUresult r = d.cuCtxGetCurrent(&current); r != CUDA_SUCCESS) {
    check_nothrow(r, "cuCtxGetCurrent");
    return;
  }
  const bool switched = current != from_->handle;
  if (switched) {
    if (const CUresult r = d.cuCtxPushCurrent(from_->handle); r != CUDA_SUCCESS) {
      check_nothrow(r, "cuCtxPushCurrent");
      return;
    }
  }
  check_nothrow(d.cuCtxDisablePeerAccess(to_->handle), "cuCtxDisablePeerAccess");
  if (switched) {
    CUcontext popped{};
    check_nothrow(d.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

namespace detail {

void copy_peer_bytes(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                     std::size_t bytes, CUstream s, bool async, std::source_location where) {
  if (async) {
    check(drv().cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, s), "cuMemcpyPeerAsync",
          where);
  } else {
    check(drv().cuMemcpyPeer(dst, dst_ctx, src, src_ctx, bytes), "cuMemcpyPeer", where);
  }
}

CUdeviceptr open_ipc_memory(const owning_context& ctx, const ipc_memory_handle& handle,
                            std::source_location where) {
  Expects(!ctx.empty());
  CUipcMemHandle native{};
  std::memcpy(&native, handle.bytes.data(), sizeof native);
  const scoped_current_context current{ctx, where};
  CUdeviceptr address{};
  check(drv().cuIpcOpenMemHandle(&address, native, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
        "cuIpcOpenMemHandle", where);
  return address;
}

CUdeviceptr import_pool_pointer(const owning_context& ctx, memory_pool_ref pool,
                                const ipc_pool_pointer& pointer, std::source_location where) {
  Expects(!ctx.empty() && pool.get() != nullptr);
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

void file_descriptor::inherit_on_exec() const {
  Expects(fd_ >= 0);
  const int flags = ::fcntl(fd_, F_GETFD);
  if (flags < 0 || ::fcntl(fd_, F_SETFD, flags & ~FD_CLOEXEC) != 0) {
    throw std::system_error{errno, std::generic_category(),
                            "fcntl(" + std::to_string(fd_) + ", F_SETFD)"};
  }
}

file_descriptor export_pool(const memory_pool& pool, std::source_location where) {
  if (pool.sharing() != pool_sharing::posix_fd) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE),
                        "cuMemPoolExportToShareableHandle",
                        "the pool's handle types are " + sharing_name(pool.sharing()) +
                            ": create it with pool_sharing::posix_fd to export it",
                        where);
  }
  return export_pool_handle(pool.get(), where);
}

file_descriptor export_pool(memory_pool_ref pool, std::source_location where) {
  return export_pool_handle(pool.get(), where);
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
  CUipcEventHandle native{};
  check(drv().cuIpcGetEventHandle(&native, e.get()), "cuIpcGetEventHandle", where);
  ipc_event_handle handle;
  std::memcpy(handle.bytes.data(), &native, sizeof native);
  return handle;
}

event open_event(const owning_context& ctx, const ipc_event_handle& handle,
                 std::source_location where) {
  CUipcEventHandle native{};
  std::memcpy(&native, handle.bytes.data(), sizeof native);
  const scoped_current_context current{ctx, where};
  CUevent e{};
  check(drv().cuIpcOpenEventHandle(&e, native), "cuIpcOpenEventHandle", where);
  return event::adopt(e, ctx);
}

}  // namespace cuwrap
