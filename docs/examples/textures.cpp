// docs/textures.md: a texture object over a pitched buffer (normalized coordinates, clamp,
// linear filtering) and a kernel that samples it between texel centres.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/texture.hpp>
#include <string_view>
#include <vector>

namespace {

// Thread i samples the texture at ((i + 1) / 2 / width, 0.5): texel centres for even i, halfway
// between two for odd i; out[i] gets the red channel.
constexpr std::string_view sample_ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry sample(.param .u64 tex, .param .u64 out, .param .f32 width)
{
  .reg .b32 %r<3>;
  .reg .f32 %f<9>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [out];
  ld.param.f32 %f1, [width];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 1;
  cvt.rn.f32.u32 %f2, %r2;
  mul.f32 %f2, %f2, 0f3F000000;
  div.rn.f32 %f2, %f2, %f1;
  mov.f32 %f3, 0f3F000000;
  tex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2, %f3}];
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.f32 [%rd4], %f4;
  ret;
}
)";

}  // namespace

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  constexpr std::size_t width = 8, height = 4;
  std::vector<float> host(width * height);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % width) * 10;
  cuwrap::pitched_buffer<float> image{ctx, width, height};
  cuwrap::copy_2d(image.view(),
                  cuwrap::pitched_span<const float>::dense(host.data(), width, height));

  cuwrap::texture_options options;
  options.with_address(cuwrap::address_mode::clamp);
  options.filter = cuwrap::filter_mode::linear;
  options.normalized_coordinates = true;
  const cuwrap::texture_object tex{ctx, image, options};  // one cuTexObjectCreate

  const auto mod = cuwrap::module::load(ctx, sample_ptx);
  const auto sample = mod.kernel<void(unsigned long long, float*, float)>("sample");
  constexpr unsigned n = 2 * width - 1;
  cuwrap::device_buffer<float> out{ctx, n};
  s.launch(sample, cuwrap::launch_config{{1, 1, 1}, {n, 1, 1}}, tex.handle(), out.data(),
           static_cast<float>(width));
  std::vector<float> got(n);
  cuwrap::copy(s, got, out);
  s.synchronize();

  // At a texel centre the texel itself; halfway between two, their mean (weights 0.5, 0.5).
  int wrong = 0;
  for (unsigned i = 0; i < n; ++i) {
    const float want = static_cast<float>(i) * 5;
    if (got[i] != want) {
      std::fprintf(stderr, "sample %u: %g, want %g\n", i, static_cast<double>(got[i]),
                   static_cast<double>(want));
      ++wrong;
    }
  }
  std::printf("%u samples of a %zu x %zu texture, %d wrong\n", n, width, height, wrong);
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
