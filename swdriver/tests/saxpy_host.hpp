// The one host stand-in for kernels/sw_kernels.cu's saxpy (y = a * x + y over n floats), shared
// by the launch tests and the SWCUDA_KERNELS plug-in (plugins/good_plugin.cpp): what a
// registered host function looks like.
#pragma once

#include <swcuda/control.h>

#include <swcuda/emulation.hpp>

namespace swcu::test {

/// saxpy(float a, const float* x, float* y, int n), run on the host for every thread.
inline void saxpy_host(const swcu_launch* launch, void* /*user*/) {
  const auto a = swcuda::param<float>(*launch, 0);
  const auto* x = swcuda::param<const float*>(*launch, 1);
  auto* y = swcuda::param<float*>(*launch, 2);
  const auto n = swcuda::param<int>(*launch, 3);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(block.x * launch->block[0] + thread.x);
    if (i < n) y[i] = a * x[i] + y[i];
  });
}

}  // namespace swcu::test
