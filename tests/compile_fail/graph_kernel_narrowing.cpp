// expect: ArgumentIndex = 1; Parameter = float; Argument = double.*add_kernel.*conversion narrows
// A graph kernel node refuses narrowing arguments as launches do, and takes device memory for
// pointer parameters.
#include <cuwrap/cuwrap.hpp>

void use(const cuwrap::graph& g, const cuwrap::typed_kernel<void(float*, float)>& k,
         const cuwrap::launch_config& config, cuwrap::device_buffer<float>& buffer) {
#ifdef CUWRAP_COMPILE_FAIL
  (void)g.add_kernel(k, config, {}, buffer, 2.0);
#else
  (void)g.add_kernel(k, config, {}, buffer, 2.0f);
#endif
}
