// expect: an argument does not convert to its parameter's type
// A typed launch with an argument of the wrong type does not compile.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, int)>& k,
         const cuwrap::launch_config& config, float* p, const double* q) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, q, 1);
#else
  cuwrap::launch(s, k, config, p, 1);
#endif
  (void)q;
}
