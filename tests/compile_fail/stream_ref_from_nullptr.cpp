// expect: use of deleted function .+cuwrap::stream_ref::stream_ref\(std::nullptr_t\)
// `stream_ref(nullptr)` does not compile either.
#include <cuwrap/cuwrap.hpp>

cuwrap::stream_ref pick() {
#ifdef CUWRAP_COMPILE_FAIL
  return cuwrap::stream_ref(nullptr);
#else
  return cuwrap::stream_ref::per_thread();
#endif
}
