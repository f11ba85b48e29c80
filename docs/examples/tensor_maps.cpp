// docs/tensor-maps.md: a tiled tensor map over a device buffer, checked by the builder, and a
// kernel that loads 16 x 8 boxes of it through the tensor memory accelerator.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string_view>
#include <vector>

namespace {

// Block (bx, by) loads the box at (16 bx, 8 by) into shared memory (cp.async.bulk.tensor,
// completing an mbarrier) and writes its 128 floats to out[128 * (by * nctaid.x + bx) ...].
constexpr std::string_view load_box_ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry load_box(.param .align 64 .b8 map[128], .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<3>;
  .shared .align 128 .b8 box[512];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READY;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mov.u64 %rd1, map;
  cvta.param.u64 %rd1, %rd1;
  mov.u32 %r2, %ctaid.x;
  shl.b32 %r2, %r2, 4;
  mov.u32 %r3, %ctaid.y;
  shl.b32 %r3, %r3, 3;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [box], [%rd1, {%r2, %r3}], [bar];
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 512;
READY:
  bar.sync 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
  mov.u32 %r4, %ctaid.y;
  mov.u32 %r5, %nctaid.x;
  mov.u32 %r6, %ctaid.x;
  mad.lo.u32 %r4, %r4, %r5, %r6;
  mad.lo.u32 %r4, %r4, 128, %r1;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r4, 4;
  add.u64 %rd2, %rd2, %rd3;
  mov.u64 %rd4, box;
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd4, %rd4, %rd5;
  ld.shared.f32 %r7, [%rd4];
  st.global.f32 [%rd2], %r7;
  ret;
}
)";

}  // namespace

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  constexpr std::size_t cols = 64, rows = 32;
  std::vector<float> host(cols * rows);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  cuwrap::device_buffer<float> matrix{ctx, host.size()}, boxes{ctx, host.size()};
  cuwrap::copy(s, matrix, host);

  // Every requirement of cuTensorMapEncodeTiled is checked here, before the driver is called.
  const auto map = cuwrap::tensor_map::tiled(ctx, matrix.span(), {cols, rows}).box({16, 8}).build();
  const auto mod = cuwrap::module::load(ctx, load_box_ptx);
  const auto load_box = mod.kernel<void(cuwrap::tensor_map, float*)>("load_box");
  s.launch(load_box, cuwrap::launch_config{{cols / 16, rows / 8, 1}, {128, 1, 1}}, map,
           boxes.data());
  std::vector<float> got(host.size());
  cuwrap::copy(s, got, boxes);
  s.synchronize();

  int wrong = 0;
  for (std::size_t b = 0; b < got.size() / 128; ++b) {
    const std::size_t bx = b % (cols / 16), by = b / (cols / 16);
    for (std::size_t i = 0; i < 128; ++i) {
      const std::size_t x = 16 * bx + i % 16, y = 8 * by + i / 16;
      wrong += got[128 * b + i] != host[y * cols + x];
    }
  }
  std::printf("%zu boxes of 16 x 8 loaded, %d elements wrong\n", got.size() / 128, wrong);
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
