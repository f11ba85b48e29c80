// expect: add_kernel: the number of arguments differs from the kernel's parameters
// A typed graph kernel node with too many arguments does not compile.
#include <cuwrap/cuwrap.hpp>

void use(const cuwrap::graph& g, const cuwrap::typed_kernel<void(float*, int)>& k,
         const cuwrap::launch_config& config, float* p) {
#ifdef CUWRAP_COMPILE_FAIL
  (void)g.add_kernel(k, config, {}, p, 1, 2);
#else
  (void)g.add_kernel(k, config, {}, p, 1);
#endif
}
