// expect: copy\(\) between different element types
// Copying between spans of different element types does not compile.
#include <cuwrap/cuwrap.hpp>
#include <span>

void use(cuwrap::device_span<float> dst, std::span<const int> ints, std::span<const float> src) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::copy(dst, ints);
#else
  cuwrap::copy(dst, src);
#endif
  (void)ints;
}
