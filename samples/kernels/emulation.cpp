// Host emulations of the samples' kernels, for running the unchanged sample binaries on the
// software driver: it loads this plug-in when SWCUDA_KERNELS names it and calls
// swcu_register_kernels(). Each function does what the CUDA kernel of the same name does.
#include <swcuda/control.h>

#include <swcuda/emulation.hpp>

namespace {

void vector_add(const swcu_launch* launch, void*) {
  const auto* a = swcuda::param<const float*>(*launch, 0);
  const auto* b = swcuda::param<const float*>(*launch, 1);
  auto* c = swcuda::param<float*>(*launch, 2);
  const auto n = swcuda::param<int>(*launch, 3);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) c[i] = a[i] + b[i];
  });
}

void matrix_mul(const swcu_launch* launch, void*) {
  auto* c = swcuda::param<float*>(*launch, 0);
  const auto* a = swcuda::param<const float*>(*launch, 1);
  const auto* b = swcuda::param<const float*>(*launch, 2);
  const auto a_width = swcuda::param<int>(*launch, 3);
  const auto b_width = swcuda::param<int>(*launch, 4);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto row = static_cast<int>(block.y * launch->block[1] + thread.y);
    const auto col = static_cast<int>(block.x * launch->block[0] + thread.x);
    float sum = 0.0f;
    for (int k = 0; k < a_width; ++k) sum += a[row * a_width + k] * b[k * b_width + col];
    c[row * b_width + col] = sum;
  });
}

void saxpy(const swcu_launch* launch, void*) {
  const auto a = swcuda::param<float>(*launch, 0);
  const auto* x = swcuda::param<const float*>(*launch, 1);
  auto* y = swcuda::param<float*>(*launch, 2);
  const auto n = swcuda::param<int>(*launch, 3);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) y[i] = a * x[i] + y[i];
  });
}

void reduce(const swcu_launch* launch, void*) {
  const auto* in = swcuda::param<const float*>(*launch, 0);
  auto* partial = swcuda::param<float*>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  const unsigned stride = launch->grid[0] * launch->block[0];
  swcuda::for_each_block(*launch, [&](swcuda::index3 block) {
    float sum = 0.0f;
    for (unsigned t = 0; t < launch->block[0]; ++t) {
      for (auto i = block.x * launch->block[0] + t; i < static_cast<unsigned>(n); i += stride) {
        sum += in[i];
      }
    }
    partial[block.x] = sum;
  });
}

void reduce_final(const swcu_launch* launch, void*) {
  const auto* partial = swcuda::param<const float*>(*launch, 0);
  auto* result = swcuda::param<double*>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += partial[i];
  *result = sum;
}

void add_one(const swcu_launch* launch, void*) {
  auto* data = swcuda::param<float*>(*launch, 0);
  const auto n = swcuda::param<int>(*launch, 1);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) data[i] += 1.0f;
  });
}

void scale_peer(const swcu_launch* launch, void*) {
  const auto* src = swcuda::param<const float*>(*launch, 0);
  auto* dst = swcuda::param<float*>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) dst[i] = 2.0f * src[i];
  });
}

void fill_rank(const swcu_launch* launch, void*) {
  auto* data = swcuda::param<double*>(*launch, 0);
  const auto rank = swcuda::param<int>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) data[i] = rank + i * 0.5;
  });
}

void sum_all(const swcu_launch* launch, void*) {
  const auto* data = swcuda::param<const double*>(*launch, 0);
  auto* sum = swcuda::param<double*>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  double s = 0;
  for (int i = 0; i < n; ++i) s += data[i];
  *sum = s;
}

void increment(const swcu_launch* launch, void*) {
  auto* data = swcuda::param<int*>(*launch, 0);
  const auto value = swcuda::param<int>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) data[i] += value;
  });
}

void copy_ints(const swcu_launch* launch, void*) {
  auto* dst = swcuda::param<int*>(*launch, 0);
  const auto* src = swcuda::param<const int*>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  const auto stride = static_cast<int>(launch->grid[0] * launch->block[0]);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    for (auto i = static_cast<int>(launch->block[0] * block.x + thread.x); i < n; i += stride) {
      dst[i] = src[i];
    }
  });
}

void scale(const swcu_launch* launch, void*) {  // the docs/ examples' kernel
  auto* data = swcuda::param<float*>(*launch, 0);
  const auto factor = swcuda::param<float>(*launch, 1);
  const auto n = swcuda::param<int>(*launch, 2);
  swcuda::for_each_thread(*launch, [&](swcuda::index3 block, swcuda::index3 thread) {
    const auto i = static_cast<int>(launch->block[0] * block.x + thread.x);
    if (i < n) data[i] *= factor;
  });
}

void managed_saxpy(const swcu_launch* launch, void* context) { saxpy(launch, context); }

}  // namespace

extern "C" int swcu_register_kernels(const swcu_control* control) {
  return control->register_kernel("vector_add", &vector_add, nullptr) |
         control->register_kernel("matrix_mul", &matrix_mul, nullptr) |
         control->register_kernel("saxpy", &saxpy, nullptr) |
         control->register_kernel("reduce", &reduce, nullptr) |
         control->register_kernel("reduce_final", &reduce_final, nullptr) |
         control->register_kernel("add_one", &add_one, nullptr) |
         control->register_kernel("scale_peer", &scale_peer, nullptr) |
         control->register_kernel("fill_rank", &fill_rank, nullptr) |
         control->register_kernel("sum_all", &sum_all, nullptr) |
         control->register_kernel("increment", &increment, nullptr) |
         control->register_kernel("copy_ints", &copy_ints, nullptr) |
         control->register_kernel("managed_saxpy", &managed_saxpy, nullptr) |
         control->register_kernel("scale", &scale, nullptr);
}
