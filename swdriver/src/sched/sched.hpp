// Streams, events and the one deterministic scheduler that runs their work.
//
// Every stream (created, legacy default, per-thread default) has a Queue: a FIFO of operations
// (host functions, callbacks, event records, event waits, device work such as copies). An
// operation runs when it is at the head of its queue and every completion it depends on is done.
// Dependencies come from cuStreamWaitEvent and from the legacy default stream's barrier with the
// blocking streams of its context.
//
// SWCUDA_EXEC=immediate runs work at enqueue time (and, after each completion, whatever became
// runnable); SWCUDA_EXEC=deferred runs nothing until a call synchronizes, and then only what that
// call needs. There is no worker thread: the thread that makes the call runs the operations. It
// releases the state mutex while it runs a host function; other threads that need that queue
// wait on State::progress.
//
// Simulated time: each device has a clock (Device::clock_ns). An executed operation advances it
// by kOperationNs plus, for device work, one nanosecond per kBytesPerNs bytes it moves; event
// records take the clock's value and cost nothing, as do event waits.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "core/api.hpp"
#include "core/state.hpp"

namespace swcu {

inline constexpr unsigned long long kOperationNs = 1000;  ///< 1 us per executed operation
inline constexpr unsigned long long kBytesPerNs = 64;     ///< 64 GB/s for copies and memsets

/// An error of asynchronous work: reported once, by whichever synchronizing call sees it first.
struct AsyncError {
  CUresult code;
  bool reported = false;
};

/// Whether one operation has executed. Events and waiting operations share it.
struct Completion {
  bool done = false;
  unsigned long long time_ns = 0;  ///< the device clock when it completed
  int device = 0;
  Queue* queue = nullptr;  ///< the queue that runs it (valid while !done)
  /// For event records: the stream's unreported error when the record executed.
  std::shared_ptr<AsyncError> error;
};

enum class OpKind { host_function, callback, record, wait, work };

/// One operation in a queue.
struct Op {
  OpKind kind = OpKind::work;
  std::shared_ptr<Completion> completion;
  std::vector<std::shared_ptr<Completion>> deps;
  Fault fault;  ///< an asynchronous fault to fail it with when it executes
  CUhostFn host_function = nullptr;
  CUstreamCallback callback = nullptr;
  CUstream stream_handle = nullptr;  ///< what cuStreamAddCallback passes back
  void* user_data = nullptr;
  /// Device work, run under the state lock; returns an error to report asynchronously.
  std::function<CUresult(State&)> work;
  /// Called instead of `work` when a work operation does not run: failed by an asynchronous
  /// fault, skipped in a broken context, or dropped with its context (stream-ordered memory
  /// undoes what its call did, so nothing is left that no API can free).
  std::function<void(State&)> not_run;
  unsigned long long bytes = 0;  ///< moved by `work`, for the clock
  /// A stream memory wait (cuStreamWaitValue*, exec/stream_memops.cpp): true once its
  /// condition holds on the memory (or the memory is gone, so that `work` reports it). Until
  /// then the operation is not runnable, whatever its dependencies; nothing else tells the
  /// scheduler when the memory changes, so a thread that waits for it polls (wait_for()).
  std::function<bool(State&)> ready;
};

/// What cuStreamSetAttribute stores for a stream (exec/stream_attributes.cpp); the priority is
/// Queue::priority. The software driver has no L2 cache or memory-sync domains, so they are
/// kept and reported, and change nothing in how work runs.
struct StreamAttributes {
  CUaccessPolicyWindow access_policy_window{};  ///< num_bytes 0: none
  int sync_policy = CU_SYNC_POLICY_AUTO;        ///< CUsynchronizationPolicy
  CUlaunchMemSyncDomainMap mem_sync_domain_map{0, 1};
  int mem_sync_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;  ///< CUlaunchMemSyncDomain
  unsigned nvlink_util_centric_scheduling = 0;
};

/// The work queue of one stream.
struct Queue : std::enable_shared_from_this<Queue> {
  enum class Kind { created, legacy, per_thread };

  Kind kind = Kind::created;
  unsigned int flags = 0;  ///< CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING
  int priority = 0;
  StreamAttributes attributes;  ///< cuStreamSetAttribute
  unsigned long long id = 0;    ///< cuStreamGetId, and the scheduler's order
  Context* ctx = nullptr;       ///< nullptr once the context was destroyed
  int device = 0;
  std::deque<Op> ops;
  bool running = false;    ///< its head runs on some thread, with the mutex released
  bool destroyed = false;  ///< its stream handle was destroyed; the queue goes when it drains
  std::shared_ptr<Completion> tail;   ///< of the last operation enqueued
  std::shared_ptr<AsyncError> error;  ///< the first unreported asynchronous error
  /// A per-thread default stream's thread.
  std::thread::id thread;
  /// The stream capture it takes part in (capture.hpp); nullptr when it does not capture.
  std::shared_ptr<struct Capture> capture;

