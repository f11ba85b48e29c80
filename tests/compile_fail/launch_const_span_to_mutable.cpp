// expect: Parameter = float\*; Argument = cuwrap::device_span<const float>.*device memory passes
// A span of const elements does not pass to a pointer to mutable elements; to a const one it
// does, and every device memory owner passes to its element pointer.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, const float*)>& k,
         const cuwrap::launch_config& config, cuwrap::device_span<const float> in,
         cuwrap::managed_buffer<float>& managed, cuwrap::stream_ordered_buffer<float>& ordered,
         cuwrap::pinned_buffer<float>& mapped) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, in, in);
#else
  cuwrap::launch(s, k, config, managed, in);
  cuwrap::launch(s, k, config, ordered, ordered.span());
  cuwrap::launch(s, k, config, mapped.device(), managed);
#endif
}
