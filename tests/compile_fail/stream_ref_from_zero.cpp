// expect: use of deleted function .+cuwrap::stream_ref::stream_ref\(int\)
// `stream_ref(0)` does not compile: the legacy default stream is named, never a zero.
#include <cuwrap/cuwrap.hpp>

cuwrap::stream_ref pick() {
#ifdef CUWRAP_COMPILE_FAIL
  return cuwrap::stream_ref(0);
#else
  return cuwrap::stream_ref::legacy();
#endif
}
