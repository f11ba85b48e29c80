#include "cuwrap/profiler.hpp"

namespace cuwrap {

profiler_range::profiler_range(context_ref ctx, std::source_location where) : ctx_{ctx} {
  detail::expect_argument_not_moved_from(!ctx.empty(), "profiler_range", "profiler_range",
                                         "context", where);
  const scoped_current_context current{ctx, where};
  check(detail::driver().cuProfilerStart(), "cuProfilerStart", where);
}

profiler_range::~profiler_range() {
  const auto& d = detail::driver();
  CUcontext current{};
  const CUresult got = d.cuCtxGetCurrent(&current);
  check_nothrow(got, "cuCtxGetCurrent");
  if (got != CUDA_SUCCESS) {
    return;
  }
  const bool push = current != ctx_.get();
  const CUresult pushed = push ? d.cuCtxPushCurrent(ctx_.get()) : CUDA_SUCCESS;
  check_nothrow(pushed, "cuCtxPushCurrent");
  if (pushed != CUDA_SUCCESS) {
    return;
  }
  check_nothrow(d.cuProfilerStop(), "cuProfilerStop");
  if (push) {
    CUcontext popped{};
    check_nothrow(d.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

}  // namespace cuwrap
