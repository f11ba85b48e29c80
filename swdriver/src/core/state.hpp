// The driver's state: devices, per-kind registries of live handles, the context stack.
//
// Handles are pointers to heap objects derived from Object. Every function that takes a handle
// looks it up in the registry of the kind it expects before dereferencing it, so a stale,
// foreign or wrong-kind handle is an error code, never a crash. Destroyed objects are kept in a
// bounded graveyard for a while so that a new object never reuses the address of one destroyed
// recently (a stale handle must not come back to life).
//
// Locking: one global mutex (State::mutex) around all of it; the context stack is thread_local.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/cuda_api.hpp"
#include "swcuda/control.h"

namespace swcu {

/// Base of everything a driver handle points to.
struct Object {
  explicit Object(swcu_handle_kind k) noexcept : kind(k) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  /// Frees what the object owns (memory, child objects) when its handle is destroyed. The object
  /// itself then waits in the graveyard, so anything large belongs here, not in the destructor.
  virtual void release() noexcept {}

  const swcu_handle_kind kind;
};

/// The live objects of one kind, owned here and keyed by their handle value.
class Registry {
 public:
  /// Takes ownership; returns the object, whose address is its handle.
  template <class T>
  T* add(std::unique_ptr<T> object) {
    T* const raw = object.get();
    live_.emplace(static_cast<const void*>(raw), std::move(object));
    return raw;
  }
  /// The live object with this handle, or nullptr.
  [[nodiscard]] Object* find(const void* handle) const noexcept;
  /// Removes and returns the object (nullptr when not live).
  [[nodiscard]] std::unique_ptr<Object> take(const void* handle) noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return live_.size(); }
  /// The handles of the live objects for which `pred(object)` holds, in no particular order.
  template <class Pred>
  [[nodiscard]] std::vector<const void*> handles_if(Pred pred) const {
    std::vector<const void*> out;
    for (const auto& [handle, object] : live_) {
      if (pred(*object)) out.push_back(handle);
    }
    return out;
  }

 private:
  std::unordered_map<const void*, std::unique_ptr<Object>> live_;
};

struct Queue;
struct Completion;
struct MemoryPool;
struct Allocation;
struct GreenContext;

/// The simulated device's SMs (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), which green contexts
/// partition.
inline constexpr unsigned kDeviceSmCount = 132;

/// A context: created (SWCU_CONTEXT) or a device's primary context (SWCU_PRIMARY_CONTEXT).
struct Context final : Object {
  Context(swcu_handle_kind k, int dev, unsigned int creation_flags, int api,
          unsigned long long uid);

  /// Restores what cuDevicePrimaryCtxReset resets: limits and cache configuration.
  void reset_settings() noexcept;
  [[nodiscard]] bool is_primary() const noexcept { return kind == SWCU_PRIMARY_CONTEXT; }
  [[nodiscard]] CUcontext handle() noexcept { return reinterpret_cast<CUcontext>(this); }

  const int device;
  unsigned int flags;
  const int api_version;        ///< cuCtxGetApiVersion
  const unsigned long long id;  ///< cuCtxGetId: unique for the life of the process
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
  std::array<std::size_t, CU_LIMIT_MAX> limits{};
  /// A sticky error: once set, every call on this context returns it until it is destroyed
  /// (or, for a primary context, reset).
  CUresult sticky_error = CUDA_SUCCESS;
  /// Every work queue of the context: its streams, its legacy default stream and its
  /// per-thread default streams (sched.hpp). A destroyed stream's queue stays until it drains.
  std::vector<std::shared_ptr<Queue>> queues;
  Queue* legacy = nullptr;  ///< created on first use
  /// cuCtxRecordEvent's queue: each record there waits for the tails of all other queues
  /// (created on first use, one of `queues`).
  Queue* record_queue = nullptr;
  /// cuCtxWaitEvent: every operation enqueued in the context from then on waits for these
  /// records (done ones are dropped on the next enqueue).
  std::vector<std::shared_ptr<Completion>> waits;
  /// Device malloc's heap: each block by address (interpret.hpp).
  std::map<std::uint64_t, std::unique_ptr<unsigned char[]>> device_heap;
  std::size_t device_heap_used = 0;
  std::map<std::thread::id, Queue*> per_thread;  ///< created on first use
  /// The SMs its kernels run on (occupancy, cooperative limits, %nsmid): the device's, or the
  /// partition of the green context it was converted from.
  unsigned sm_count = kDeviceSmCount;
  /// For the context of a green context (cuCtxFromGreenCtx): that green context and the
  /// primary context it retains, whose modules and events it may use. nullptr otherwise.
  GreenContext* green = nullptr;
  Context* green_primary = nullptr;

  /// The context whose modules and events this one shares: itself, or a green context's
  /// primary context.
  [[nodiscard]] const Context& space() const noexcept {
    return green_primary != nullptr ? *green_primary : *this;
  }
};

/// A resource descriptor (cuDevResourceGenerateDesc): the device and the SMs it provisions.
/// The driver API has no call that destroys one, so they live until the process ends.
struct ResourceDesc {
  int device = 0;
  unsigned sm_count = 0;
};

