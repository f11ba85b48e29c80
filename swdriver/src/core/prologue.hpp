// What every export runs first: count the call, then apply the fault rules.
// Free of cuda.h (exports.cpp uses it); codes are plain ints equal to CUresult values.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/symbols.hpp"

namespace swcu {

/// What the fault rules decided for one call.
struct Fault {
  int code = 0;         ///< 0: no rule fired; else the CUresult to fail with
  bool async = false;   ///< fail the call's stream operation when it executes, not the call
  bool sticky = false;  ///< the failure also breaks the context until it is destroyed
};

/// Counts a call of `sym`, then applies the fault rules to it. Returns a Fault with code 0 to
/// go on, or the fault of the rule that fired; unless the fault is asynchronous and the call
/// enqueues stream work, the caller returns its code before touching any state or output.
[[nodiscard]] Fault enter(Sym sym) noexcept;

/// The whole body of an export without an implementation: the prologue, then
/// CUDA_ERROR_NOT_PERMITTED inside a host function, CUDA_ERROR_NOT_INITIALIZED before a
/// successful cuInit, CUDA_ERROR_NOT_SUPPORTED after it.
[[nodiscard]] int unimplemented(Sym sym) noexcept;

/// True on a thread while it runs a host function or stream callback: every driver call made
/// there returns CUDA_ERROR_NOT_PERMITTED.
[[nodiscard]] bool& in_host_function() noexcept;

/// Makes the calling thread's current context sticky-broken with `code` (a sticky fault that
/// fired at the call); nothing when no live context is current. Takes the state lock.
void break_current_context(int code) noexcept;

/// Calls of one export since the last reset.
[[nodiscard]] unsigned long long call_count(Sym sym) noexcept;
/// Calls of `name`: every variant of a base name, else the export of that exact name, else 0.
[[nodiscard]] unsigned long long call_count(std::string_view name) noexcept;
/// Calls of every export since the last reset.
[[nodiscard]] unsigned long long total_call_count() noexcept;
void reset_call_counts() noexcept;

}  // namespace swcu
