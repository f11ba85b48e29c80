// What every export runs first: count the call, then apply the fault rules.
// Free of cuda.h (exports.cpp uses it); codes are plain ints equal to CUresult values.
#pragma once

#include <cstddef>
#include <string_view>

#include "symbols.hpp"

namespace swcu {

/// Counts a call of `sym`, then applies the fault rules to it. Returns 0 to go on, or the
/// (non-zero) CUresult of the fault rule that fired; the caller returns it before touching any
/// state or output argument.
[[nodiscard]] int enter(Sym sym) noexcept;

/// The whole body of an export without an implementation: the prologue, then
/// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit, CUDA_ERROR_NOT_SUPPORTED after it.
[[nodiscard]] int unimplemented(Sym sym) noexcept;

/// Calls of one export since the last reset.
[[nodiscard]] unsigned long long call_count(Sym sym) noexcept;
/// Calls of `name`: every variant of a base name, else the export of that exact name, else 0.
[[nodiscard]] unsigned long long call_count(std::string_view name) noexcept;
/// Calls of every export since the last reset.
[[nodiscard]] unsigned long long total_call_count() noexcept;
void reset_call_counts() noexcept;

}  // namespace swcu