struct Device {
  unsigned int primary_flags = 0;
  unsigned int primary_retains = 0;
  Context* primary = nullptr;  ///< live while primary_retains > 0
  /// The simulated clock, advanced by the operations that execute on the device (sched.hpp).
  unsigned long long clock_ns = 0;
  /// Bytes of device memory in use (allocations and pool reservations), of the capacity.
  unsigned long long memory_used = 0;
  MemoryPool* default_pool = nullptr;  ///< created on first use, never destroyed
  MemoryPool* current_pool = nullptr;  ///< cuDeviceSetMemPool; nullptr: the default pool
};

struct State {
  std::mutex mutex;
  std::atomic<bool> initialized{false};  ///< written under the mutex, read anywhere
  bool env_faults_installed = false;
  std::vector<Device> devices;
  std::array<Registry, SWCU_HANDLE_KIND_COUNT> registries;
  /// Handles destroyed because their context was (per kind): not live, not leaked by the
  /// program either way, but worth telling apart from explicit destruction.
  std::array<std::size_t, SWCU_HANDLE_KIND_COUNT> reclaimed{};
  unsigned long long next_context_id = 1;
  unsigned long long next_stream_id = 1;
  unsigned long long next_buffer_id = 1;
  /// Queues with operations waiting, by queue id (the scheduler's deterministic order).
  std::map<unsigned long long, Queue*> busy_queues;
  /// Signalled whenever an operation completes (threads wait here while another thread runs a
  /// host function with the mutex released).
  std::condition_variable progress;
  /// Device-side printf output not yet printed: written to stdout where a GPU flushes its
  /// printf buffer (at synchronization and context destruction; interpret.hpp).
  std::string printf_output;
  /// Every allocation and registration by base address (memory.hpp); ranges never overlap.
  std::map<std::uintptr_t, Allocation*> address_map;
  /// The devices' default memory pools (not handles a program owns, so not in a registry).
  std::vector<std::unique_ptr<Object>> default_pools;
  /// Peer access enabled with cuCtxEnablePeerAccess, as (context id, peer context id) pairs;
  /// the pairs of a context go when it is destroyed or reset (peer.cpp).
  std::set<std::pair<unsigned long long, unsigned long long>> peer_access;
  /// cuCheckpointProcess*: the process's CUprocessState. While it is not RUNNING, every other
  /// call waits (on checkpoint_resumed) until cuCheckpointProcessUnlock (core/checkpoint.cpp).
  int checkpoint_state = CU_PROCESS_STATE_RUNNING;
  std::condition_variable checkpoint_resumed;
  /// Called under the lock after each executed device operation (a layer above sets it:
  /// memory/multicast.cpp keeps multicast objects' bound memory consistent); nullptr: nothing.
  void (*after_device_work)(State&) noexcept = nullptr;
  /// The contexts of live green contexts (cuCtxFromGreenCtx handles), owned by their green
  /// context (context/green_context.hpp); State::context() finds them here.
  std::unordered_map<const void*, Context*> green_contexts;
  /// Every resource descriptor made (never destroyed: see ResourceDesc).
  std::vector<std::unique_ptr<ResourceDesc>> resource_descs;
  /// The next cuDevSmResourceSplitByCount call's id, written into the resources it returns.
  unsigned long long next_split_id = 1;
  unsigned long long next_green_id = 1;

  [[nodiscard]] Registry& registry(swcu_handle_kind kind) noexcept {
    return registries[static_cast<std::size_t>(kind)];
  }
  /// The live object of `kind` with this handle, as the type objects of that kind have, or
  /// nullptr for a stale, foreign or wrong-kind handle.
  template <class T>
  [[nodiscard]] T* find(swcu_handle_kind kind, const void* handle) noexcept {
    return static_cast<T*>(registry(kind).find(handle));
  }
  /// The device with this ordinal, or nullptr.
  [[nodiscard]] Device* device(CUdevice ordinal) noexcept;
  /// A live context of either kind, or nullptr.
  [[nodiscard]] Context* context(CUcontext handle) noexcept;
  /// Destroys a live object of `kind`: releases what it owns and keeps the object itself in the
  /// graveyard for a while.
  void destroy(swcu_handle_kind kind, const void* handle) noexcept;
  /// Destroys it as reclaimed by its context's destruction (counted in `reclaimed`).
  void reclaim(swcu_handle_kind kind, const void* handle) noexcept;

 private:
  std::deque<std::unique_ptr<Object>> graveyard_;
};

/// The one driver state (never destroyed: calls may come while the process exits).
[[nodiscard]] State& state() noexcept;
/// True after a successful cuInit; lock-free.
[[nodiscard]] bool is_initialized() noexcept;

/// The calling thread's context stack; the back is the current context. Entries may be stale
/// (destroyed by another thread, or a primary context released to zero).
[[nodiscard]] std::vector<CUcontext>& context_stack() noexcept;

/// Defaults of cuCtxGetLimit for a new context.
[[nodiscard]] std::size_t default_limit(CUlimit limit) noexcept;

}  // namespace swcu
