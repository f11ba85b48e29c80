// expect: ArgumentIndex = 1; Parameter = int; Argument = long int.*the conversion narrows
// A typed launch refuses a long for an int parameter; an int, a short or an explicit cast
// compiles.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, int)>& k,
         const cuwrap::launch_config& config, float* p, long n, short m) {
#ifdef CUWRAP_COMPILE_FAIL
  s.launch(k, config, p, n);
#else
  s.launch(k, config, p, static_cast<int>(n));
  s.launch(k, config, p, m);
#endif
}
