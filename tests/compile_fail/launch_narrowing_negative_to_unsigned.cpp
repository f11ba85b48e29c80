// expect: ArgumentIndex = 1; Parameter = unsigned int; Argument = int.*the conversion narrows
// A typed launch refuses an int (even the literal -1) for an unsigned parameter: by the rules of
// list-initialization an int argument narrows to unsigned. An unsigned literal compiles.
#include <cuwrap/cuwrap.hpp>

void use(cuwrap::stream_ref s, const cuwrap::typed_kernel<void(float*, unsigned)>& k,
         const cuwrap::launch_config& config, float* p) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::launch(s, k, config, p, -1);
#else
  cuwrap::launch(s, k, config, p, 1u);
#endif
}
