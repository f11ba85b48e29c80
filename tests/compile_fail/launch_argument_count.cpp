// expect: the number of arguments differs from the kernel's parameters
// A typed launch with too few arguments does not compile.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, int)>& k,
         const cuwrap::launch_config& config, float* p) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, p);
#else
  cuwrap::launch(s, k, config, p, 1);
#endif
}
