// The fault sweep: run a scenario once to learn which driver calls it makes, then again once
// per call with that call failing, and check each time that an error with the injected code
// escapes, nothing leaks and the context stack is back to empty.
#pragma once

#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

namespace cuwrap::testing {

struct fault_sweep_options {
  /// The code injected into each call in turn.
  CUresult code = CUDA_ERROR_UNKNOWN;
  /// Substrings of exported names not to fail: calls made by destructors, which report
  /// through the nothrow handler instead of throwing.
  std::vector<std::string> skip = {"Destroy", "Release", "Free", "Unload", "Unregister"};
};

/// Sweeps `scenario` (which must succeed on its own, with no failure reported by a destructor,
/// and clean up after itself) and returns how many injection points it tried. Each failing call
/// must either throw a cuwrap::error with the injected code, or (for calls destructors make) be
/// reported to the nothrow handler. Failures are reported as doctest checks that name the failing
/// call ("cuCtxCreate_v4 call 1 of 1").
int fault_sweep(const std::function<void()>& scenario, const fault_sweep_options& options = {});

}  // namespace cuwrap::testing
