// expect: Parameter = int\*; Argument = cuwrap::device_buffer<float>&.*add_kernel.*device memory
// A graph kernel node checks the element type of device memory arguments at compile time.
#include <cuwrap/cuwrap.hpp>

void use(const cuwrap::graph& g, const cuwrap::typed_kernel<void(int*)>& ints,
         const cuwrap::typed_kernel<void(const float*)>& floats,
         const cuwrap::launch_config& config, cuwrap::device_buffer<float>& buffer) {
#ifdef CUWRAP_COMPILE_FAIL
  (void)g.add_kernel(ints, config, {}, buffer);
#else
  (void)g.add_kernel(floats, config, {}, buffer);
#endif
  (void)ints;
}
