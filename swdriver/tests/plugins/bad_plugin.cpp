// A SWCUDA_KERNELS plug-in whose registration fails.
#include <swcuda/control.h>

extern "C" __attribute__((visibility("default"))) int swcu_register_kernels(const swcu_control*) {
  return 7;
}
