// expect: a temporary buffer would be freed while the kernel runs
// A temporary buffer cannot be a kernel argument (it would be freed before the kernel ran); a
// named one can, in typed and untyped launches.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::kernel& k, const cuwrap::primary_context& ctx,
         const cuwrap::launch_config& config, cuwrap::device_buffer<float>& buffer) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, cuwrap::device_buffer<float>{ctx, 4}, 4);
#else
  cuwrap::launch(s, k, config, buffer, 4);
#endif
  (void)ctx;
}
