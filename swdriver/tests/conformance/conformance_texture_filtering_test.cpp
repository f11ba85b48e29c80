// Kernel conformance for the filtering between texels that depends on more than one level or
// face (conformance/texture.cu): mipmapped arrays through tex2DLod (tex.level), tex2DGrad
// (tex.grad) and tex2D (no mode: level of detail 0), with point and linear mipmap filters,
// fractional levels of detail, mipmapLevelBias and the level clamps; anisotropic filtering
// (maxAnisotropy > 1) as EXT_texture_filter_anisotropic describes it; and seamless cube maps
// (CU_TRSF_SEAMLESS_CUBEMAP) at face edges and corners. Each result is compared bit for bit with
// the host references of texture_reference.hpp (mipmaps) and, for cube maps, a reference that
// finds the texel across an edge by searching every texel centre of the cube for the nearest
// one in direction, independently of the interpreter's face arithmetic.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "array_support.hpp"
#include "conformance_checks.hpp"
#include "texture_reference.hpp"
#include "texture_support.hpp"

namespace {

using conf::Conformance;
using conf::texref::Float4;

constexpr std::size_t kW = 16, kH = 8, kLevels = 5;  // 16x8, 8x4, 4x2, 2x1, 1x1

// Texel (x, y) of level `l`: values that tell levels and texels apart.
Float4 mip_texel(std::size_t l, int x, int y) {
  const float b = static_cast<float>(l) * 100.0f;
  return {b + static_cast<float>(x) * 3.0f + static_cast<float>(y) * 0.5f,
          b - static_cast<float>(x * y), static_cast<float>((x + 2 * y + static_cast<int>(l)) % 7),
          1.0f / static_cast<float>(1 + l + static_cast<std::size_t>(x))};
}

struct FilteringTextures : Conformance {
  CUmipmappedArray mip = nullptr;
  CUarray cube = nullptr;
  std::vector<CUtexObject> objects;

  ~FilteringTextures() {
    for (CUtexObject t : objects) static_cast<void>(swcu::test::tex().cuTexObjectDestroy(t));
    if (mip != nullptr) static_cast<void>(cu.cuMipmappedArrayDestroy(mip));
    if (cube != nullptr) static_cast<void>(cu.cuArrayDestroy(cube));
  }

  void to_array(CUarray a, const void* host, std::size_t row_bytes, std::size_t rows,
                std::size_t slices) {
    const CUDA_MEMCPY3D c = swcu::test::host_to_array(host, a, row_bytes, rows, slices, 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&c));
  }

