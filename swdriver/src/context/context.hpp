// Shared by context.cpp and primary_context.cpp.
#pragma once

#include "core/api.hpp"
#include "core/cuda_api.hpp"

namespace swcu {

/// Context creation flags: only CU_CTX_FLAGS_MASK bits, and at most one scheduling flag.
[[nodiscard]] constexpr bool valid_context_flags(unsigned int flags) noexcept {
  if ((flags & ~static_cast<unsigned int>(CU_CTX_FLAGS_MASK)) != 0) return false;
  switch (flags & CU_CTX_SCHED_MASK) {
    case CU_CTX_SCHED_AUTO:
    case CU_CTX_SCHED_SPIN:
    case CU_CTX_SCHED_YIELD:
    case CU_CTX_SCHED_BLOCKING_SYNC: return true;
    default: return false;
  }
}

/// cuCtxGetApiVersion of contexts made by the current API (3010 for the legacy cuCtxCreate).
inline constexpr int kContextApiVersion = 3020;

/// Retains the primary context of `dev` (a valid ordinal), creating it when it is not active.
Context& retain_primary(State& s, CUdevice dev);

/// Releases one reference of the primary context of `dev`; the last one runs its queued work and
/// destroys it. May release the lock. CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_CONTEXT.
CUresult release_primary(State& s, Lock& lock, CUdevice dev);

}  // namespace swcu
