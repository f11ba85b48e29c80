// A SWCUDA_KERNELS plug-in: registers a host function for the test kernels' saxpy.
#include <swcuda/control.h>

#include "../saxpy_host.hpp"

extern "C" __attribute__((visibility("default"))) int swcu_register_kernels(
    const swcu_control* control) {
  if (control->version < 3) return 1;
  return control->register_kernel("saxpy", &swcu::test::saxpy_host, nullptr);
}
