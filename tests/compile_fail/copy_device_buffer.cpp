// expect: use of deleted function .+cuwrap::device_buffer<float>::device_buffer\(const cuwrap::
// A cuwrap::device_buffer owns its memory: it moves, it does not copy.
#include <cuwrap/cuwrap.hpp>
#include <utility>

cuwrap::device_buffer<float> take(cuwrap::device_buffer<float>& original) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::device_buffer<float> copy = original;
#else
  cuwrap::device_buffer<float> copy = std::move(original);
#endif
  return copy;
}
