// Driver calls that need a current context (private to src/). NVIDIA's driver answers
// CUDA_ERROR_INVALID_CONTEXT from cuGraphInstantiate*, cuMemAdvise and every cuOccupancy*
// function when no context is current (seen on an H200, driver 580.159.04), even when the
// graph, memory or kernel says which context it belongs to.
#pragma once

#include <source_location>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::detail {

/// Calls `call()` (the usual path: one driver call). When it fails with
/// CUDA_ERROR_INVALID_CONTEXT and no context is current, asks `find_context()` for the context
/// the call belongs to and, when there is one, makes it current and calls once more (the cold
/// path: cuCtxGetCurrent, what find_context does, cuCtxPushCurrent, the call, cuCtxPopCurrent).
template <class FindContext, class Call>
[[nodiscard]] CUresult call_in_context_of(FindContext&& find_context, Call&& call,
                                          std::source_location where) {
  const CUresult first = call();
  if (first != CUDA_ERROR_INVALID_CONTEXT) [[likely]] {
    return first;
  }
  CUcontext current = nullptr;
  check(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent", where);
  if (current != nullptr) {
    return first;  // a context is current: the driver refused it, not the lack of one
  }
  const CUcontext ctx = find_context();
  if (ctx == nullptr) {
    return first;
  }
  const scoped_current_context scope{context_ref{ctx}, where};
  return call();
}

/// call_in_context_of() with a known context (null: none to try).
template <class Call>
[[nodiscard]] CUresult call_in_context(CUcontext ctx, Call&& call, std::source_location where) {
  return call_in_context_of([ctx] { return ctx; }, std::forward<Call>(call), where);
}

}  // namespace cuwrap::detail
