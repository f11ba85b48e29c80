// expect: add_kernel.*an argument does not convert to its parameter.s type
// A typed graph kernel node with an argument of the wrong type does not compile.
#include <cuwrap/cuwrap.hpp>

void use(const cuwrap::graph& g, const cuwrap::typed_kernel<void(float*, int)>& k,
         const cuwrap::launch_config& config, float* p, int* q) {
#ifdef CUWRAP_COMPILE_FAIL
  (void)g.add_kernel(k, config, {}, q, 1);
#else
  (void)g.add_kernel(k, config, {}, p, 1);
#endif
  (void)q;
}
