// Kernel conformance for texture objects (conformance/texture.cu): tex2D over pitch2D memory in
// every address mode, point and linear filtering, normalized and unnormalized coordinates,
// normalized-integer, sRGB, half and integer formats; tex2Dgather; tex1Dfetch and tex1D over
// linear memory; txq. Each result is compared bit for bit with the host reference of the
// Programming Guide's texture fetching rules (texture_reference.hpp). The driver's checks of
// cuTexObjectCreate's descriptors are in texture_object_test.cpp.
#include <cstdint>
#include <cstring>
#include <vector>

#include "conformance_checks.hpp"
#include "texture_reference.hpp"
#include "texture_support.hpp"

namespace {

using conf::Conformance;
using conf::texref::Float4;

struct Textures : Conformance {
  static constexpr int kW = 13, kH = 7;
  // Sample points: a grid that reaches outside [0, 1) (or [0, N)) on every side, off the texel
  // centres and on them.
  std::vector<float> coords(bool normalized, int n) const {
    std::vector<float> out;
    for (int k = -20; k <= 45; ++k) {
      const float u = static_cast<float>(k) / 25.0f + 0.0137f * static_cast<float>(k % 3);
      out.push_back(normalized ? u : u * static_cast<float>(n));
    }
    for (int k = 0; k <= n; ++k) {  // texel centres and edges
      out.push_back(normalized ? (static_cast<float>(k) + 0.5f) / static_cast<float>(n)
                               : static_cast<float>(k) + 0.5f);
      out.push_back(normalized ? static_cast<float>(k) / static_cast<float>(n)
                               : static_cast<float>(k));
    }
    return out;
  }

  // Pitch2D memory of kW x kH elements of `elem` bytes, rows 256 bytes apart, from `bytes`.
  CUdeviceptr pitched(const std::vector<unsigned char>& bytes, unsigned elem) {
    std::vector<unsigned char> padded(256u * kH, 0xcd);
    for (int y = 0; y < kH; ++y) {
      std::memcpy(&padded[256u * y], &bytes[std::size_t{elem} * kW * y], std::size_t{elem} * kW);
    }
    return upload(padded);
  }

  CUtexObject texture(CUdeviceptr p, CUarray_format format, unsigned channels, int mode,
                      bool linear, bool normalized, unsigned flags = 0,
                      Float4 border = {0.25f, -2.0f, 7.5f, 1.0f}) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_PITCH2D;
    res.res.pitch2D.devPtr = p;
    res.res.pitch2D.format = format;
    res.res.pitch2D.numChannels = channels;
    res.res.pitch2D.width = kW;
    res.res.pitch2D.height = kH;
    res.res.pitch2D.pitchInBytes = 256;
    CUDA_TEXTURE_DESC tex{};
    tex.addressMode[0] = tex.addressMode[1] = static_cast<CUaddress_mode>(mode);
    tex.filterMode = linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    tex.flags = flags | (normalized ? CU_TRSF_NORMALIZED_COORDINATES : 0u);
    std::memcpy(tex.borderColor, border.data(), sizeof tex.borderColor);
    CUtexObject t = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
    objects.push_back(t);
    return t;
  }

  ~Textures() {
    for (CUtexObject t : objects) static_cast<void>(swcu::test::tex().cuTexObjectDestroy(t));
  }

  // Samples every coordinate pair with tex2d_sample and compares with the reference.
  void check_samples(CUtexObject t, const conf::texref::Sampler& s, const std::string& what) {
    const std::vector<float> xs = coords(s.normalized, kW), ys = coords(s.normalized, kH);
    std::vector<float> at;
    std::vector<float> want;
    for (float y : ys) {
      for (float x : xs) {
        at.push_back(x);
        at.push_back(y);
        const Float4 v = conf::texref::sample(s, x, y);
        want.insert(want.end(), v.begin(), v.end());
      }
    }
    const int n = static_cast<int>(at.size() / 2);
    const CUdeviceptr dat = upload(at);
    const CUdeviceptr dout = zeros<float>(want.size(), -99.0f);
    run(function(load_ptx("texture"), "tex2d_sample"), {(static_cast<unsigned>(n) + 127) / 128},
        {128}, 0, t, dat, dout, n);
    conf::expect_equal(download<float>(dout, want.size()), want, what);
  }