  // A float4 mipmapped array of kW x kH with kLevels levels, each filled from mip_texel.
  void make_mipmapped() {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = kW;
    d.Height = kH;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 4;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&mip, &d, kLevels));
    for (std::size_t l = 0; l < kLevels; ++l) {
      CUarray level = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, mip, static_cast<unsigned>(l)));
      const std::size_t w = std::max<std::size_t>(kW >> l, 1),
                        h = std::max<std::size_t>(kH >> l, 1);
      std::vector<float> data;
      for (std::size_t y = 0; y < h; ++y) {
        for (std::size_t x = 0; x < w; ++x) {
          const Float4 v = mip_texel(l, static_cast<int>(x), static_cast<int>(y));
          data.insert(data.end(), v.begin(), v.end());
        }
      }
      to_array(level, data.data(), w * 16, h, 1);
    }
  }

  // A texture over the mipmapped array and the reference's sampler for it.
  CUtexObject mip_texture(conf::texref::MipSampler& ref, int mode, bool linear, bool mip_linear,
                          float bias, float min_lod, float max_lod, unsigned anisotropy = 0) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    res.res.mipmap.hMipmappedArray = mip;
    CUDA_TEXTURE_DESC tex{};
    tex.addressMode[0] = tex.addressMode[1] = static_cast<CUaddress_mode>(mode);
    tex.filterMode = linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    tex.mipmapFilterMode = mip_linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    tex.mipmapLevelBias = bias;
    tex.minMipmapLevelClamp = min_lod;
    tex.maxMipmapLevelClamp = max_lod;
    tex.maxAnisotropy = anisotropy;
    tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
    CUtexObject t = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
    objects.push_back(t);
    ref = {};
    for (std::size_t l = 0; l < kLevels; ++l) {
      conf::texref::Sampler s;
      s.width = static_cast<int>(std::max<std::size_t>(kW >> l, 1));
      s.height = static_cast<int>(std::max<std::size_t>(kH >> l, 1));
      s.texel = [l](int x, int y) { return mip_texel(l, x, y); };
      s.mode[0] = s.mode[1] = mode;
      s.linear = linear;
      s.normalized = true;
      ref.levels.push_back(s);
    }
    ref.mip_linear = mip_linear;
    ref.bias = bias;
    ref.min_lod = min_lod;
    ref.max_lod = max_lod;
    ref.max_anisotropy = std::clamp(anisotropy, 1u, 16u);  // cudaTextureDesc: clamped to [1, 16]
    return t;
  }

  std::vector<float> launch_float4(const char* kernel, CUtexObject t, const std::vector<float>& at,
                                   const std::vector<float>& extra, std::size_t n) {
    const CUdeviceptr dat = upload(at), dout = zeros<float>(4 * n, -99.0f);
    const CUfunction f = function(load_ptx("texture"), kernel);
    const unsigned blocks = static_cast<unsigned>((n + 63) / 64);
    if (extra.empty()) {
      run(f, {blocks}, {64}, 0, t, dat, dout, static_cast<int>(n));
    } else {
      run(f, {blocks}, {64}, 0, t, dat, upload(extra), dout, static_cast<int>(n));
    }
    return download<float>(dout, 4 * n);
  }
};

// Normalized sample points inside and around the texture, off the texel centres.
std::vector<std::pair<float, float>> points() {
  std::vector<std::pair<float, float>> out;
  for (float v : {-0.07f, 0.13f, 0.5f, 0.61f, 0.97f, 1.2f}) {
    for (float u : {-0.11f, 0.02f, 0.33f, 0.5f, 0.77f, 1.04f}) out.emplace_back(u, v);
  }
  return out;
}

// ------------------------------------------------------------------- seamless cube maps

constexpr int kCube = 4;  // faces of 4 x 4 texels

float cube_value(int face, int i, int j) {
  return static_cast<float>(face * 37 + j * 5 + i) * 0.25f - 3.0f;
}

// The direction of face coordinates (sc, tc) in [-1, 1] of `face`: the Programming Guide's
// cubemap table (+X: s = -z, t = -y; -X: z, -y; +Y: x, z; -Y: x, -z; +Z: x, -y; -Z: -x, -y)
// solved for the direction.
std::array<double, 3> face_direction(int face, double sc, double tc) {
  switch (face) {
    case 0: return {1, -tc, -sc};
    case 1: return {-1, -tc, sc};
    case 2: return {sc, 1, tc};
    case 3: return {sc, -1, -tc};
    case 4: return {sc, -tc, 1};
    default: return {-sc, -tc, -1};
  }
}

std::array<double, 3> texel_centre(int face, double i, double j) {
  return face_direction(face, 2 * (i + 0.5) / kCube - 1, 2 * (j + 0.5) / kCube - 1);
}

// The texel of another face whose centre is nearest in direction to texel (i, j) of `face`
// (which lies outside that face): a search over every texel of the cube.
float nearest_elsewhere(int face, int i, int j) {
  const auto unit = [](std::array<double, 3> v) {
    const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    return std::array<double, 3>{v[0] / n, v[1] / n, v[2] / n};
  };
  const auto p = unit(texel_centre(face, i, j));
  double best = -2;
  float value = 0;
  for (int f = 0; f < 6; ++f) {
    if (f == face) continue;
    for (int y = 0; y < kCube; ++y) {
      for (int x = 0; x < kCube; ++x) {
        const auto c = unit(texel_centre(f, x, y));
        const double dot = p[0] * c[0] + p[1] * c[1] + p[2] * c[2];
        if (dot > best) best = dot, value = cube_value(f, x, y);
      }
    }
  }
  return value;
}

