// expect: ArgumentIndex = 0; Parameter = float; Argument = int.*the conversion narrows
// A typed launch refuses an int variable for a float parameter (integer to floating point
// narrows by the rules of list-initialization); a float compiles.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float, float*)>& k,
         const cuwrap::launch_config& config, float* p, int n) {
#ifdef CUWRAP_COMPILE_FAIL
  s.launch(k, config, n, p);
#else
  s.launch(k, config, static_cast<float>(n), p);
#endif
}
