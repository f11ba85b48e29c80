// Interprocess memory and events (cuIpc*): see ipc.hpp.
#include "memory/ipc.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "memory/memory.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr std::uint32_t kMemoryMagic = 0x6d637773;  // "swcm"
constexpr std::uint32_t kEventMagic = 0x65637773;   // "swce"
constexpr std::uint32_t kHandleVersion = 1;
constexpr long kWaitSliceNs = 50'000'000;  // how often a blocked wait checks the recorder lives

// The bytes of a CUipcMemHandle made by this driver.
struct MemoryHandle {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t pid;            ///< the exporting process
  std::int32_t fd;             ///< its memfd, opened as /proc/<pid>/fd/<fd>
  std::uint64_t inode;         ///< of that memfd: a reused descriptor number is refused
  std::uint64_t size;          ///< of the allocation
  std::uint64_t mapping_size;  ///< what the importer maps (whole pages)
  std::uint64_t buffer_id;     ///< unique in the exporting process
  std::int32_t device;         ///< the exporter's device ordinal
};
static_assert(sizeof(MemoryHandle) <= sizeof(CUipcMemHandle));

// The bytes of a CUipcEventHandle made by this driver.
struct EventHandle {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t pid;
  std::int32_t fd;
  std::uint64_t inode;
};
static_assert(sizeof(EventHandle) <= sizeof(CUipcEventHandle));

constexpr std::uint32_t kPoolMagic = 0x70637773;     // "swcp"
constexpr std::uint32_t kPoolFileVersion = 2;        // 2: the pool's location
constexpr std::uint32_t kPointerMagic = 0x61637773;  // "swca"

// The first bytes of a pool file (its first page is the header's): what the importer needs to
// make the same kind of pool.
struct PoolFileHeader {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t device;         ///< the device ordinal of a device pool (0 otherwise)
  std::int32_t pid;            ///< the process that created the pool (for diagnostics)
  std::int32_t alloc_type;     ///< CUmemAllocationType (pinned: the only shareable type)
  std::int32_t location_type;  ///< CUmemLocationType: DEVICE or HOST_NUMA
  std::int32_t location_id;    ///< the device ordinal or host NUMA node
};

// The bytes of a CUmemPoolPtrExportData made by this driver.
struct PointerData {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint64_t inode;         ///< of the pool file: the importing pool must be its import
  std::uint64_t offset;        ///< of the allocation in the pool file
  std::uint64_t size;          ///< of the allocation
  std::uint64_t mapping_size;  ///< what the importer maps (whole pages)
  std::uint64_t buffer_id;     ///< in the exporting process
  std::int32_t device;
};
static_assert(sizeof(PointerData) <= sizeof(CUmemPoolPtrExportData));

// A mapping of another process's memory, opened by a context of this one.
struct Import {
  std::int32_t pid;
  std::uint64_t buffer_id;  ///< in the exporting process
  std::uint64_t inode;
  std::uintptr_t base;              ///< of the mapping here
  unsigned long long local_id = 0;  ///< the mapping's buffer id here
  unsigned refs = 1;                ///< cuIpcOpenMemHandle calls not yet closed
};

// Every import of this process (under the state lock). A mapping reclaimed with its context
// leaves a stale entry, dropped by the next open or close.
std::vector<Import>& imports() {
  static auto* const list = new std::vector<Import>;
  return *list;
}

std::uint64_t inode_of(int fd) noexcept {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

std::uint32_t self() noexcept { return static_cast<std::uint32_t>(getpid()); }

// The live mapping of an import, or nullptr when it was reclaimed with its context.
Allocation* mapping_of(State& s, const Import& imp) noexcept {
  Allocation* const a = find_allocation(s, imp.base);
  return a != nullptr && a->base == imp.base && a->kind == SWCU_IPC_MAPPING &&
                 a->buffer_id == imp.local_id
             ? a
             : nullptr;
}

void prune(State& s) {
  std::erase_if(imports(), [&s](const Import& imp) { return mapping_of(s, imp) == nullptr; });
}

// Opens another process's descriptor `fd` if it is still the file with `inode` and holds at
// least `bytes`; -1 otherwise (the process exited, closed it, or reused the number).
int open_remote(std::int32_t pid, std::int32_t fd, std::uint64_t inode, std::uint64_t bytes) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int local = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local < 0) return -1;
  struct stat st {};
  if (fstat(local, &st) != 0 || static_cast<std::uint64_t>(st.st_ino) != inode ||
      static_cast<std::uint64_t>(st.st_size) < bytes) {
    close(local);
    return -1;
  }
  return local;
}

