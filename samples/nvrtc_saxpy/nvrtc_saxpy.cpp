// nvrtc_saxpy: the idea of NVIDIA's vectorAdd_nvrtc with cuwrap. Compiles a SAXPY kernel at
// run time with NVRTC (for the device's own architecture), loads the result, runs it and
// checks every element. On a compile error it prints the compiler's log.
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/rtc.hpp>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view source = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

}  // namespace

int main() try {
  const auto dev = cuwrap::device::get(0);
  const auto cc = dev.compute_capability();
  cuwrap::rtc::program prog{source, "saxpy.cu"};
  // PTX for the device's virtual architecture: the driver compiles it for the exact GPU.
  const auto compiled = prog.compile({.arch = cuwrap::rtc::virtual_arch(cc)});
  std::printf("compiled saxpy.cu for %s: %zu bytes of PTX\n", compiled.arch().c_str(),
              compiled.ptx().size());

  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load(ctx, compiled.ptx());
  const auto saxpy = mod.kernel<void(float, const float*, float*, int)>("saxpy");

  constexpr int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = static_cast<float>(i % 100);
    y[static_cast<std::size_t>(i)] = 1.0f;
  }
  cuwrap::device_buffer<float> dx{ctx, x.size()}, dy{ctx, y.size()};
  cuwrap::copy(s, dx, x);
  cuwrap::copy(s, dy, y);
  s.launch(saxpy, cuwrap::launch_config::linear(x.size(), 256), 2.0f, dx.data(), dy.data(), n);
  cuwrap::copy(s, y, dy);
  s.synchronize();

  for (std::size_t i = 0; i < y.size(); ++i) {
    const float expected = 2.0f * x[i] + 1.0f;
    if (std::fabs(y[i] - expected) > 1e-5f) {
      std::fprintf(stderr, "FAILED: y[%zu] = %f, expected %f\n", i, static_cast<double>(y[i]),
                   static_cast<double>(expected));
      return 1;
    }
  }
  std::puts("PASSED");
  return 0;
} catch (const cuwrap::rtc::rtc_error& e) {
  std::fprintf(stderr, "nvrtc_saxpy: compilation failed:\n%s\n", e.log().c_str());
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "nvrtc_saxpy: %s\n", e.what());
  return 1;
}