// texCubemap with linear filtering: the face and (s / m + 1) / 2, (t / m + 1) / 2 in it, the
// 2 x 2 texels around them; outside the face the texel index wraps or clamps within the face by
// the address mode (not seamless: an H200 wraps under wrap mode) or is the nearest texel of the
// cube (seamless), the one outside both edges the average of the three texels at that corner
// (ARB_seamless_cube_map).
float cube_reference(float x, float y, float z, bool seamless, bool wrap) {
  const auto [face, s, t, m] = conf::texref::cube_site(x, y, z);
  const conf::texref::Bilinear b = conf::texref::bilinear(
      static_cast<double>((s / m + 1) / 2) * kCube, static_cast<double>((t / m + 1) / 2) * kCube);
  const auto texel = [&](long i, long j) {
    const long ci = std::clamp(i, 0L, long{kCube} - 1), cj = std::clamp(j, 0L, long{kCube} - 1);
    const bool out_i = ci != i, out_j = cj != j;
    const int fi = static_cast<int>(i), fj = static_cast<int>(j);
    const int ki = static_cast<int>(ci), kj = static_cast<int>(cj);
    if (!seamless && wrap) {
      return cube_value(face, static_cast<int>((i + kCube) % kCube),
                        static_cast<int>((j + kCube) % kCube));
    }
    if (!seamless || (!out_i && !out_j)) return cube_value(face, ki, kj);
    if (out_i != out_j) return nearest_elsewhere(face, fi, fj);
    return (cube_value(face, ki, kj) + nearest_elsewhere(face, fi, kj) +
            nearest_elsewhere(face, ki, fj)) /
           3.0f;
  };
  const long double sum = b.w00 * static_cast<long double>(texel(b.i, b.j)) +
                          b.w10 * static_cast<long double>(texel(b.i + 1, b.j)) +
                          b.w01 * static_cast<long double>(texel(b.i, b.j + 1)) +
                          b.w11 * static_cast<long double>(texel(b.i + 1, b.j + 1));
  return conf::texref::round_away(sum / 256);
}

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: tex2DLod blends mipmap levels after bias and clamps") {
    make_mipmapped();
    const std::vector<float> lods = {-1.0f, 0.0f,   0.3f, 0.5f, 0.51f, 1.25f,
                                     1.5f,  1.999f, 2.5f, 3.7f, 4.0f,  6.0f};
    struct Case {
      int mode;
      bool linear, mip_linear;
      float bias, min_lod, max_lod;
      const char* what;
    };
    const Case cases[] = {
        {1, true, true, 0.0f, 0.0f, 4.0f, "linear filter, linear mipmap filter, clamp"},
        {0, true, true, 0.25f, 0.5f, 3.2f,
         "linear, linear mipmaps, wrap, bias 0.25, clamps 0.5..3.2"},
        {2, false, true, -0.6f, 0.0f, 4.0f,
         "point filter, linear mipmap filter, mirror, bias -0.6"},
        {1, false, false, 0.0f, 0.0f, 4.0f, "point filter, point mipmap filter (nearest level)"},
        {1, true, false, 0.3f, 1.0f, 2.0f, "linear, point mipmaps, bias 0.3, clamps 1..2"},
        {3, true, true, 0.0f, 0.0f, 0.0f, "border; maxMipmapLevelClamp 0 keeps level 0"},
    };
    for (const Case& c : cases) {
      conf::texref::MipSampler ref;
      const CUtexObject t =
          mip_texture(ref, c.mode, c.linear, c.mip_linear, c.bias, c.min_lod, c.max_lod);
      std::vector<float> at, want;
      for (float lod : lods) {
        for (const auto& [u, v] : points()) {
          at.insert(at.end(), {u, v, lod, 0});
          const Float4 r = conf::texref::sample_lod(ref, u, v, lod);
          want.insert(want.end(), r.begin(), r.end());
        }
      }
      conf::expect_equal(launch_float4("tex2d_lod", t, at, {}, at.size() / 4), want, c.what);
    }
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: tex2DLod returns what an H200 returned, bit for bit") {
    // Results an NVIDIA H200 (driver 580.159.04) returned on 2026-11-27 for this fixture's
    // texture, where float arithmetic or the Programming Guide's formula gives something else:
    // the rounded bilinear weights (w11 = ab/256 rounded, the others what is left), one rounding
    // of the exact sum with ties away from zero, level floor(lod + 1/2) for a point mipmap
    // filter, and the bias in 1/512 steps cut toward zero for the level fraction.
    make_mipmapped();
    struct Observed {
      int mode;
      bool linear, mip_linear;
      float bias, min_lod, max_lod, u, v, lod;
      int channel;
      float gpu;
    };
    const Observed observed[] = {
        // level 0, bilinear, clamp; the float formula gives -2.57739258, 2.91137695, ...
        {1, true, true, 0, 0, 4, 0.33f, 0.13f, -1, 1, -2.578125f},
        {1, true, true, 0, 0, 4, 0.33f, 0.13f, -1, 2, 2.90625f},
        {1, true, true, 0, 0, 4, 0.5f, 0.13f, -1, 3, 0.11805556f},  // a tie, rounded up
        {1, true, true, 0, 0, 4, 0.77f, 0.13f, -1, 1, -6.37109375f},
        {1, true, true, 0, 0, 4, 0.77f, 0.13f, -1, 2, 2.80859375f},
        {1, true, true, 0, 0, 4, 0.33f, 0.5f, -1, 3, 0.173958331f},
        // border
        {3, true, true, 0, 0, 0, 0.02f, 0.13f, -1, 0, 0.220703125f},
        {3, true, true, 0, 0, 0, 0.02f, 0.13f, -1, 2, 0.8828125f},
        // level 1 (clamped to 1..2), bilinear: four equal texels give the texel exactly
        {1, true, false, 0.3f, 1, 2, 1.04f, -0.07f, -1, 3, 0.111111112f},
        {1, true, false, 0.3f, 1, 2, 0.33f, 0.13f, -1, 1, 99.9570312f},
        {1, true, false, 0.3f, 1, 2, 0.5f, 0.13f, -1, 1, 99.9296875f},
        {1, true, false, 0.3f, 1, 2, 0.5f, 0.13f, -1, 2, 4.45703125f},
        {1, true, false, 0.3f, 1, 2, 0.5f, 0.13f, -1, 3, 0.183333337f},
        {1, true, false, 0.3f, 1, 2, 0.77f, 0.13f, -1, 1, 99.890625f},
        // point mipmap filter at lod 0.5: level 1 (OpenGL's rule takes level 0)
        {1, false, false, 0, 0, 4, -0.11f, -0.07f, 0.5f, 0, 100.0f},
        {1, false, false, 0, 0, 4, -0.11f, -0.07f, 0.5f, 2, 1.0f},
        {1, false, false, 0, 0, 4, -0.11f, -0.07f, 0.5f, 3, 0.5f},
        // lod 1.25 with bias -0.6: levels 0 and 1 blended by 167/256 (not 166/256)
        {2, false, true, -0.6f, 0, 4, -0.11f, -0.07f, 1.25f, 0, 66.2773438f},
        {2, false, true, -0.6f, 0, 4, -0.11f, -0.07f, 1.25f, 1, 65.234375f},
        {2, false, true, -0.6f, 0, 4, 0.02f, -0.07f, 1.25f, 2, 0.65234375f},
        {2, false, true, -0.6f, 0, 4, 0.02f, -0.07f, 1.25f, 3, 0.673828125f},
    };
    for (const Observed& o : observed) {
      conf::texref::MipSampler ref;
      const CUtexObject t =
          mip_texture(ref, o.mode, o.linear, o.mip_linear, o.bias, o.min_lod, o.max_lod);
      const std::vector<float> got = launch_float4("tex2d_lod", t, {o.u, o.v, o.lod, 0}, {}, 1);
      INFO("mode ", o.mode, " at (", o.u, ", ", o.v, ") lod ", o.lod, " channel ", o.channel);
      CHECK(got[static_cast<std::size_t>(o.channel)] == o.gpu);
      CHECK(conf::texref::sample_lod(ref, o.u, o.v, o.lod)[static_cast<std::size_t>(o.channel)] ==
            o.gpu);
    }
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: tex2D on a mipmapped array samples level of detail 0") {
    make_mipmapped();
    conf::texref::MipSampler ref;
    // bias 1.4 moves level of detail 0 to 1.4: levels 1 and 2 blended
    const CUtexObject t = mip_texture(ref, 1, true, true, 1.4f, 0.0f, 4.0f);
    std::vector<float> at, want;
    for (const auto& [u, v] : points()) {
      at.insert(at.end(), {u, v});
      const Float4 r = conf::texref::sample_lod(ref, u, v, 0.0f);
      want.insert(want.end(), r.begin(), r.end());
    }
    conf::expect_equal(launch_float4("tex2d_base", t, at, {}, at.size() / 2), want,
                       "tex2D, bias 1.4");
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: tex2DGrad takes the level of detail from the gradients") {
    make_mipmapped();
    // Gradients in normalized units: Px = |dPdx| in level-0 texels (x 16, y 8).
    const std::vector<Float4> grads = {
        {0.0f, 0.0f, 0.0f, 0.0f},           // no gradient: level 0
        {1.0f / 16, 0.0f, 0.0f, 1.0f / 8},  // one texel: level 0
        {3.0f / 16, 0.0f, 0.0f, 0.5f / 8},  // Px 3: log2(3)
        {0.0f, 5.5f / 8, 2.0f / 16, 0.0f},  // Py... the longer of the two: 5.5
        {0.21f, 0.13f, -0.05f, 0.3f},       // oblique
        {-0.9f, 0.4f, 0.02f, -0.01f},       // beyond the last level
        {0.02f, 0.01f, 0.015f, 0.02f},      // below one texel
    };
    for (const bool mip_linear : {true, false}) {
      conf::texref::MipSampler ref;
      const CUtexObject t = mip_texture(ref, 0, true, mip_linear, 0.15f, 0.0f, 4.0f);
      std::vector<float> at, g, want;
      for (const Float4& d : grads) {
        for (const auto& [u, v] : points()) {
          at.insert(at.end(), {u, v});
          g.insert(g.end(), d.begin(), d.end());
          const float dx[2] = {d[0], d[1]}, dy[2] = {d[2], d[3]};
          const Float4 r = conf::texref::sample_grad(ref, u, v, dx, dy);
          want.insert(want.end(), r.begin(), r.end());
        }
      }
      conf::expect_equal(
          launch_float4("tex2d_grad", t, at, g, at.size() / 2), want,
          mip_linear ? "tex2DGrad, linear mipmap filter" : "tex2DGrad, point mipmap filter");
    }
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: anisotropic filtering probes along the longer gradient "
                    "(EXT_texture_filter_anisotropic)") {
    make_mipmapped();
    // Ratios Pmax / Pmin of 2.6, 5.3 and 40 (no gradient across: the most probes).
    const std::vector<Float4> grads = {
        {2.6f / 16, 0.0f, 0.0f, 1.0f / 8}, {0.0f, 0.5f / 8, 0.0f, 2.65f / 8},
        {0.25f, 0.0f, 0.0f, 0.1f / 8},     {0.3f, 0.3f, 0.0f, 0.0f},
        {0.12f, -0.07f, 0.01f, 0.02f},
    };
    for (const unsigned aniso : {4u, 16u, 40u}) {  // 40: clamped to 16
      conf::texref::MipSampler ref;
      const CUtexObject t = mip_texture(ref, 1, true, true, 0.0f, 0.0f, 4.0f, aniso);
      std::vector<float> at, g, want;
      for (const Float4& d : grads) {
        for (const auto& [u, v] : points()) {
          at.insert(at.end(), {u, v});
          g.insert(g.end(), d.begin(), d.end());
          const float dx[2] = {d[0], d[1]}, dy[2] = {d[2], d[3]};
          const Float4 r = conf::texref::sample_grad(ref, u, v, dx, dy);
          want.insert(want.end(), r.begin(), r.end());
        }
      }
      conf::expect_equal(launch_float4("tex2d_grad", t, at, g, at.size() / 2), want,
                         "maxAnisotropy " + std::to_string(aniso));
    }
    // the probes matter: the same gradients without anisotropy differ somewhere
    conf::texref::MipSampler iso = {}, aniso = {};
    static_cast<void>(mip_texture(iso, 1, true, true, 0.0f, 0.0f, 4.0f, 1));
    static_cast<void>(mip_texture(aniso, 1, true, true, 0.0f, 0.0f, 4.0f, 8));
    const float dx[2] = {0.25f, 0.0f}, dy[2] = {0.0f, 0.1f / 8};
    CHECK(conf::texref::sample_grad(iso, 0.33f, 0.61f, dx, dy) !=
          conf::texref::sample_grad(aniso, 0.33f, 0.61f, dx, dy));
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: seamless cube maps filter across face edges and "
                    "corners") {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = d.Height = kCube;
    d.Depth = 6;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    d.Flags = CUDA_ARRAY3D_CUBEMAP;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&cube, &d));
    std::vector<float> data;
    for (int f = 0; f < 6; ++f) {
      for (int j = 0; j < kCube; ++j) {
        for (int i = 0; i < kCube; ++i) data.push_back(cube_value(f, i, j));
      }
    }
    to_array(cube, data.data(), kCube * 4, kCube, 6);
    // Directions over every face, most of them within a texel of an edge or a corner.
    std::vector<float> at;
    for (int f = 0; f < 6; ++f) {
      for (double tc : {-1.0, -0.97, -0.8, -0.3, 0.1, 0.77, 0.9, 0.999}) {
        for (double sc : {-0.999, -0.93, -0.81, 0.0, 0.4, 0.8, 0.94, 1.0}) {
          const auto dir = face_direction(f, sc, tc);
          at.insert(at.end(), {static_cast<float>(1.7 * dir[0]), static_cast<float>(1.7 * dir[1]),
                               static_cast<float>(1.7 * dir[2]), 0.0f});
        }
      }
    }
    const auto cube_texture = [&](bool seamless, CUaddress_mode mode) {
      CUDA_RESOURCE_DESC res{};
      res.resType = CU_RESOURCE_TYPE_ARRAY;
      res.res.array.hArray = cube;
      CUDA_TEXTURE_DESC tex{};
      tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = mode;
      tex.filterMode = CU_TR_FILTER_MODE_LINEAR;
      tex.flags = CU_TRSF_NORMALIZED_COORDINATES | (seamless ? CU_TRSF_SEAMLESS_CUBEMAP : 0u);
      CUtexObject t = 0;
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
      objects.push_back(t);
      return t;
    };
    const auto sample_cube = [&](CUtexObject t, const std::vector<float>& where) {
      const std::size_t n = where.size() / 4;
      const CUdeviceptr dat = upload(where), dout = zeros<float>(n, -99.0f);
      run(function(load_ptx("texture"), "tex_cube"), {static_cast<unsigned>((n + 63) / 64)}, {64},
          0, t, dat, dout, static_cast<int>(n));
      return download<float>(dout, n);
    };
    struct Kind {
      bool seamless;
      CUaddress_mode mode;
      const char* what;
    };
    for (const Kind k : {Kind{false, CU_TR_ADDRESS_MODE_WRAP, "texCubemap, wrap within faces"},
                         Kind{false, CU_TR_ADDRESS_MODE_CLAMP, "texCubemap, faces clamped"},
                         Kind{true, CU_TR_ADDRESS_MODE_WRAP, "seamless texCubemap"}}) {
      std::vector<float> want;
      for (std::size_t i = 0; i < at.size(); i += 4) {
        want.push_back(cube_reference(at[i], at[i + 1], at[i + 2], k.seamless,
                                      k.mode == CU_TR_ADDRESS_MODE_WRAP));
      }
      conf::expect_equal(sample_cube(cube_texture(k.seamless, k.mode), at), want, k.what);
    }
    // What an H200 returned (2026-11-27) on the wrap texture where |x| = |y| is the largest
    // component: the +Y face, its footprint wrapping from the last column to the first.
    const std::vector<float> ties = {1.7f, 1.7f, 1.6983f, 0, 1.7f, 1.7f, 1.581f, 0,
                                     1.7f, 1.7f, 1.377f,  0, 1.7f, 1.7f, 0.0f,   0,
                                     1.7f, 1.7f, -0.68f,  0, 1.7f, 1.7f, -1.36f, 0};
    const std::vector<float> gpu = {17.7646484f, 18.2773438f, 19.1708984f,
                                    17.75f,      16.7490234f, 16.2558594f};
    CHECK(sample_cube(cube_texture(false, CU_TR_ADDRESS_MODE_WRAP), ties) == gpu);
    // One by hand: the centre of the edge between +X and -Z (direction (1, 0, -1)) on the
    // seamless texture: half the last column of +X, half the first column of -Z (-Z's
    // s = -x = -1), rows 1 and 2 of each (the tie picks -Z; the four texels are the same).
    const float edge = cube_reference(1.0f, 0.0f, -1.0f, true, true);
    const float by_hand = 0.25f * (cube_value(0, 3, 1) + cube_value(0, 3, 2)) +
                          0.25f * (cube_value(5, 0, 1) + cube_value(5, 0, 2));
    CHECK(edge == doctest::Approx(by_hand));
  }

  TEST_CASE_FIXTURE(FilteringTextures,
                    "conformance.texture: texCubemapGrad measures the gradients on the face") {
    // A mipmapped cube of 8 x 8 faces (levels 8, 4, 2, 1), point filtering and the nearest
    // level. The reference measures the face coordinates' gradient by central differences of
    // the cube projection (no derivative formula), and keeps the points whose level of detail is
    // clearly inside one level's range.
    constexpr int w = 8, levels = 4;
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = d.Height = w;
    d.Depth = 6;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    d.Flags = CUDA_ARRAY3D_CUBEMAP;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&mip, &d, levels));
    const auto value = [](int l, int f, int i, int j) {
      return static_cast<float>(l * 1000 + f * 100 + j * 10 + i);
    };
    for (int l = 0; l < levels; ++l) {
      CUarray level = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, mip, static_cast<unsigned>(l)));
      const int n = w >> l;
      std::vector<float> data;
      for (int f = 0; f < 6; ++f) {
        for (int j = 0; j < n; ++j) {
          for (int i = 0; i < n; ++i) data.push_back(value(l, f, i, j));
        }
      }
      to_array(level, data.data(), static_cast<std::size_t>(n) * 4, static_cast<std::size_t>(n), 6);
    }
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    res.res.mipmap.hMipmappedArray = mip;
    CUDA_TEXTURE_DESC tex{};
    tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
    tex.maxMipmapLevelClamp = levels - 1;
    CUtexObject t = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
    objects.push_back(t);
    // The face and its coordinates in level-0 texels (the Programming Guide's table).
    const auto project = [](const std::array<double, 3>& v, int& face) {
      const double ax = std::fabs(v[0]), ay = std::fabs(v[1]), az = std::fabs(v[2]);
      double s = 0, tt = 0, m = 1;
      if (ax >= ay && ax >= az) {
        face = v[0] >= 0 ? 0 : 1, m = ax, s = v[0] >= 0 ? -v[2] : v[2], tt = -v[1];
      } else if (ay >= az) {
        face = v[1] >= 0 ? 2 : 3, m = ay, s = v[0], tt = v[1] >= 0 ? v[2] : -v[2];
      } else {
        face = v[2] >= 0 ? 4 : 5, m = az, s = v[2] >= 0 ? v[0] : -v[0], tt = -v[1];
      }
      return std::array<double, 2>{(s / m + 1) / 2 * w, (tt / m + 1) / 2 * w};
    };
    std::vector<float> at, g, want;
    for (int f = 0; f < 6; ++f) {
      for (const auto& [sc, tc] :
           {std::pair{-0.6, 0.3}, std::pair{0.1, -0.45}, std::pair{0.52, 0.55}}) {
        for (const double scale : {0.01, 0.2, 0.45, 0.6, 0.9, 3.0}) {
          const auto dir = face_direction(f, sc, tc);
          const std::array<double, 3> gx = {scale * 0.7, scale * -0.3, scale * 0.5};
          const std::array<double, 3> gy = {scale * 0.1, scale * 0.4, scale * -0.2};
          double rho = 0;
          for (const auto& gr : {gx, gy}) {
            constexpr double h = 1e-6;
            std::array<double, 3> a{}, b{};
            for (int k = 0; k < 3; ++k) a[k] = dir[k] + h * gr[k], b[k] = dir[k] - h * gr[k];
            int fa = 0, fb = 0;
            const auto pa = project(a, fa), pb = project(b, fb);
            rho = std::max(rho, std::hypot(pa[0] - pb[0], pa[1] - pb[1]) / (2 * h));
          }
          const double lod = std::clamp(std::log2(rho), 0.0, double{levels - 1});
          if (std::fabs(lod - std::floor(lod) - 0.5) < 0.05) continue;  // too near a boundary
          const int level = lod <= 0.5 ? 0 : static_cast<int>(std::ceil(lod + 0.5)) - 1;
          int face = 0;
          const auto p = project(dir, face);
          const int n = w >> level;
          const auto texel = [&](double c) {
            return std::clamp(static_cast<int>(std::floor(c / w * n)), 0, n - 1);
          };
          want.push_back(value(level, face, texel(p[0]), texel(p[1])));
          at.insert(at.end(), {static_cast<float>(dir[0]), static_cast<float>(dir[1]),
                               static_cast<float>(dir[2]), 0.0f});
          for (const auto& gr : {gx, gy}) {
            g.insert(g.end(), {static_cast<float>(gr[0]), static_cast<float>(gr[1]),
                               static_cast<float>(gr[2]), 0.0f});
          }
        }
      }
    }
    REQUIRE(want.size() >= 60);
    std::set<float> levels_seen;
    for (float v : want) levels_seen.insert(std::floor(v / 1000));
    CHECK(levels_seen.size() == std::size_t{levels});  // every level is reached
    const std::size_t n = want.size();
    const CUdeviceptr dat = upload(at), dg = upload(g), dout = zeros<float>(n, -99.0f);
    run(function(load_ptx("texture"), "tex_cube_grad"), {static_cast<unsigned>((n + 63) / 64)},
        {64}, 0, t, dat, dg, dout, static_cast<int>(n));
    conf::expect_equal(download<float>(dout, n), want, "texCubemapGrad");
  }
}

}  // namespace
