// Helpers that give every implemented export the same shape:
//
//   CUresult cuThing(int* out) {
//     return swcu::call(swcu::Sym::cuThing, [&](swcu::State& s) -> CUresult { ... });
//   }
//
// call() runs the prologue (count, fault rules), takes the state lock, requires a successful
// cuInit and turns exceptions into error codes (none may cross the C ABI).
#pragma once

#include <cstring>
#include <exception>
#include <mutex>
#include <new>

#include "cuda_api.hpp"
#include "prologue.hpp"
#include "state.hpp"
#include "symbols.hpp"

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

/// The prologue as a CUresult: CUDA_SUCCESS to go on, else the injected fault.
[[nodiscard]] inline CUresult prologue(Sym sym) noexcept {
  return static_cast<CUresult>(enter(sym));
}

/// Runs `body(state)` under the state lock, without requiring cuInit.
template <class Body>
[[nodiscard]] CUresult call_uninitialized(Sym sym, Body&& body) noexcept {
  if (const CUresult fault = prologue(sym)) return fault;
  try {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return body(s);
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

/// Runs `body(state)` under the state lock; CUDA_ERROR_NOT_INITIALIZED before cuInit.
template <class Body>
[[nodiscard]] CUresult call(Sym sym, Body&& body) noexcept {
  return call_uninitialized(sym, [&body](State& s) -> CUresult {
    if (!s.initialized.load(std::memory_order_relaxed)) return CUDA_ERROR_NOT_INITIALIZED;
    return body(s);
  });
}

/// The calling thread's current context: CUDA_ERROR_INVALID_CONTEXT when there is none,
/// CUDA_ERROR_CONTEXT_IS_DESTROYED when it was destroyed while current (call under the lock).
[[nodiscard]] CUresult current_context(State& s, Context*& out) noexcept;

/// `handle`, or the current context when it is NULL: CUDA_ERROR_INVALID_CONTEXT for a handle
/// that is not a live context (call under the lock).
[[nodiscard]] CUresult context_or_current(State& s, CUcontext handle, Context*& out) noexcept;

}  // namespace swcu
