// docs/modules-and-kernels.md and docs/launch.md: load PTX, look up a typed kernel, launch it.
#include <cuwrap/cuwrap.hpp>

#include <cstdio>
#include <vector>

namespace {
// nvcc -ptx -arch=compute_90 of:
//   extern "C" __global__ void scale(float* data, float factor, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) data[i] *= factor;
//   }
constexpr const char* scale_ptx = R"(
.version 9.0
.target sm_90
.address_size 64
.visible .entry scale(
	.param .u64 scale_param_0,
	.param .f32 scale_param_1,
	.param .u32 scale_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.f32 	%f1, [scale_param_1];
	ld.param.u32 	%r2, [scale_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f2, [%rd4];
	mul.f32 	%f3, %f2, %f1;
	st.global.f32 	[%rd4], %f3;
$L__BB0_2:
	ret;
}
)";
}  // namespace

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load(ctx, std::string_view{scale_ptx});
  // The signature is checked against the kernel's parameter layout here, once.
  const auto scale = mod.kernel<void(float*, float, int)>("scale");
  std::printf("scale: %zu parameters, up to %d threads per block\n", scale.params().size(),
              scale.max_threads_per_block());

  constexpr int n = 1000;
  cuwrap::device_buffer<float> data{ctx, n};
  cuwrap::fill(s, data, 1.0f);
  s.launch(scale, cuwrap::launch_config::linear(n, 256), data.data(), 2.0f, n);  // one call
  std::vector<float> host(n);
  cuwrap::copy(s, host, data);
  s.synchronize();
  std::printf("host[0] = %g (2 on a GPU; 1 on the software driver, which has no emulation of "
              "scale registered)\n",
              static_cast<double>(host[0]));
  return scale.params().size() == 3 ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