// Maps `bytes` of the file `fd` shared; nullptr on failure.
void* map_shared(int fd, std::size_t bytes) noexcept {
  void* const p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Sequence numbers wrap: `done` has reached `seq` when it is not behind it.
bool reached(std::uint32_t done, std::uint32_t seq) noexcept {
  return static_cast<std::int32_t>(done - seq) >= 0;
}

std::uint32_t sequence(std::uint64_t last) noexcept { return static_cast<std::uint32_t>(last); }
std::uint32_t recorder(std::uint64_t last) noexcept {
  return static_cast<std::uint32_t>(last >> 32);
}

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value,
           const timespec* timeout) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                 0);
}

// Marks record `seq` completed (keeping the highest) and wakes every waiter in every process.
void publish(IpcEventPage& page, std::uint32_t seq) noexcept {
  std::uint32_t done = page.completed.load(std::memory_order_relaxed);
  while (!reached(done, seq) &&
         !page.completed.compare_exchange_weak(done, seq, std::memory_order_release)) {
  }
  futex(page.completed, FUTEX_WAKE, static_cast<std::uint32_t>(INT_MAX), nullptr);
}

bool process_gone(std::uint32_t pid) noexcept {
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// cuIpcOpenMemHandle (both ABIs).
CUresult open_memory(Sym sym, CUdeviceptr* pdptr, const CUipcMemHandle& handle,
                     unsigned int flags) {
  return call(sym, [&](State& s) -> CUresult {
    if (pdptr == nullptr || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    MemoryHandle h{};
    std::memcpy(&h, handle.reserved, sizeof h);
    if (h.magic != kMemoryMagic || h.version != kHandleVersion || h.size == 0 ||
        h.mapping_size < h.size || h.mapping_size % page_size() != 0 ||
        h.mapping_size > std::numeric_limits<std::size_t>::max()) {
      return CUDA_ERROR_INVALID_VALUE;  // not a handle cuIpcGetMemHandle made
    }
    // The real driver refuses a process its own memory ("invalid device context").
    if (static_cast<std::uint32_t>(h.pid) == self()) return CUDA_ERROR_INVALID_CONTEXT;
    if (s.device(h.device) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (h.device != ctx->device && !config().can_access_peer(ctx->device, h.device)) {
      return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    prune(s);
    for (Import& imp : imports()) {
      if (imp.pid != h.pid || imp.buffer_id != h.buffer_id || imp.inode != h.inode) continue;
      const Allocation* const a = mapping_of(s, imp);
      if (a->ctx == ctx) {  // opened here before: one more reference, the same pointer
        ++imp.refs;
        *pdptr = static_cast<CUdeviceptr>(imp.base);
        return CUDA_SUCCESS;
      }
      // "may only be opened by one CUcontext per CUdevice per other process"
      if (a->ctx->device == ctx->device) return CUDA_ERROR_INVALID_CONTEXT;
    }
    const int fd = open_remote(h.pid, h.fd, h.inode, h.mapping_size);
    if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // freed, or its process exited
    void* const p = map_shared(fd, static_cast<std::size_t>(h.mapping_size));
    close(fd);
    if (p == nullptr) return CUDA_ERROR_MAP_FAILED;
    auto a = std::make_unique<Allocation>(SWCU_IPC_MAPPING, Allocation::Memory::device);
    a->mapping = p;
    a->mapping_size = static_cast<std::size_t>(h.mapping_size);
    a->base = reinterpret_cast<std::uintptr_t>(p);
    a->size = static_cast<std::size_t>(h.size);
    a->ctx = ctx;
    a->device = h.device;
    a->buffer_id = s.next_buffer_id++;
    Allocation* const raw = a.get();
    try {
      imports().reserve(imports().size() + 1);
      s.address_map.emplace(raw->base, raw);
      s.registry(SWCU_IPC_MAPPING).add(std::move(a));
    } catch (...) {
      s.address_map.erase(raw->base);
      if (a) a->release();
      throw;
    }
    imports().push_back(Import{h.pid, h.buffer_id, h.inode, raw->base, raw->buffer_id});
    *pdptr = static_cast<CUdeviceptr>(raw->base);
    return CUDA_SUCCESS;
  });
}

}  // namespace

void* map_shareable_memory(std::size_t bytes, std::size_t& mapped, int& fd) noexcept {
  fd = -1;
  const std::size_t page = page_size();
  if (bytes > std::numeric_limits<std::size_t>::max() - (page - 1)) return nullptr;
  const std::size_t rounded = (bytes + page - 1) / page * page;
  const int memfd = memfd_create("swcuda-device-memory", MFD_CLOEXEC);
  if (memfd < 0) {  // no descriptor left: private memory, which cannot be exported
    void* const p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mapped = rounded;
    return p;
  }
  void* const p =
      ftruncate(memfd, static_cast<off_t>(rounded)) == 0 ? map_shared(memfd, rounded) : nullptr;
  if (p == nullptr) {
    close(memfd);
    return nullptr;
  }
  fd = memfd;
  mapped = rounded;
  return p;
}

bool create_pool_file(PoolData& pool) noexcept {
  const int fd = memfd_create("swcuda-memory-pool", MFD_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t page = page_size();
  const PoolFileHeader h{kPoolMagic,      kPoolFileVersion,   pool.device,     getpid(),
                         pool.alloc_type, pool.location_type, pool.location_id};
  if (ftruncate(fd, static_cast<off_t>(page)) != 0 ||
      pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    close(fd);
    return false;
  }
  pool.fd = fd;
  pool.inode = inode_of(fd);
  pool.file_size = page;
  pool.next_offset = page;
  return true;
}

void* map_pool_memory(PoolData& pool, std::size_t bytes, std::size_t& mapped,
                      std::uint64_t& offset) noexcept {
  const std::size_t page = page_size();
  if (bytes > std::numeric_limits<std::size_t>::max() - (page - 1)) return nullptr;
  const std::size_t rounded = (bytes + page - 1) / page * page;
  const std::uint64_t start = pool.next_offset;
  constexpr auto kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
  if (rounded > kMaxOffset - start) return nullptr;
  const std::uint64_t end = start + rounded;
  if (end > pool.file_size) {
    if (ftruncate(pool.fd, static_cast<off_t>(end)) != 0) return nullptr;
    pool.file_size = end;  // a larger sparse file costs nothing
  }
  void* const p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                       pool.fd, static_cast<off_t>(start));
  if (p == MAP_FAILED) return nullptr;
  pool.next_offset = end;
  mapped = rounded;
  offset = start;
  return p;
}

void discard_pool_memory(const PoolData& pool, std::uint64_t offset, std::size_t bytes) noexcept {
  // An importer that still maps the range (which CUDA forbids) reads zeros from now on.
  (void)fallocate(pool.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(bytes));
}

IpcEvent::~IpcEvent() {
  if (page != nullptr) munmap(page, page_size());
  if (fd >= 0) close(fd);
}

std::shared_ptr<IpcEvent> create_ipc_event() noexcept {
  try {
    auto ipc = std::make_shared<IpcEvent>();
    ipc->fd = memfd_create("swcuda-event", MFD_CLOEXEC);
    if (ipc->fd < 0 || ftruncate(ipc->fd, static_cast<off_t>(page_size())) != 0) return nullptr;
    void* const p = map_shared(ipc->fd, page_size());
    if (p == nullptr) return nullptr;
    ipc->page = new (p) IpcEventPage{};
    ipc->page->magic = kEventMagic;
    const EventHandle h{kEventMagic, kHandleVersion, getpid(), ipc->fd, inode_of(ipc->fd)};
    std::memcpy(ipc->handle.reserved, &h, sizeof h);
    return ipc;
  } catch (...) {
    return nullptr;
  }
}

void prepare_ipc_record(const std::shared_ptr<IpcEvent>& ipc, Op& op) {
  IpcEventPage& page = *ipc->page;
  const std::uint64_t me = static_cast<std::uint64_t>(self()) << 32;
  std::uint64_t last = page.last.load(std::memory_order_relaxed);
  std::uint64_t next = 0;
  do {
    std::uint32_t seq = sequence(last) + 1;
    if (seq == 0) seq = 1;  // 0 means "never recorded"
    next = me | seq;
  } while (!page.last.compare_exchange_weak(last, next, std::memory_order_acq_rel));
  op.work = [ipc, seq = sequence(next)](State&) {
    publish(*ipc->page, seq);
    return CUDA_SUCCESS;
  };
}

bool recorded_elsewhere(const IpcEvent& ipc) noexcept {
  const std::uint64_t last = ipc.page->last.load(std::memory_order_acquire);
  return sequence(last) != 0 && recorder(last) != self();
}

bool remote_record_done(const IpcEvent& ipc) noexcept {
  const std::uint64_t last = ipc.page->last.load(std::memory_order_acquire);
  return reached(ipc.page->completed.load(std::memory_order_acquire), sequence(last));
}

CUresult wait_remote_record(Lock& lock, std::shared_ptr<IpcEvent> ipc) {
  IpcEventPage& page = *ipc->page;
  const std::uint64_t last = page.last.load(std::memory_order_acquire);
  const std::uint32_t seq = sequence(last);
  CUresult result = CUDA_SUCCESS;
  lock.unlock();
  for (;;) {
    const std::uint32_t done = page.completed.load(std::memory_order_acquire);
    if (reached(done, seq)) break;
    const timespec slice{0, kWaitSliceNs};
    futex(page.completed, FUTEX_WAIT, done, &slice);
    if (process_gone(recorder(last)) &&
        !reached(page.completed.load(std::memory_order_acquire), seq)) {
      result = CUDA_ERROR_INVALID_HANDLE;  // its work will never complete
      break;
    }
  }
  lock.lock();
  return result;
}

}  // namespace swcu

extern "C" {

using swcu::Allocation;
using swcu::call;
using swcu::Context;
using swcu::Event;
using swcu::State;
using swcu::Sym;

// Any address inside a cuMemAlloc/cuMemAllocPitch allocation names the whole allocation (the
// importer maps it from its base). Stream-ordered, managed and host memory are not exportable.
CUresult cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  return call(Sym::cuIpcGetMemHandle, [=](State& s) -> CUresult {
    if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Allocation* const a = swcu::find_allocation(s, dptr);
    if (a == nullptr || a->kind != SWCU_DEVICE_ALLOCATION ||
        a->memory != Allocation::Memory::device || a->ctx == nullptr || a->pool) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (a->ctx->sticky_error != CUDA_SUCCESS) return a->ctx->sticky_error;
    const std::uint64_t inode = a->fd >= 0 ? swcu::inode_of(a->fd) : 0;
    if (inode == 0) return CUDA_ERROR_MAP_FAILED;  // private memory: no descriptor was left
    const swcu::MemoryHandle h{
        swcu::kMemoryMagic, swcu::kHandleVersion, getpid(), a->fd, inode, a->size,
        a->mapping_size,    a->buffer_id,         a->device};
    CUipcMemHandle out{};
    std::memcpy(out.reserved, &h, sizeof h);
    *pHandle = out;
    return CUDA_SUCCESS;
  });
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return swcu::open_memory(Sym::cuIpcOpenMemHandle_v2, pdptr, handle, Flags);
}

CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return swcu::open_memory(Sym::cuIpcOpenMemHandle, pdptr, handle, Flags);
}

// The last close unmaps, after the work queued in the mapping's context (which may use it).
CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  return call(Sym::cuIpcCloseMemHandle, [=](State& s, swcu::Lock& lock) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    swcu::prune(s);
    Allocation* a = swcu::find_allocation(s, dptr);
    if (a == nullptr || a->base != dptr || a->kind != SWCU_IPC_MAPPING) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto& list = swcu::imports();
    const unsigned long long id = a->buffer_id;
    const auto it = std::find_if(list.begin(), list.end(),
                                 [id](const swcu::Import& imp) { return imp.local_id == id; });
    if (it != list.end() && --it->refs > 0) return CUDA_SUCCESS;
    if (it != list.end()) list.erase(it);
    swcu::drain_context(s, lock, *a->ctx);
    a = swcu::find_allocation(s, dptr);  // host functions ran without the lock
    if (a != nullptr && a->base == dptr && a->buffer_id == id) swcu::free_now(s, *a);
    return CUDA_SUCCESS;
  });
}