  std::vector<CUtexObject> objects;
};

// A float4 image whose values tell texels apart.
std::vector<float> float4_image() {
  std::vector<float> v;
  for (int y = 0; y < Textures::kH; ++y) {
    for (int x = 0; x < Textures::kW; ++x) {
      v.push_back(static_cast<float>(x * 3 + y * 40) * 0.37f);
      v.push_back(static_cast<float>(x * x - y));
      v.push_back(static_cast<float>((x ^ y) & 5) - 2.5f);
      v.push_back(1.0f / static_cast<float>(1 + x + y));
    }
  }
  return v;
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Textures,
                    "conformance.texture: tex2D<float4> in every address mode and filter") {
    const std::vector<float> img = float4_image();
    const CUdeviceptr p = pitched(bytes_of(img), 16);
    for (const bool normalized : {true, false}) {
      for (int mode = 0; mode < 4; ++mode) {
        // cuda.h: without normalized coordinates the only supported mode is clamp (and border,
        // which the Programming Guide's appendix defines on unnormalized coordinates too).
        if (!normalized && (mode == 0 || mode == 2)) continue;
        for (const bool linear : {false, true}) {
          conf::texref::Sampler s;
          s.width = kW;
          s.height = kH;
          s.mode[0] = s.mode[1] = mode;
          s.linear = linear;
          s.normalized = normalized;
          s.border = {0.25f, -2.0f, 7.5f, 1.0f};
          s.texel = [&img](int x, int y) {
            const float* e = &img[4u * static_cast<unsigned>(y * kW + x)];
            return Float4{e[0], e[1], e[2], e[3]};
          };
          check_samples(texture(p, CU_AD_FORMAT_FLOAT, 4, mode, linear, normalized), s,
                        "mode " + std::to_string(mode) + (linear ? " linear" : " point") +
                            (normalized ? " normalized" : ""));
        }
      }
    }
  }

  TEST_CASE_FIXTURE(Textures,
                    "conformance.texture: 8-bit unsigned read as normalized floats, with sRGB") {
    std::vector<unsigned char> img(4u * kW * kH);
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<unsigned char>(i * 37 + 11);
    const CUdeviceptr p = pitched(img, 4);
    for (const bool srgb : {false, true}) {
      conf::texref::Sampler s;
      s.width = kW;
      s.height = kH;
      s.mode[0] = 0;
      s.mode[1] = 2;
      s.linear = true;
      s.normalized = true;
      s.texel = [&img, srgb](int x, int y) {
        Float4 v{};
        for (int c = 0; c < 4; ++c) {
          v[static_cast<std::size_t>(c)] =
              static_cast<float>(img[4u * static_cast<unsigned>(y * kW + x) + c]) / 255.0f;
          if (srgb && c < 3) v[c] = conf::texref::srgb(v[c]);
        }
        return v;
      };
      CUDA_RESOURCE_DESC res{};
      CUtexObject t = 0;
      {
        res.resType = CU_RESOURCE_TYPE_PITCH2D;
        res.res.pitch2D = {p, CU_AD_FORMAT_UNSIGNED_INT8, 4, kW, kH, 256};
        CUDA_TEXTURE_DESC tex{};
        tex.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
        tex.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
        tex.filterMode = CU_TR_FILTER_MODE_LINEAR;
        tex.flags = CU_TRSF_NORMALIZED_COORDINATES | (srgb ? CU_TRSF_SRGB : 0u);
        SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&t, &res, &tex, nullptr));
        objects.push_back(t);
      }
      check_samples(t, s, srgb ? "uchar4 sRGB" : "uchar4");
    }
  }

  TEST_CASE_FIXTURE(Textures,
                    "conformance.texture: signed 16-bit and half formats, missing channels") {
    std::vector<std::int16_t> s16(std::size_t{kW} * kH);
    for (std::size_t i = 0; i < s16.size(); ++i) {
      s16[i] = static_cast<std::int16_t>(static_cast<int>(i * 2311) % 65536 - 32768);
    }
    s16[3] = -32768;  // reads as -1, not below
    conf::texref::Sampler s;
    s.width = kW;
    s.height = kH;
    s.linear = true;
    s.texel = [&s16](int x, int y) {
      const float v = static_cast<float>(s16[static_cast<std::size_t>(y * kW + x)]) / 32767.0f;
      return Float4{std::max(v, -1.0f), 0.0f, 0.0f, 1.0f};
    };
    check_samples(texture(pitched(bytes_of(s16), 2), CU_AD_FORMAT_SIGNED_INT16, 1, 1, true, false),
                  s, "short, normalized float");

    std::vector<std::uint16_t> half(2u * kW * kH);
    for (std::size_t i = 0; i < half.size(); ++i) {
      half[i] = static_cast<std::uint16_t>(0x3000 + i * 97);  // 0.125 and up, finite
    }
    conf::texref::Sampler h;
    h.width = kW;
    h.height = kH;
    h.linear = true;
    h.normalized = true;
    h.mode[0] = h.mode[1] = 3;
    h.border = {0.5f, 0.25f, 0, 0};
    h.texel = [&half](int x, int y) {
      const std::size_t i = 2u * static_cast<unsigned>(y * kW + x);
      return Float4{conf::texref::half_to_float(half[i]), conf::texref::half_to_float(half[i + 1]),
                    0.0f, 1.0f};
    };
    check_samples(texture(pitched(bytes_of(half), 4), CU_AD_FORMAT_HALF, 2, 3, true, true, 0,
                          {0.5f, 0.25f, 0, 0}),
                  h, "half2, border");
  }

  TEST_CASE_FIXTURE(
      Textures, "conformance.texture: .f16x2 and .f16 results are the fetch in half precision") {
    // PTX ISA, tex: ".f16x2" returns a two-element vector (r, g), (b, a); the filtered floats
    // rounded to half precision (to nearest even), the first channel in the low half.
    const std::vector<float> img = float4_image();
    conf::texref::Sampler s;
    s.width = kW;
    s.height = kH;
    s.linear = true;
    s.normalized = true;
    s.mode[0] = s.mode[1] = 0;
    s.texel = [&img](int x, int y) {
      const float* e = &img[4u * static_cast<unsigned>(y * kW + x)];
      return Float4{e[0], e[1], e[2], e[3]};
    };
    const CUtexObject t = texture(pitched(bytes_of(img), 16), CU_AD_FORMAT_FLOAT, 4, 0, true, true);
    const auto half_bits = [](float f) {
      const auto h = static_cast<_Float16>(f);  // round to nearest even
      std::uint16_t bits = 0;
      std::memcpy(&bits, &h, 2);
      return bits;
    };
    std::vector<float> at;
    std::vector<std::uint32_t> want_packed;
    std::vector<std::uint16_t> want_halves;
    for (float y : coords(true, kH)) {
      for (float x : coords(true, kW)) {
        at.insert(at.end(), {x, y});
        const Float4 v = conf::texref::sample(s, x, y);
        std::uint16_t h[4];
        for (int c = 0; c < 4; ++c) h[c] = half_bits(v[c]);
        want_halves.insert(want_halves.end(), h, h + 4);
        want_packed.push_back(h[0] | std::uint32_t{h[1]} << 16);
        want_packed.push_back(h[2] | std::uint32_t{h[3]} << 16);
      }
    }
    const int n = static_cast<int>(at.size() / 2);
    const CUdeviceptr dat = upload(at);
    const CUdeviceptr packed = zeros<std::uint32_t>(want_packed.size(), 0xdeadbeef);
    const CUdeviceptr halves = zeros<std::uint16_t>(want_halves.size(), 0xbeef);
    run(function(load_ptx("texture"), "tex2d_half"), {(static_cast<unsigned>(n) + 127) / 128},
        {128}, 0, t, dat, packed, halves, n);
    conf::expect_equal(download<std::uint32_t>(packed, want_packed.size()), want_packed,
                       "tex.2d.v2.f16x2");
    conf::expect_equal(download<std::uint16_t>(halves, want_halves.size()), want_halves,
                       "tex.2d.v4.f16");
  }

  TEST_CASE_FIXTURE(Textures, "conformance.texture: tex2D<int4> reads elements as integers") {
    std::vector<std::int8_t> img(4u * kW * kH);
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<std::int8_t>(i * 53);
    const CUtexObject t = texture(pitched(bytes_of(img), 4), CU_AD_FORMAT_SIGNED_INT8, 4, 1, false,
                                  false, CU_TRSF_READ_AS_INTEGER);
    std::vector<float> at;
    std::vector<int> want;
    for (float y : coords(false, kH)) {
      for (float x : coords(false, kW)) {
        at.push_back(x);
        at.push_back(y);
        const int i = std::clamp(static_cast<int>(std::floor(x)), 0, kW - 1);
        const int j = std::clamp(static_cast<int>(std::floor(y)), 0, kH - 1);
        for (int c = 0; c < 4; ++c) want.push_back(img[4u * static_cast<unsigned>(j * kW + i) + c]);
      }
    }
    const int n = static_cast<int>(at.size() / 2);
    const CUdeviceptr dat = upload(at), dout = zeros<int>(want.size(), -99);
    run(function(load_ptx("texture"), "tex2d_sample_int"), {(static_cast<unsigned>(n) + 127) / 128},
        {128}, 0, t, dat, dout, n);
    conf::expect_equal(download<int>(dout, want.size()), want, "char4 as integers");
  }

  TEST_CASE_FIXTURE(Textures, "conformance.texture: tex2Dgather of each component") {
    const std::vector<float> img = float4_image();
    const CUdeviceptr p = pitched(bytes_of(img), 16);
    for (const int mode : {0, 1, 3}) {
      const CUtexObject t = texture(p, CU_AD_FORMAT_FLOAT, 4, mode, false, true);
      conf::texref::Sampler s;
      s.width = kW;
      s.height = kH;
      s.mode[0] = s.mode[1] = mode;
      s.normalized = true;
      s.border = {0.25f, -2.0f, 7.5f, 1.0f};
      s.texel = [&img](int x, int y) {
        const float* e = &img[4u * static_cast<unsigned>(y * kW + x)];
        return Float4{e[0], e[1], e[2], e[3]};
      };
      for (int comp = 0; comp < 4; ++comp) {
        std::vector<float> at, want;
        for (float y : coords(true, kH)) {
          for (float x : coords(true, kW)) {
            at.push_back(x);
            at.push_back(y);
            const Float4 v = conf::texref::gather(s, x, y, comp);
            want.insert(want.end(), v.begin(), v.end());
          }
        }
        const int n = static_cast<int>(at.size() / 2);
        const CUdeviceptr dat = upload(at), dout = zeros<float>(want.size(), -99.0f);
        run(function(load_ptx("texture"), "tex2d_gather"), {(static_cast<unsigned>(n) + 127) / 128},
            {128}, 0, t, dat, dout, n, comp);
        conf::expect_equal(
            download<float>(dout, want.size()), want,
            "gather mode " + std::to_string(mode) + " component " + std::to_string(comp));
      }
    }
  }

  TEST_CASE_FIXTURE(Textures,
                    "conformance.texture: tex1Dfetch reads linear memory, zero out of range") {
    constexpr int kN = 300;
    std::vector<std::int32_t> ints(4u * kN);
    std::vector<std::uint16_t> shorts(4u * kN);
    for (std::size_t i = 0; i < ints.size(); ++i) {
      ints[i] = static_cast<std::int32_t>(i * 2654435761u);
      shorts[i] = static_cast<std::uint16_t>(i * 977);
    }
    const CUdeviceptr di = upload(ints), ds = upload(shorts);
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_LINEAR;
    res.res.linear = {di, CU_AD_FORMAT_SIGNED_INT32, 4, ints.size() * 4};
    CUDA_TEXTURE_DESC tex{};
    CUtexObject ti = 0, ts = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&ti, &res, &tex, nullptr));
    res.res.linear = {ds, CU_AD_FORMAT_UNSIGNED_INT16, 4, shorts.size() * 2};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectCreate(&ts, &res, &tex, nullptr));
    objects.push_back(ti);
    objects.push_back(ts);
    const int n = kN + 40, offset = -20;
    std::vector<int> want_i;
    std::vector<float> want_f;
    for (int i = 0; i < n; ++i) {
      const int e = i + offset;
      for (int c = 0; c < 4; ++c) {
        const bool in = e >= 0 && e < kN;
        want_i.push_back(in ? ints[4u * static_cast<unsigned>(e) + c] : 0);
        want_f.push_back(
            in ? static_cast<float>(shorts[4u * static_cast<unsigned>(e) + c]) / 65535.0f : 0.0f);
      }
    }
    const CUdeviceptr oi = zeros<int>(want_i.size(), -99), of = zeros<float>(want_f.size(), -99);
    run(function(load_ptx("texture"), "tex1d_fetch"), {3}, {128}, 0, ti, ts, oi, of, n, offset);
    conf::expect_equal(download<int>(oi, want_i.size()), want_i, "int4 fetch");
    conf::expect_equal(download<float>(of, want_f.size()), want_f, "ushort4 fetch, normalized");
  }

  TEST_CASE_FIXTURE(Textures, "conformance.texture: txq reports the object's attributes") {
    const std::vector<float> img = float4_image();
    const CUtexObject t = texture(pitched(bytes_of(img), 16), CU_AD_FORMAT_FLOAT, 4, 3, true, true);
    const CUdeviceptr out = zeros<unsigned>(9, 12345);
    run(function(load_ptx("texture"), "tex_query"), {1}, {1}, 0, t, out);
    // width, height, CUarray_format, channels, normalized, linear filter, border, border, levels
    conf::expect_equal(download<unsigned>(out, 9),
                       std::vector<unsigned>{kW, kH, CU_AD_FORMAT_FLOAT, 4, 1, 1, 3, 3, 1}, "txq");
  }

  TEST_CASE_FIXTURE(Textures,
                    "conformance.texture: a destroyed texture object in a kernel is a fault") {
    const std::vector<float> img = float4_image();
    const CUtexObject t =
        texture(pitched(bytes_of(img), 16), CU_AD_FORMAT_FLOAT, 4, 1, false, true);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::tex().cuTexObjectDestroy(t));
    objects.clear();
    const CUdeviceptr at = zeros<float>(2), out = zeros<float>(4);
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(
        launch(function(load_ptx("texture"), "tex2d_sample"), {1}, {1}, 0, t, at, out, 1));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("kernel tex2d_sample, PTX line") != std::string::npos);
    CHECK(err.find("no live texture object") != std::string::npos);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }

  TEST_CASE_FIXTURE(
      Textures, "conformance.texture: a half-precision result on an integer texture is a fault") {
    // The PTX ISA defines .f16/.f16x2 results as floating point and no conversion of the
    // integers a 32-bit integer texture returns: the software driver stops the kernel.
    std::vector<std::uint32_t> img(std::size_t{kW} * kH, 7u);
    const CUtexObject t =
        texture(pitched(bytes_of(img), 4), CU_AD_FORMAT_UNSIGNED_INT32, 1, 1, false, false);
    const CUdeviceptr at = zeros<float>(2), packed = zeros<std::uint32_t>(2),
                      halves = zeros<std::uint16_t>(4);
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(
        launch(function(load_ptx("texture"), "tex2d_half"), {1}, {1}, 0, t, at, packed, halves, 1));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("kernel tex2d_half, PTX line") != std::string::npos);
    CHECK(err.find("tex with a .f16x2 result on texture object") != std::string::npos);
    CHECK(err.find("which returns integers") != std::string::npos);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
    objects.clear();
  }
}

}  // namespace
