// Helpers that give every implemented export the same shape:
//
//   CUresult cuThing(int* out) {
//     return swcu::call(swcu::Sym::cuThing, [&](swcu::State& s) -> CUresult { ... });
//   }
//
// call() runs the prologue (count, fault rules), refuses calls from host functions, takes the
// state lock, requires a successful cuInit and turns exceptions into error codes (none may cross
// the C ABI). A body that takes (State&, Lock&) may release the lock (to run host functions):
// after any scheduler call it must look its objects up again.
#pragma once

#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <type_traits>

#include "core/cuda_api.hpp"
#include "core/logs.hpp"
#include "core/prologue.hpp"
#include "core/state.hpp"
#include "core/symbols.hpp"

namespace swcu {

/// The int a caller passed for an enum parameter. Callers may pass any value, and reading one
/// outside the enumerators as the enum type is undefined, so enum arguments are only ever read
/// through this (and compared as ints).
template <class Enum>
[[nodiscard]] int raw(const Enum& value) noexcept {
  static_assert(sizeof(Enum) == sizeof(int));
  int bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// The state lock as the bodies that may release it see it (the scheduler releases it while a
/// host function runs).
using Lock = std::unique_lock<std::mutex>;

/// The asynchronous fault of the call in progress on this thread, for the stream operation it
/// enqueues (sched.cpp takes it); code 0 when there is none.
[[nodiscard]] Fault& pending_async_fault() noexcept;

/// Runs the destructors of user objects whose last reference went during the call
/// (user_object.hpp); every export runs it after releasing the state lock.
void run_deferred_destructors() noexcept;

/// The prologue of an export that needs no state lock: CUDA_SUCCESS to go on, else the injected
/// fault (sync) or CUDA_ERROR_NOT_PERMITTED inside a host function.
[[nodiscard]] inline CUresult prologue(Sym sym) noexcept {
  if (const Fault fault = enter(sym); fault.code != 0) {
    if (fault.sticky) break_current_context(fault.code);
    return static_cast<CUresult>(fault.code);
  }
  return in_host_function() ? CUDA_ERROR_NOT_PERMITTED : CUDA_SUCCESS;
}

namespace detail {

// The cuCheckpointProcess* exports, which work on a locked process.
[[nodiscard]] constexpr bool is_checkpoint_call(Sym sym) noexcept {
  return sym == Sym::cuCheckpointProcessGetState || sym == Sym::cuCheckpointProcessLock ||
         sym == Sym::cuCheckpointProcessCheckpoint || sym == Sym::cuCheckpointProcessRestore ||
         sym == Sym::cuCheckpointProcessUnlock || sym == Sym::cuCheckpointProcessGetRestoreThreadId;
}

// The shape of every export: prologue (count, fault rules), the host-function check, the state
// lock, the cuInit check, and no exception crossing the C ABI. With kAsync, a rule marked
// ':async' does not fail the call: it is handed to the operation the call enqueues.
template <bool kAsync, class Body>
[[nodiscard]] CUresult run(Sym sym, bool need_init, Body& body) noexcept {
  const Fault fault = enter(sym);
  if (fault.code != 0 && !(kAsync && fault.async)) {
    if (fault.sticky) break_current_context(fault.code);
    return static_cast<CUresult>(fault.code);
  }
  if (in_host_function()) return CUDA_ERROR_NOT_PERMITTED;
  struct AsyncScope {
    explicit AsyncScope(const Fault& f) noexcept { pending_async_fault() = f; }
    ~AsyncScope() { pending_async_fault() = {}; }
    AsyncScope(const AsyncScope&) = delete;
    AsyncScope& operator=(const AsyncScope&) = delete;
  };
  CUresult result = CUDA_SUCCESS;
  try {
    State& s = state();
    Lock lock(s.mutex);
    // "CUDA API locks are taken so further CUDA API calls will block" (CU_PROCESS_STATE_LOCKED).
    if (s.checkpoint_state != CU_PROCESS_STATE_RUNNING && !is_checkpoint_call(sym)) [[unlikely]] {
      s.checkpoint_resumed.wait(lock,
                                [&s] { return s.checkpoint_state == CU_PROCESS_STATE_RUNNING; });
    }
    if (need_init && !s.initialized.load(std::memory_order_relaxed)) {
      return CUDA_ERROR_NOT_INITIALIZED;
    }
    const AsyncScope scope(fault);
    if constexpr (std::is_invocable_v<Body&, State&, Lock&>) {
      result = body(s, lock);
    } else {
      result = body(s);
    }
  } catch (const std::bad_alloc&) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    result = CUDA_ERROR_UNKNOWN;
  }
  run_deferred_destructors();  // outside the lock
  deliver_logs();
  return result;
}

}  // namespace detail

/// Runs `body(state)` (or `body(state, lock)`) under the state lock, without requiring cuInit.
template <class Body>
[[nodiscard]] CUresult call_uninitialized(Sym sym, Body&& body) noexcept {
  return detail::run<false>(sym, false, body);
}

/// Runs `body(state)` (or `body(state, lock)`) under the state lock;
/// CUDA_ERROR_NOT_INITIALIZED before cuInit.
template <class Body>
[[nodiscard]] CUresult call(Sym sym, Body&& body) noexcept {
  return detail::run<false>(sym, true, body);
}

/// call() for an export that enqueues stream work: an ':async' fault rule that fires on it
/// fails the enqueued operation when it executes instead of the call.
template <class Body>
[[nodiscard]] CUresult call_async(Sym sym, Body&& body) noexcept {
  return detail::run<true>(sym, true, body);
}

/// The calling thread's current context: CUDA_ERROR_INVALID_CONTEXT when there is none,
/// CUDA_ERROR_CONTEXT_IS_DESTROYED when it was destroyed while current, its sticky error when
/// it has one (call under the lock).
[[nodiscard]] CUresult current_context(State& s, Context*& out) noexcept;

/// `handle`, or the current context when it is NULL: CUDA_ERROR_INVALID_CONTEXT for a handle
/// that is not a live context, its sticky error when it has one (call under the lock).
[[nodiscard]] CUresult context_or_current(State& s, CUcontext handle, Context*& out) noexcept;

}  // namespace swcu
