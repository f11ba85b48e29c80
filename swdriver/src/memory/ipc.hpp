// Interprocess sharing (cuIpc*): device memory and events another process maps.
//
// Memory: every cuMemAlloc/cuMemAllocPitch allocation is a memfd mapped MAP_SHARED (memory.cpp
// maps it with map_shareable_memory), so exporting it costs nothing: the 64-byte handle names
// the exporting process, the memfd's descriptor number and inode, the size and the buffer id,
// and cuIpcOpenMemHandle in another process maps /proc/<pid>/fd/<fd> (checking the inode, so a
// stale handle is refused, not mapped to other memory). The mapping is an Allocation of kind
// SWCU_IPC_MAPPING owned by the importing context, so copies and memsets check it like any
// device range.
//
// Events: an event created with CU_EVENT_INTERPROCESS owns one page of shared memory (also a
// memfd), IpcEventPage, which every process that has the event open maps: the sequence number
// of the last record with the process that made it, and the highest sequence number whose record
// completed (a futex word). A record takes the next number; its operation publishes it when the
// scheduler runs it (sched.cpp runs a record's `work`). A process whose event was last recorded
// by another process reads the page: cuEventQuery polls it, cuEventSynchronize and
// cuStreamWaitEvent block on the futex with the state lock released.
//
// Memory pools (cuMemPoolExportToShareableHandle...): a pool created with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR keeps all its allocations in one memfd, the pool
// file: a header page (PoolFileHeader), then each allocation at an offset of its own, never
// reused (a free punches a hole, so the memory goes back to the system). Exporting the pool
// hands out a new descriptor of that file; importing takes a descriptor (inherited, or received
// with SCM_RIGHTS), checks the header (which records the pool's allocation type and location,
// so that the import is the same kind of pool: device memory, or pinned host memory of a host
// NUMA pool) and keeps a duplicate. Exported pointer data names the
// file's inode, the offset and the size: the importer maps that range of its descriptor, so
// both processes see the same bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/api.hpp"

namespace swcu {

struct Op;

/// Maps `bytes` of zeroed memory that other processes can map too: a memfd (its descriptor in
/// `fd`, kept open while the memory lives), mapped MAP_SHARED | MAP_NORESERVE. When the process
/// has no descriptor left it falls back to private anonymous memory (`fd` -1; such memory cannot
/// be exported). nullptr when nothing can be mapped.
[[nodiscard]] void* map_shareable_memory(std::size_t bytes, std::size_t& mapped, int& fd) noexcept;

struct PoolData;

/// Creates the memfd of a new pool shareable as a POSIX descriptor (`pool.fd`, its header page
/// written); false when the system refuses (nothing is left open).
[[nodiscard]] bool create_pool_file(PoolData& pool) noexcept;

/// Maps `bytes` (rounded up to whole pages, in `mapped`) of zeroed memory at a new offset of the
/// exporter's pool file (in `offset`), growing the file; nullptr when the system refuses (the
/// pool is unchanged).
[[nodiscard]] void* map_pool_memory(PoolData& pool, std::size_t bytes, std::size_t& mapped,
                                    std::uint64_t& offset) noexcept;

/// Gives the pages of a freed allocation of the exporter's pool file back to the system.
void discard_pool_memory(const PoolData& pool, std::uint64_t offset, std::size_t bytes) noexcept;

/// The page an interprocess event shares between processes. Lock-free atomics only, so every
/// process may use it concurrently.
struct IpcEventPage {
  std::uint32_t magic;
  std::atomic<std::uint32_t> completed;  ///< the highest completed sequence number (futex word)
  std::atomic<std::uint64_t> last;       ///< (pid << 32) | sequence number of the last record
};

/// What an interprocess event (exported or imported) holds: the mapped page, and in the exporter
/// the memfd behind it.
struct IpcEvent {
  IpcEvent() = default;
  ~IpcEvent();
  IpcEvent(const IpcEvent&) = delete;
  IpcEvent& operator=(const IpcEvent&) = delete;

  IpcEventPage* page = nullptr;
  int fd = -1;                ///< the exporter's memfd; -1 in an importer
  CUipcEventHandle handle{};  ///< what cuIpcGetEventHandle returns (an import keeps the original)
};

/// The shared state of a new CU_EVENT_INTERPROCESS event; nullptr when the system refuses it.
[[nodiscard]] std::shared_ptr<IpcEvent> create_ipc_event() noexcept;

/// For cuEventRecord of an interprocess event: takes the next sequence number (this process
/// recorded it last) and makes `op`, the record operation, publish it when it executes.
void prepare_ipc_record(const std::shared_ptr<IpcEvent>& ipc, Op& op);

/// True when the event's last record was made by another process: its completion is then only
/// known from the shared page.
[[nodiscard]] bool recorded_elsewhere(const IpcEvent& ipc) noexcept;

/// Whether that record (made by another process) completed.
[[nodiscard]] bool remote_record_done(const IpcEvent& ipc) noexcept;

/// Blocks, with the state lock released, until the last record (made by another process)
/// completes: CUDA_SUCCESS, or CUDA_ERROR_INVALID_HANDLE when the recording process exited
/// before it did. Looks nothing up afterwards: callers must look their objects up again.
[[nodiscard]] CUresult wait_remote_record(Lock& lock, std::shared_ptr<IpcEvent> ipc);

}  // namespace swcu
