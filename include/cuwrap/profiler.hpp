// The profiler's collection range: cuProfilerStart / cuProfilerStop around a region, so that a
// profiling tool started with collection off (nsys --capture-range=cudaProfilerApi, ncu
// --profile-from-start off) records only that region.
#pragma once

#include <source_location>

#include "cuwrap/context.hpp"

namespace cuwrap {

/// Enables profile collection by the active profiling tool for `ctx` for this object's life
/// (cuProfilerStart with `ctx` made current if it is not; the destructor calls cuProfilerStop
/// the same way and never throws). Without a tool both calls do nothing. Ranges do not nest in
/// the driver: the first stop ends collection.
class profiler_range {
 public:
  /// Starts collection. Throws cuwrap::error if the driver refuses, cuwrap::usage_error for a
  /// moved-from context.
  explicit profiler_range(context_ref ctx,
                          std::source_location where = std::source_location::current());
  ~profiler_range();
  profiler_range(const profiler_range&) = delete;
  profiler_range& operator=(const profiler_range&) = delete;

 private:
  context_ref ctx_;
};

}  // namespace cuwrap
