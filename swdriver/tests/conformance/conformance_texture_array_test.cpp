// Kernel conformance for texture and surface objects over CUDA arrays (conformance/texture.cu):
// tex2DLayered, tex3D and texCubemap (face selection as the Programming Guide's cubemap table
// gives it), surf2Dread/surf2Dwrite and surf1Dwrite, and the surface boundary modes (.zero,
// .clamp, and .trap, which ends the launch with CUDA_ERROR_ILLEGAL_ADDRESS naming the PTX line),
// each against a host reference.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "array_support.hpp"
#include "conformance_checks.hpp"
#include "texture_reference.hpp"
#include "texture_support.hpp"

namespace {

using conf::Conformance;

struct ArrayTextures : Conformance {
  std::vector<CUarray> arrays;
  std::vector<CUtexObject> textures;
  std::vector<CUsurfObject> surfaces;

  ~ArrayTextures() {
    for (CUtexObject t : textures) static_cast<void>(swcu::test::tex().cuTexObjectDestroy(t));
    for (CUsurfObject s : surfaces) static_cast<void>(swcu::test::tex().cuSurfObjectDestroy(s));
    for (CUarray a : arrays) static_cast<void>(cu.cuArrayDestroy(a));
  }

  // A float array of w x h x d (h, d 0 for absent dimensions) with `flags`, filled from `data`.
  CUarray array(std::size_t w, std::size_t h, std::size_t d, unsigned flags,
                const std::vector<float>& data, unsigned channels = 1,
                CUarray_format format = CU_AD_FORMAT_FLOAT) {
    CUDA_ARRAY3D_DESCRIPTOR desc{};
    desc.Width = w;
    desc.Height = h;
    desc.Depth = d;
    desc.Format = format;
    desc.NumChannels = channels;
    desc.Flags = flags;
    CUarray a = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&a, &desc));
    arrays.push_back(a);
    if (!data.empty())
      copy(a, data.data(), w * 4 * channels, std::max<std::size_t>(h, 1),
           std::max<std::size_t>(d, 1), true);
    return a;
  }
  // Copies a dense host block to (to_array) or from the array.
  void copy(CUarray a, void* host, std::size_t row_bytes, std::size_t rows, std::size_t slices,
            bool to_array) {
    const CUDA_MEMCPY3D c = to_array
                                ? swcu::test::host_to_array(host, a, row_bytes, rows, slices, 1)
                                : swcu::test::array_to_host(a, host, row_bytes, rows, slices, 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&c));
  }
  void copy(CUarray a, const float* host, std::size_t row_bytes, std::size_t rows,
            std::size_t slices, bool to_array) {
    copy(a, static_cast<void*>(const_cast<float*>(host)), row_bytes, rows, slices, to_array);
  }
  CUtexObject texture(CUarray a, bool normalized, bool linear = false) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    CUDA_TEXTURE_DESC tex{};
    tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    tex.filterMode = linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    tex.flags = normalized ? CU_TRSF_NORMALIZED_COORDINATES : 0u;
    CUtexObject t = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
    textures.push_back(t);
    return t;
  }
  CUsurfObject surface(CUarray a) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    CUsurfObject s = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuSurfObjectCreate(&s, &res));
    surfaces.push_back(s);
    return s;
  }
  // Runs `kernel` (t, at, out, n) over the points and compares with `want`.
  void sample(const char* kernel, CUtexObject t, const std::vector<float>& at,
              const std::vector<float>& want, const char* what) {
    const int n = static_cast<int>(at.size() / 4);
    const CUdeviceptr dat = upload(at), dout = zeros<float>(want.size(), -99.0f);
    run(function(load_ptx("texture"), kernel), {(static_cast<unsigned>(n) + 63) / 64}, {64}, 0, t,
        dat, dout, n);
    conf::expect_equal(download<float>(dout, want.size()), want, what);
  }
};

float value(std::size_t i) { return static_cast<float>(i % 251) * 0.5f - 17.0f; }

