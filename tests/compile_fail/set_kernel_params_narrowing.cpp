// expect: set_kernel_params.*Parameter = int; Argument = long int.*the conversion narrows
// Updating a kernel node's arguments refuses narrowing arguments as launches do.
#include <cuwrap/cuwrap.hpp>

void use(const cuwrap::graph_exec& e, cuwrap::graph_node node,
         const cuwrap::typed_kernel<void(float*, int)>& k, const cuwrap::launch_config& config,
         cuwrap::device_buffer<float>& buffer, long n) {
#ifdef CUWRAP_COMPILE_FAIL
  e.set_kernel_params(node, k, config, buffer, n);
#else
  e.set_kernel_params(node, k, config, buffer, static_cast<int>(n));
#endif
}
