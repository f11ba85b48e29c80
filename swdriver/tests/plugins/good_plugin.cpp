// A SWCUDA_KERNELS plug-in: registers a host function for the test kernels' saxpy.
#include <swcuda/control.h>

#include <swcuda/emulation.hpp>

namespace {

void saxpy(const swcu_launch* launch, void*) {
  const auto a = swcuda::param<float>(*launch, 0);
  const auto* x = swcuda::param<const float*>(*launch, 1);
  auto* y = swcuda::param<float*>(*launch, 2);
  const auto n = swcuda::param<int>(*launch, 3);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(block.x * launch->block[0] + thread.x);
    if (i < n) y[i] = a * x[i] + y[i];
  });
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int swcu_register_kernels(
    const swcu_control* control) {
  if (control->version < 3) return 1;
  return control->register_kernel("saxpy", &saxpy, nullptr);
}
