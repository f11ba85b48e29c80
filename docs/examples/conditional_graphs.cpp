// docs/graphs.md: a while node whose body scales an array and counts down, the condition set
// from the device by cudaGraphSetConditional; an if-else node picking one of two bodies.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "scale_ptx.hpp"

namespace {
// nvcc -ptx -arch=compute_90 of:
//   extern "C" __global__ void count_down(cudaGraphConditionalHandle condition, int* counter) {
//     if (threadIdx.x == 0) cudaGraphSetConditional(condition, --*counter > 0 ? 1u : 0u);
//   }
constexpr const char* count_down_ptx = R"(
.version 9.0
.target sm_90
.address_size 64
	// .globl	count_down
.extern .func cudaGraphSetConditional
(
	.param .b64 cudaGraphSetConditional_param_0,
	.param .b32 cudaGraphSetConditional_param_1
)
;
.visible .entry count_down(
	.param .u64 count_down_param_0,
	.param .u64 count_down_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [count_down_param_0];
	ld.param.u64 	%rd2, [count_down_param_1];
	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd2;
	ld.global.u32 	%r2, [%rd3];
	add.s32 	%r3, %r2, -1;
	st.global.u32 	[%rd3], %r3;
	setp.gt.s32 	%p2, %r2, 1;
	selp.u32 	%r4, 1, 0, %p2;
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r4;
	call.uni 
	cudaGraphSetConditional, 
	(
	param0, 
	param1
	);
	} // callseq 0
$L__BB0_2:
	ret;
}
)";
}  // namespace

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  const auto scale_mod = cuwrap::module::load(ctx, std::string_view{examples::scale_ptx});
  const auto scale = scale_mod.kernel<void(float*, float, int)>("scale");
  const auto loop_mod = cuwrap::module::load(ctx, std::string_view{count_down_ptx});
  const auto count_down = loop_mod.kernel<void(CUgraphConditionalHandle, int*)>("count_down");
  constexpr int n = 256;
  const auto config = cuwrap::launch_config::linear(n, 128);
  const cuwrap::launch_config one_warp{{1}, {32}};
  cuwrap::device_buffer<float> data{ctx, n};
  cuwrap::device_buffer<int> counter{ctx, 1};

  // while (counter > 0) { data *= 2; --counter; }, with counter = 4: data = 16.
  cuwrap::graph g{ctx};
  const auto fill = g.add_fill(data, 1.0f);
  const auto start = g.add_fill(counter, 4, fill);
  const auto more = g.make_condition(1);  // 1 at the start of each launch: a do-while
  const auto loop = g.add_conditional(more, cuwrap::conditional::while_loop, start);
  const auto twice = loop.body().add_kernel(scale, config, {}, data.data(), 2.0f, n);
  loop.body().add_kernel(count_down, one_warp, twice, more, counter.data());

  // if (flag) data *= 3; else data *= 5; here the flag is the condition's default value.
  const auto flag = g.make_condition(0);
  const auto branch = g.add_conditional(flag, cuwrap::conditional::if_else, loop.node);
  branch.body(0).add_kernel(scale, config, {}, data.data(), 3.0f, n);
  {  // a body can also be captured from a stream
    auto capture = cuwrap::capture_into(s, branch.body(1));
    s.launch(scale, config, data.data(), 5.0f, n);
    capture.end();
  }

  auto exec = g.instantiate();
  exec.launch(s);
  std::vector<float> result(n);
  cuwrap::copy(s, result, data);
  s.synchronize();
  const bool ok = result == std::vector<float>(n, 16.0f * 5.0f);
  std::printf("while then else: %g (expected 80)\n", static_cast<double>(result[0]));
  std::fputs(g.to_labelled_dot().c_str(), stdout);  // node kinds and the lines that added them
  std::puts(ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "conditional_graphs: %s\n", e.what());
  return 1;
}
