// expect: satisfaction of .+exportable<T>.+ \[with T = rgb\]
// An element type without a DLPack type (no dlpack::element_type<T>) cannot be exported.
#include <cstdint>
#include <cuwrap/dlpack.hpp>
#include <utility>

struct rgb {
  std::uint8_t r, g, b;
};

#ifdef CUWRAP_COMPILE_FAIL
cuwrap::dlpack::unique_tensor give(cuwrap::device_buffer<rgb>& buffer) {
  return cuwrap::dlpack::to_dlpack(std::move(buffer));
}
#else
cuwrap::dlpack::unique_tensor give(cuwrap::device_buffer<std::uint8_t>& buffer) {
  return cuwrap::dlpack::to_dlpack(std::move(buffer));
}
#endif
