// expect: ArgumentIndex = 1; Parameter = float; Argument = double.*the conversion narrows
// A typed launch refuses a double for a float parameter (narrowing); exact and widening
// arguments (float to float, float to double, int to long, T* to const T*) compile.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, float, double, long)>& k,
         const cuwrap::typed_kernel<void(const float*)>& reader,
         const cuwrap::launch_config& config, float* p, double d, float f, int i) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, p, d, d, 1L);
#else
  cuwrap::launch(s, k, config, p, f, f, i);
  cuwrap::launch(s, reader, config, p);
#endif
  (void)d;
}
