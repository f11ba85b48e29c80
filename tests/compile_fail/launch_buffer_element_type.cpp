// expect: Parameter = int\*; Argument = cuwrap::device_buffer<float>&.*device memory passes
// A device_buffer<float> passes to a float* or const float* parameter, not to an int* one.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(int*, int)>& ints,
         const cuwrap::typed_kernel<void(float*, const float*)>& floats,
         const cuwrap::launch_config& config, cuwrap::device_buffer<float>& buffer) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, ints, config, buffer, 1);
#else
  cuwrap::launch(s, floats, config, buffer, buffer);
#endif
  (void)ints;
}