// Only events created with CU_EVENT_INTERPROCESS (which requires CU_EVENT_DISABLE_TIMING) have a
// handle; others are CUDA_ERROR_INVALID_HANDLE, as the real driver answers.
CUresult cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  return call(Sym::cuIpcGetEventHandle, [=](State& s) -> CUresult {
    if (pHandle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Event* const e = s.find<Event>(SWCU_EVENT, event);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (e->ctx->sticky_error != CUDA_SUCCESS) return e->ctx->sticky_error;
    if ((e->flags & CU_EVENT_INTERPROCESS) == 0 || !e->ipc) return CUDA_ERROR_INVALID_HANDLE;
    *pHandle = e->ipc->handle;
    return CUDA_SUCCESS;
  });
}

// A new event of the current context that shares the exporter's state; it behaves like an event
// created with CU_EVENT_DISABLE_TIMING (and may be exported again: its handle is the original).
CUresult cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  return call(Sym::cuIpcOpenEventHandle, [=](State& s) -> CUresult {
    if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    swcu::EventHandle h{};
    std::memcpy(&h, handle.reserved, sizeof h);
    if (h.magic != swcu::kEventMagic || h.version != swcu::kHandleVersion) {
      return CUDA_ERROR_INVALID_VALUE;  // not a handle cuIpcGetEventHandle made
    }
    if (static_cast<std::uint32_t>(h.pid) == swcu::self()) return CUDA_ERROR_INVALID_CONTEXT;
    const std::size_t page = swcu::page_size();
    const int fd = swcu::open_remote(h.pid, h.fd, h.inode, page);
    if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // destroyed, or its process exited
    void* const p = swcu::map_shared(fd, page);
    close(fd);
    if (p == nullptr) return CUDA_ERROR_MAP_FAILED;
    auto ipc = std::make_shared<swcu::IpcEvent>();
    ipc->page = static_cast<swcu::IpcEventPage*>(p);
    ipc->handle = handle;
    if (ipc->page->magic != swcu::kEventMagic) return CUDA_ERROR_INVALID_HANDLE;
    auto e = std::make_unique<Event>(ctx, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
    e->ipc = std::move(ipc);
    *phEvent = reinterpret_cast<CUevent>(s.registry(SWCU_EVENT).add(std::move(e)));
    return CUDA_SUCCESS;
  });
}