  /// Takes part in the legacy default stream's barrier (not a CU_STREAM_NON_BLOCKING stream).
  [[nodiscard]] bool blocking() const noexcept { return (flags & CU_STREAM_NON_BLOCKING) == 0; }
  [[nodiscard]] bool idle() const noexcept { return ops.empty(); }
};

/// A stream handle (SWCU_STREAM).
struct Stream final : Object {
  explicit Stream(std::shared_ptr<Queue> q) noexcept : Object(SWCU_STREAM), queue(std::move(q)) {}
  void release() noexcept override { queue.reset(); }
  std::shared_ptr<Queue> queue;
};

struct IpcEvent;  // ipc.hpp

/// An event handle (SWCU_EVENT).
struct Event final : Object {
  Event(Context* c, unsigned int f) noexcept : Object(SWCU_EVENT), ctx(c), flags(f) {}
  void release() noexcept override {
    recorded.reset();
    ipc.reset();
  }
  Context* ctx;  ///< live while the event is (events are reclaimed with their context)
  unsigned int flags;
  std::shared_ptr<Completion> recorded;  ///< the last record; nullptr before the first
  /// The state an interprocess event shares with other processes (ipc.hpp); else nullptr.
  std::shared_ptr<IpcEvent> ipc;
  /// Its last record was made in a capturing stream (capture.hpp); else nullptr.
  std::shared_ptr<struct CapturedRecord> captured;
};

/// Which default stream a NULL stream handle means for the export being called.
enum class NullStream { legacy, per_thread };

/// The queue a stream handle names: NULL (the legacy default stream, or the per-thread one for
/// the _ptsz/_ptds exports), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean the current
/// context's; anything else must be a live stream. Errors: CUDA_ERROR_INVALID_CONTEXT (a special
/// handle without a current context), CUDA_ERROR_INVALID_HANDLE, the context's sticky error.
[[nodiscard]] CUresult resolve_stream(State& s, CUstream handle, NullStream null,
                                      std::shared_ptr<Queue>& out);

/// The legacy default stream of `ctx` (created on first use).
[[nodiscard]] Queue& legacy_queue(State& s, Context& ctx);

/// The default stream of `ctx` that a synchronous call of a legacy (NullStream::legacy) or
/// per-thread (_ptds) export uses.
[[nodiscard]] Queue& default_queue(State& s, Context& ctx, NullStream which);

/// True when an operation pushed to `q` now would run at once (immediate mode, nothing before
/// it, no barrier to wait for).
[[nodiscard]] bool runs_at_once(const Queue& q) noexcept;

/// Creates a queue for a new stream of `ctx`.
[[nodiscard]] std::shared_ptr<Queue> create_queue(State& s, Context& ctx, unsigned int flags,
                                                  int priority);

/// Appends `op` to `q`, with the legacy barrier's dependencies and the call's pending
/// asynchronous fault, and returns its completion. Runs nothing: see kick().
std::shared_ptr<Completion> push(State& s, Queue& q, Op op);

/// In immediate mode, runs whatever is runnable (nothing in deferred mode). May release the lock.
void kick(State& s, Lock& lock);

/// push(), then kick().
std::shared_ptr<Completion> enqueue(State& s, Lock& lock, Queue& q, Op op);

/// True when everything enqueued in `q` is done (for the legacy default stream: also what its
/// barrier waits for in the blocking streams of its context).
[[nodiscard]] bool queue_done(const Queue& q) noexcept;

/// Runs operations until `c` is done (immediate or deferred mode alike). May release the lock.
/// When the operation it needs next is a stream memory wait whose condition does not hold, it
/// runs whatever other work is runnable (in deferred mode too: any of it may write the value),
/// then polls the memory, which the host or another process may write; after
/// SWCUDA_STREAM_WAIT_TIMEOUT seconds of that (when set) the wait fails with
/// CUDA_ERROR_LAUNCH_TIMEOUT, reported asynchronously, and its stream goes on.
void wait_for(State& s, Lock& lock, const std::shared_ptr<Completion>& c);

/// True for the errors of a kernel's execution that leave the context unusable, as on a GPU
/// (illegal or misaligned address, assert, trap, timeout, stack error...).
[[nodiscard]] constexpr bool is_device_fault(CUresult r) noexcept {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: return true;
    default: return false;
  }
}

/// Writes the device-side printf output of finished kernels to stdout (what a GPU does at
/// synchronization points and when a context is destroyed).
void flush_printf(State& s) noexcept;

/// Runs operations until everything enqueued in `q` so far is done. May release the lock.
void drain(State& s, Lock& lock, Queue& q);

/// Runs operations until everything enqueued in the context's queues so far is done.
void drain_context(State& s, Lock& lock, Context& ctx);

/// The first unreported asynchronous error of `q`, which is then reported; CUDA_SUCCESS if none.
[[nodiscard]] CUresult take_error(Queue& q) noexcept;

/// True when SWCUDA_EXEC=deferred.
[[nodiscard]] bool deferred_mode() noexcept;

}  // namespace swcu
