// expect: copy\(\) into const memory
// Copying into a span of const elements does not compile.
#include <cuwrap/cuwrap.hpp>
#include <span>

void use(cuwrap::device_span<const float> dst, cuwrap::device_span<float> writable,
         std::span<const float> src) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::copy(dst, src);
#else
  cuwrap::copy(writable, src);
#endif
  (void)dst;
}