// Coordinate c (unnormalized, clamp) as linear filtering reads it: c - 1/2 rounded to 1/256 of
// a texel (ties up), the texel below it clamped to [0, n), the one above, and the fraction.
struct Taps {
  std::size_t lo = 0, hi = 0;
  long frac = 0;
};
Taps taps(float c, std::size_t n) {
  const auto steps = static_cast<long>(std::floor((static_cast<double>(c) - 0.5) * 256 + 0.5));
  const long below = static_cast<long>(std::floor(static_cast<double>(steps) / 256));
  const auto clamp = [n](long i) {
    return static_cast<std::size_t>(std::clamp(i, 0L, static_cast<long>(n) - 1));
  };
  return {clamp(below), clamp(below + 1), steps - below * 256};
}

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(ArrayTextures,
                    "conformance.texture: tex2DLayered and tex3D read their layer and slice") {
    constexpr std::size_t w = 9, h = 5, d = 4;
    std::vector<float> data(w * h * d);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i);
    const CUtexObject layered = texture(array(w, h, d, CUDA_ARRAY3D_LAYERED, data), false);
    const CUtexObject volume = texture(array(w, h, d, 0, data), false);
    std::vector<float> at, want_layered, want_volume;
    for (int k = -1; k <= 4; ++k) {
      for (float y : {-0.5f, 0.25f, 2.75f, 4.5f, 9.0f}) {
        for (float x : {-2.0f, 0.5f, 3.99f, 8.5f, 12.0f}) {
          const float z = static_cast<float>(k) + 0.5f;
          at.insert(at.end(), {x, y, z, 0});
          const auto clampi = [](float c, std::size_t n) {
            return static_cast<std::size_t>(
                std::clamp(static_cast<long>(std::floor(c)), 0L, static_cast<long>(n) - 1));
          };
          // layers are integers clamped to the array's; the slice is the z coordinate's texel
          const std::size_t layer = static_cast<std::size_t>(std::clamp(k, 0, int{d} - 1));
          want_layered.push_back(data[(layer * h + clampi(y, h)) * w + clampi(x, w)]);
          want_volume.push_back(data[(clampi(z, d) * h + clampi(y, h)) * w + clampi(x, w)]);
        }
      }
    }
    sample("tex_layered", layered, at, want_layered, "tex2DLayered");
    sample("tex_3d", volume, at, want_volume, "tex3D");
  }

  TEST_CASE_FIXTURE(ArrayTextures,
                    "conformance.texture: tex1D and tex3D linear filtering weigh texels in 1/256 "
                    "steps") {
    // 1D: (256 - a) T[i] + a T[i + 1]. 3D: the 2D weights (w11 = ab / 256 rounded, ties up; the
    // others what is left of a, b and 256), each split by c the same way; the exact sum rounded
    // once, ties away from zero.
    constexpr std::size_t n = 37, w = 5, h = 4, d = 3;
    std::vector<float> line(n), data(w * h * d);
    for (std::size_t i = 0; i < n; ++i) line[i] = value(7 * i) / 3.0f;
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(13 * i) / 7.0f;
    const CUtexObject t1 = texture(array(n, 0, 0, 0, line), false, true);
    const CUtexObject t3 = texture(array(w, h, d, 0, data), false, true);

    std::vector<float> at1, want1;
    for (float x = -1.0f; x < static_cast<float>(n) + 1.0f; x += 0.3173f) {
      at1.push_back(x);
      const Taps t = taps(x, n);
      want1.push_back(
          conf::texref::round_away((static_cast<long double>(256 - t.frac) * line[t.lo] +
                                    static_cast<long double>(t.frac) * line[t.hi]) /
                                   256));
    }
    const CUdeviceptr dat = upload(at1), dout = zeros<float>(at1.size(), -99.0f);
    run(function(load_ptx("texture"), "tex1d_sample"),
        {static_cast<unsigned>(at1.size() + 63) / 64}, {64}, 0, t1, dat, dout,
        static_cast<int>(at1.size()));
    conf::expect_equal(download<float>(dout, at1.size()), want1, "tex1D, linear");

    std::vector<float> at3, want3;
    for (float z : {-0.2f, 0.77f, 1.5f, 2.31f, 3.4f}) {
      for (float y : {0.1f, 1.37f, 2.5f, 3.93f}) {
        for (float x : {-0.4f, 0.61f, 2.13f, 3.5f, 4.86f, 5.2f}) {
          at3.insert(at3.end(), {x, y, z, 0});
          const Taps tx = taps(x, w), ty = taps(y, h), tz = taps(z, d);
          const long a = tx.frac, b = ty.frac, c = tz.frac;
          const long w11 = (a * b + 128) / 256;
          const long plane[2][2] = {{256 - a - b + w11, a - w11}, {b - w11, w11}};
          long double sum = 0;
          for (int j = 0; j < 2; ++j) {
            for (int i = 0; i < 2; ++i) {
              const long upper = (plane[j][i] * c + 128) / 256;
              const std::size_t x_at = i != 0 ? tx.hi : tx.lo, y_at = j != 0 ? ty.hi : ty.lo;
              sum += static_cast<long double>(plane[j][i] - upper) *
                     data[(tz.lo * h + y_at) * w + x_at];
              sum += static_cast<long double>(upper) * data[(tz.hi * h + y_at) * w + x_at];
            }
          }
          want3.push_back(conf::texref::round_away(sum / 256));
        }
      }
    }
    sample("tex_3d", t3, at3, want3, "tex3D, linear");
  }

  TEST_CASE_FIXTURE(ArrayTextures, "conformance.texture: texCubemap picks the face and its texel") {
    constexpr std::size_t w = 4;
    std::vector<float> data(w * w * 6);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i * 7);
    const CUtexObject cube = texture(array(w, w, 6, CUDA_ARRAY3D_CUBEMAP, data), true);
    std::vector<float> at, want;
    for (float x : {-1.0f, -0.3f, 0.2f, 0.9f}) {
      for (float y : {-0.8f, -0.1f, 0.4f, 1.0f}) {
        for (float z : {-0.95f, -0.2f, 0.35f, 0.7f}) {
          at.insert(at.end(), {x, y, z, 0});
          const auto [face_index, s, t, m] = conf::texref::cube_site(x, y, z);
          const auto face = static_cast<std::size_t>(face_index);
          const auto texel = [](float c) {
            return static_cast<std::size_t>(
                std::clamp(static_cast<long>(std::floor((c / 2 + 0.5f) * w)), 0L, long{w} - 1));
          };
          want.push_back(data[(face * w + texel(t / m)) * w + texel(s / m)]);
        }
      }
    }
    sample("tex_cube", cube, at, want, "texCubemap");
  }

  TEST_CASE_FIXTURE(ArrayTextures, "conformance.texture: surf2Dread and surf2Dwrite, surf1Dwrite") {
    constexpr std::size_t w = 37, h = 6;
    std::vector<float> data(w * h);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i);
    const CUarray a = array(w, h, 0, CUDA_ARRAY3D_SURFACE_LDST, data);
    run(function(load_ptx("texture"), "surf_scale"), {2, h}, {32}, 0, surface(a), int{w}, int{h});
    std::vector<float> got(w * h), want(w * h);
    copy(a, got.data(), w * 4, h, 1, false);
    for (std::size_t i = 0; i < data.size(); ++i) want[i] = data[i] * 2 + 1;
    conf::expect_equal(got, want, "surf2Dread/surf2Dwrite");

    constexpr int n = 50;
    const CUarray bytes =
        array(n, 0, 0, CUDA_ARRAY3D_SURFACE_LDST, {}, 4, CU_AD_FORMAT_UNSIGNED_INT8);
    run(function(load_ptx("texture"), "surf_1d"), {1}, {64}, 0, surface(bytes), n);
    std::vector<unsigned char> got_bytes(4 * n), want_bytes;
    copy(bytes, got_bytes.data(), 4 * n, 1, 1, false);
    for (int i = 0; i < n; ++i) {
      for (int c = 1; c <= 4; ++c) want_bytes.push_back(static_cast<unsigned char>(c * i));
    }
    conf::expect_equal(got_bytes, want_bytes, "surf1Dwrite uchar4");
  }

  TEST_CASE_FIXTURE(ArrayTextures,
                    "conformance.texture: surface boundary modes zero, clamp and trap") {
    constexpr std::size_t w = 8, h = 3;
    std::vector<float> data(w * h);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i + 3);
    const CUarray a = array(w, h, 0, CUDA_ARRAY3D_SURFACE_LDST, data);
    const CUsurfObject s = surface(a);
    const CUfunction f = function(load_ptx("texture"), "surf_modes");
    // inside: every mode reads the element, and the .zero store lands
    CUdeviceptr out = zeros<float>(3);
    run(f, {1}, {1}, 0, s, 5, 2, out, 1);
    conf::expect_equal(download<float>(out, 3),
                       std::vector<float>{data[2 * w + 5], data[2 * w + 5], 7.0f}, "inside");
    std::vector<float> now(w * h);
    copy(a, now.data(), w * 4, h, 1, false);
    data[2 * w + 5] = 7.0f;
    // outside (x = 11, y = -1): zero reads 0, clamp reads the nearest element (7, 0), the
    // .zero store is dropped
    out = zeros<float>(3, -5.0f);
    run(f, {1}, {1}, 0, s, 11, -1, out, 0);
    conf::expect_equal(download<float>(out, 3), std::vector<float>{0.0f, data[7], -5.0f},
                       "outside");
    copy(a, now.data(), w * 4, h, 1, false);
    conf::expect_equal(now, data, "the array after the dropped store");
    // and the .trap read ends the launch, naming the PTX line
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {1}, {1}, 0, s, 11, -1, out, 1));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("kernel surf_modes, PTX line") != std::string::npos);
    CHECK(err.find("suld.trap outside surface object") != std::string::npos);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
    arrays.clear();
    textures.clear();
    surfaces.clear();
  }
}

}  // namespace
