// expect: device memory holds trivially copyable types
// Device memory of a type that is not trivially copyable does not compile.
#include <cuwrap/cuwrap.hpp>
#include <string>

#ifdef CUWRAP_COMPILE_FAIL
using element = std::string;
#else
using element = int;
#endif

std::size_t bytes(const cuwrap::device_buffer<element>& b) { return b.size_bytes(); }