// The pool's own descriptor is duplicated: each export is a new descriptor the caller owns.
CUresult cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                          CUmemAllocationHandleType handleType,
                                          unsigned long long flags) {
  const int type = swcu::raw(handleType);
  return call(Sym::cuMemPoolExportToShareableHandle, [=](State& s) -> CUresult {
    if (handle_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const auto p = swcu::find_pool(s, pool);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    // Only a type the pool was created with (so never for a default pool), and only by the
    // pool's creator: an imported pool is not exported again.
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || (p->handle_types & type) == 0 ||
        p->fd < 0 || p->imported) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;  // no descriptor left
    std::memcpy(handle_out, &fd, sizeof fd);
    return CUDA_SUCCESS;
  });
}

// `handle` is the descriptor's number cast to a pointer. The caller keeps its descriptor; the
// pool holds a duplicate. The pool is of the exporter's kind: device memory of the same device
// ordinal, or pinned memory of the same host NUMA node, with the access cuMemPoolCreate gives.
CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                            CUmemAllocationHandleType handleType,
                                            unsigned long long flags) {
  const int type = swcu::raw(handleType);
  return call(Sym::cuMemPoolImportFromShareableHandle, [=](State& s) -> CUresult {
    if (pool_out == nullptr || flags != 0 || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto number = reinterpret_cast<std::uintptr_t>(handle);
    if (number > static_cast<std::uintptr_t>(INT_MAX)) return CUDA_ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(number);
    swcu::PoolFileHeader h{};
    if (pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) ||
        h.magic != swcu::kPoolMagic || h.version != swcu::kPoolFileVersion ||
        h.alloc_type != CU_MEM_ALLOCATION_TYPE_PINNED) {
      return CUDA_ERROR_INVALID_VALUE;  // not a descriptor cuMemPoolExportToShareableHandle made
    }
    switch (h.location_type) {
      case CU_MEM_LOCATION_TYPE_DEVICE:  // a device this process has
        if (h.location_id != h.device || s.device(h.device) == nullptr) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
      case CU_MEM_LOCATION_TYPE_HOST_NUMA:  // a node this process has (0, the only one)
        if (h.location_id != 0 || h.device != 0) return CUDA_ERROR_INVALID_VALUE;
        break;
      default: return CUDA_ERROR_INVALID_VALUE;  // no other pool is shareable
    }
    auto data = std::make_shared<swcu::PoolData>();
    data->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (data->fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;  // no descriptor left
    data->imported = true;
    data->alloc_type = h.alloc_type;
    data->location_type = h.location_type;
    data->location_id = h.location_id;
    data->device = h.device;
    data->handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    data->inode = swcu::inode_of(data->fd);
    swcu::give_default_access(*data, s.devices.size());
    auto* const created =
        s.registry(SWCU_MEMORY_POOL).add(std::make_unique<swcu::MemoryPool>(data));
    data->handle = created;
    *pool_out = reinterpret_cast<CUmemoryPool>(created);
    return CUDA_SUCCESS;
  });
}

// The base of an allocation of a shareable pool, allocated (in stream order: perhaps not yet
// executed) and not being freed.
CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) {
  return call(Sym::cuMemPoolExportPointer, [=](State& s) -> CUresult {
    if (shareData_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Allocation* const a = swcu::find_allocation(s, ptr);
    if (a == nullptr || a->base != ptr || a->kind != SWCU_DEVICE_ALLOCATION || !a->pool ||
        a->stage == Allocation::Stage::freeing) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const swcu::PoolData& pool = *a->pool;
    if (pool.fd < 0 || pool.imported) return CUDA_ERROR_INVALID_VALUE;  // not shareable
    const swcu::PointerData d{
        swcu::kPointerMagic, swcu::kHandleVersion, pool.inode, a->pool_offset, a->size,
        a->mapping_size,     a->buffer_id,         a->device};
    CUmemPoolPtrExportData out{};
    std::memcpy(out.reserved, &d, sizeof d);
    *shareData_out = out;
    return CUDA_SUCCESS;
  });
}

// A new mapping of the allocation's range of the imported pool's file, memory of the pool's
// kind (device memory, or pinned host memory of a host NUMA pool, of the exporter's device
// ordinal as its pointer attributes report it): a stream-ordered allocation of no context, freed
// with cuMemFree or cuMemFreeAsync (which unmap it, and leave the memory to its exporter).
CUresult cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                CUmemPoolPtrExportData* shareData) {
  return call(Sym::cuMemPoolImportPointer, [=](State& s) -> CUresult {
    if (ptr_out == nullptr || shareData == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto p = swcu::find_pool(s, pool);
    if (!p || !p->imported) return CUDA_ERROR_INVALID_VALUE;
    swcu::PointerData d{};
    std::memcpy(&d, shareData->reserved, sizeof d);
    const std::size_t page = swcu::page_size();
    if (d.magic != swcu::kPointerMagic || d.version != swcu::kHandleVersion ||
        d.inode != p->inode || d.size == 0 || d.mapping_size < d.size ||
        d.mapping_size % page != 0 || d.offset % page != 0 || d.offset < page ||
        d.mapping_size > std::numeric_limits<std::size_t>::max()) {
      return CUDA_ERROR_INVALID_VALUE;  // not data of an allocation of this pool
    }
    struct stat st {};
    if (fstat(p->fd, &st) != 0 || d.offset > static_cast<std::uint64_t>(st.st_size) ||
        d.mapping_size > static_cast<std::uint64_t>(st.st_size) - d.offset) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto a = std::make_unique<Allocation>(SWCU_DEVICE_ALLOCATION, p->host_pinned()
                                                                      ? Allocation::Memory::host
                                                                      : Allocation::Memory::device);
    void* const m = mmap(nullptr, static_cast<std::size_t>(d.mapping_size), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_NORESERVE, p->fd, static_cast<off_t>(d.offset));
    if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    a->mapping = m;
    a->mapping_size = static_cast<std::size_t>(d.mapping_size);
    a->base = reinterpret_cast<std::uintptr_t>(m);
    a->size = static_cast<std::size_t>(d.size);
    // Device memory is its pool's device's; host memory the exporter's stream's device's.
    a->device = p->charges_device() || s.device(d.device) == nullptr ? p->device : d.device;
    a->pool = p;
    a->pool_offset = d.offset;
    a->buffer_id = s.next_buffer_id++;
    *ptr_out = static_cast<CUdeviceptr>(swcu::add_allocation(s, std::move(a))->base);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
