// Compiles a SAXPY kernel to PTX at run time with NVRTC and prints its size. Needs no GPU and
// no driver: NVRTC is a compiler library. Links cuwrap::rtc.
#include <cstdio>
#include <cuwrap/rtc.hpp>
#include <exception>
#include <string_view>

int main() {
  constexpr std::string_view source = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
)";
  try {
    cuwrap::rtc::program prog{source, "saxpy.cu"};
    // compute_90: PTX that any device of compute capability 9.0 or newer can load.
    const auto out = prog.compile({.arch = "compute_90", .standard = "c++17"});
    const auto& ptx = out.ptx();  // cuwrap::module::load(ctx, ptx) would JIT it for the GPU
    if (ptx.find(".visible .entry saxpy") == std::string_view::npos) {
      std::fprintf(stderr, "the PTX has no saxpy entry\n");
      return 1;
    }
    const auto v = cuwrap::rtc::nvrtc_version();
    std::printf("NVRTC %d.%d compiled %s to %zu bytes of PTX\n", v.major, v.minor,
                out.name().c_str(), ptx.size());
    return 0;
  } catch (const cuwrap::rtc::rtc_error& e) {
    std::fprintf(stderr, "%s\n", e.what());  // the message quotes the compiler's log
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
