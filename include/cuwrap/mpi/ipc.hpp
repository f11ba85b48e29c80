// Same-node IPC through a communicator: every rank of a node exports a buffer, an event or a
// pool, and every other rank of the node maps it, so ranks copy peer to peer without MPI. Memory
// and event handles are bytes and travel in MPI messages (MPI_Allgather on comm.node()); a pool
// is a file descriptor, which cannot: it goes over a Unix-domain socket with SCM_RIGHTS, and
// only the socket's name travels through MPI. Every function here is collective over comm.node().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <source_location>
#include <utility>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/ipc.hpp"
#include "cuwrap/memory_pool.hpp"
#include "cuwrap/mpi/communicator.hpp"

namespace cuwrap::mpi {

namespace detail {
/// What one rank publishes about a buffer (bytes on the wire).
struct memory_record {
  ipc_memory_handle handle;  ///< the allocation's handle
  std::uint64_t offset = 0;  ///< where the span starts in the allocation, in bytes
  std::uint64_t bytes = 0;   ///< the span's size
};
/// Exports the allocation containing `address` (cuIpcGetMemHandle, cuPointerGetAttributes) and
/// gathers every node-local rank's record.
std::vector<memory_record> gather_memory(const communicator& comm, CUdeviceptr address,
                                         std::size_t bytes, std::size_t element_size,
                                         std::source_location where);
}  // namespace detail

/// Every node-local rank's buffer, mapped into this process (ipc_mapping owners: unmapped when
/// this is destroyed). Move-only.
template <class T>
class node_buffers {
 public:
  /// The buffer of node-local rank `node_rank` (this rank's own buffer for itself).
  [[nodiscard]] device_span<T> operator[](int node_rank) const {
    const auto r = static_cast<std::size_t>(node_rank);
    return r == self_ ? own_ : spans_.at(r);
  }
  /// The number of node-local ranks.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(spans_.size()); }

  /// Maps every other node-local rank's `mine` into `ctx` (cuIpcOpenMemHandle for each).
  node_buffers(const communicator& comm, const owning_context& ctx, device_span<T> mine,
               std::source_location where = std::source_location::current())
      : own_{mine}, self_{static_cast<std::size_t>(comm.node_rank())} {
    const auto records =
        detail::gather_memory(comm, mine.address(), mine.size_bytes(), sizeof(T), where);
    spans_.resize(records.size());
    mappings_.reserve(records.size());
    for (std::size_t r = 0; r < records.size(); ++r) {
      if (r == self_) continue;
      const auto& record = records[r];
      const std::size_t first = record.offset / sizeof(T);
      const std::size_t count = record.bytes / sizeof(T);
      auto& mapping = mappings_.emplace_back(ctx, record.handle, first + count, where);
      spans_[r] = mapping.span(where).subspan(first, count, where);
    }
  }

 private:
  device_span<T> own_;
  std::size_t self_;
  std::vector<device_span<T>> spans_;
  std::vector<ipc_mapping<T>> mappings_;
};

/// Maps every node-local rank's `mine` (a span of a device_buffer: cuMemAlloc memory) into
/// `ctx`. Throws mismatch_error when a rank's span is not whole elements of T.
template <class T>
[[nodiscard]] node_buffers<T> exchange_memory(
    const communicator& comm, const owning_context& ctx, device_span<T> mine,
    std::source_location where = std::source_location::current()) {
  return node_buffers<T>{comm, ctx, mine, where};
}

/// Every node-local rank's interprocess event (event_flags::interprocess), opened in `ctx`
/// (cuIpcGetEventHandle, one MPI_Allgather, cuIpcOpenEventHandle for each other rank). Slot
/// `node_rank` is empty for this rank itself.
[[nodiscard]] std::vector<std::optional<event>> exchange_events(
    const communicator& comm, const owning_context& ctx, event_ref mine,
    std::source_location where = std::source_location::current());

/// Shares node-local rank `root`'s pool (created with pool_sharing::posix_fd; `pool` is read on
/// the root only) with every rank of the node: the root exports it
/// (cuMemPoolExportToShareableHandle), listens on an abstract Unix-domain socket whose name it
/// broadcasts, and sends the descriptor to each rank that connects (SCM_RIGHTS); each imports it
/// (cuMemPoolImportFromShareableHandle). Returns the imported pool, or nothing on the root.
/// Waits are bounded by the communicator's timeout.
[[nodiscard]] std::optional<memory_pool> share_pool(
    const communicator& comm, int root, const memory_pool* pool,
    std::source_location where = std::source_location::current());

/// Broadcasts on the node the pointer data (cuMemPoolExportPointer) and element count of root's
/// pool allocation at `address` (read on the root only). Returns them on every other rank, for
/// ipc_pool_memory; nothing on the root.
std::optional<std::pair<ipc_pool_pointer, std::uint64_t>> broadcast_pool_pointer(
    const communicator& comm, int root, CUdeviceptr address, std::size_t count,
    std::source_location where = std::source_location::current());

/// The typed form: root's allocation `span`, imported everywhere else as an owner that frees
/// the import first.
template <class T>
[[nodiscard]] std::optional<ipc_pool_memory<T>> share_pool_allocation(
    const communicator& comm, int root, const owning_context& ctx, memory_pool_ref imported,
    device_span<T> span, std::source_location where = std::source_location::current()) {
  auto shared = broadcast_pool_pointer(comm, root, span.address(), span.size(), where);
  if (!shared) return std::nullopt;
  return ipc_pool_memory<T>{ctx, imported, shared->first, static_cast<std::size_t>(shared->second),
                            where};
}

}  // namespace cuwrap::mpi
