// expect: cannot bind rvalue reference of type .+cuwrap::device_buffer<float>&&
// Exporting a buffer hands it to the tensor: it takes an rvalue (std::move), never a copy.
#include <cuwrap/dlpack.hpp>
#include <utility>

cuwrap::dlpack::unique_tensor give(cuwrap::device_buffer<float>& buffer) {
#ifdef CUWRAP_COMPILE_FAIL
  return cuwrap::dlpack::to_dlpack(buffer);
#else
  return cuwrap::dlpack::to_dlpack(std::move(buffer));
#endif
}
