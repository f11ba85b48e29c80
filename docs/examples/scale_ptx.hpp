// The `scale` kernel of the docs/ examples, as PTX (which the software driver interprets, as a
// GPU's driver compiles it).
#pragma once

namespace examples {
// nvcc -ptx -arch=compute_90 of:
//   extern "C" __global__ void scale(float* data, float factor, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) data[i] *= factor;
//   }
inline constexpr const char* scale_ptx = R"(
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
}  // namespace examples
