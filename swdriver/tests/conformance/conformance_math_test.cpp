// Kernel conformance: the math library beyond the basics, fast-math intrinsics, half2 and
// bfloat162 arithmetic (conformance/math.cu).
#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance_numeric.hpp"

namespace {

using conf::Conformance;
using conf::Round;
using u64 = unsigned long long;

std::uint32_t fb(float f) { return std::bit_cast<std::uint32_t>(f); }
float fv(std::uint32_t b) { return std::bit_cast<float>(b); }

constexpr int kFloatMath = 25;

// Tolerance in ulp of float_math result k; 0: exact (NaNs match NaNs); -1: an integer.
int float_math_tolerance(int k) {
  switch (k) {
    case 3:
    case 5: return -1;
    case 15:
    case 16:
    case 18:
    case 21:
    case 22:
    case 23:
    case 24: return 3;
    case 17:
    case 19:
    case 20: return 2;
    default: return 0;
  }
}

std::vector<std::uint32_t> float_math_reference(float x, float y) {
  std::vector<std::uint32_t> o(kFloatMath);
  const double dx = x, dy = y;
  int e = 0;
  o[0] = fb(std::fmod(x, y));
  o[1] = fb(std::remainder(x, y));
  o[2] = fb(std::frexp(x, &e));
  o[3] = static_cast<std::uint32_t>(e);
  o[4] = fb(std::ldexp(x, conf::saturate<int>(std::trunc(dy))));
  o[5] = static_cast<std::uint32_t>(std::ilogb(x));
  o[6] = fb(std::nextafter(x, y));
  o[7] = fb(std::fdim(x, y));
  o[8] = fb(std::copysign(x, y));
  o[9] = fb(std::isnan(x) ? 0.0f : std::clamp(x, 0.0f, 1.0f));
  o[10] = fb(1.0f / x);
  volatile float vx = x, vy = y, vax = std::fabs(x);
  o[11] = fb(conf::in_rounding_mode(FE_DOWNWARD, [&] {
    volatile float r = std::sqrt(static_cast<float>(vax));
    return static_cast<float>(r);
  }));
  o[12] = fb(conf::in_rounding_mode(FE_DOWNWARD, [&] {
    volatile float r = vx + vy;
    return static_cast<float>(r);
  }));
  o[13] = fb(conf::in_rounding_mode(FE_UPWARD, [&] {
    volatile float r = vx + vy;
    return static_cast<float>(r);
  }));
  o[14] = fb(conf::in_rounding_mode(FE_TOWARDZERO, [&] {
    volatile float r = std::fma(static_cast<float>(vx), static_cast<float>(vy), 0.1f);
    return static_cast<float>(r);
  }));
  o[15] = fb(static_cast<float>(std::atan2(dx, dy)));
  o[16] = fb(static_cast<float>(std::hypot(dx, dy)));
  o[17] = fb(static_cast<float>(std::cbrt(dx)));
  o[18] = fb(static_cast<float>(std::erf(dy)));
  o[19] = fb(static_cast<float>(std::log1p(std::fabs(dx))));
  o[20] = fb(static_cast<float>(std::expm1(dy)));
  o[21] = fb(static_cast<float>(std::asin(static_cast<double>(y / 40.0f))));
  o[22] = fb(static_cast<float>(std::atan(dx)));
  o[23] = fb(static_cast<float>(std::sin(dy)));
  o[24] = fb(static_cast<float>(std::cos(dy)));
  return o;
}

bool float_math_matches(int k, float x, std::uint32_t got, std::uint32_t want) {
  const int tol = float_math_tolerance(k);
  if (k == 3 && !std::isfinite(x)) return true;  // frexp's exponent is unspecified there
  if (tol < 0) return got == want;
  const float g = fv(got), w = fv(want);
  if (std::isnan(w)) return std::isnan(g);
  if (k == 9) return g == w;  // __saturatef(-0): either zero ([+0.0, 1.0] in libdevice's words)
  if (tol == 0) return got == want;
  return conf::ulp_distance(g, w) <= static_cast<std::uint64_t>(tol);
}

constexpr int kDoubleMath = 10;

std::vector<u64> double_math_reference(double x, double y) {
  std::vector<u64> o(kDoubleMath);
  const auto db = [](double d) { return std::bit_cast<u64>(d); };
  o[0] = db(std::fmod(x, y));
  o[1] = db(1.0 / x);
  volatile double vx = x, vy = y;
  o[2] = db(conf::in_rounding_mode(FE_TOWARDZERO, [&] {
    volatile double r = vx + vy;
    return static_cast<double>(r);
  }));
  o[3] = db(std::sin(x));
  o[4] = db(std::cos(x));
  o[5] = db(std::log(std::fabs(x)));
  o[6] = db(std::pow(std::fabs(x), y / 8.0));
  o[7] = db(std::atan2(x, y));
  o[8] = db(std::tanh(y / 4.0));
  o[9] = db(1.0 / std::sqrt(std::fabs(x)));
  return o;
}

constexpr int kHalfResults = 14;

std::vector<std::uint32_t> half_reference(float x, float y) {
  using conf::bf16_bits;
  using conf::half_bits;
  using conf::to_bf16;
  using conf::to_half;
  std::vector<std::uint32_t> o(kHalfResults);
  const auto h = [](double v) { return static_cast<std::uint32_t>(half_bits(v)); };
  const auto b = [](double v) { return static_cast<std::uint32_t>(bf16_bits(v)); };
  const double hx = to_half(x), hy = to_half(y);
  o[0] = h(to_half(hx + hy)) | (h(to_half(hy + 0.5)) << 16);
  o[1] = h(to_half(hx * hy)) | (h(to_half(hy * 0.5)) << 16);
  o[2] = h(to_half(hx * hy + 1.0)) | (h(to_half(hy * 0.5 + 1.0)) << 16);
  o[3] = (hx < hy ? 1u : 0u) | (hx == hy ? 2u : 0u) | (std::isnan(hx) ? 4u : 0u) |
         (std::isinf(hx) ? 8u : 0u);
  o[4] = static_cast<std::uint32_t>(conf::saturate<int>(conf::rn(hx)));
  const float scaled = x * 100.0f;
  o[5] = h(to_half(conf::saturate<int>(std::trunc(static_cast<double>(scaled)))));
  o[6] = h(to_half(x, Round::down)) | (h(to_half(x, Round::up)) << 16);
  const double bx = to_bf16(x), by = to_bf16(y);
  o[7] = b(to_bf16(bx + by)) | (b(to_bf16(by + 2.0)) << 16);
  o[8] = b(to_bf16(bx * by)) | (b(to_bf16(by * 2.0)) << 16);
  o[9] = b(to_bf16(static_cast<double>(x) * 1.0000001));
  o[10] = h(std::isnan(hx)   ? hy
            : std::isnan(hy) ? hx
                             : std::max(hx, hy)) |
          (h(std::fabs(hx)) << 16);
  o[11] = h(-to_half(hy * 0.5));
  o[12] = h(hx) | (h(hy) << 16);
  o[13] = b(bx) | (b(by) << 16);
  return o;
}

bool half_matches(int k, std::uint32_t got, std::uint32_t want) {
  switch (k) {
    case 3:
    case 4: return got == want;
    case 5:
    case 11: return conf::lanes16_match(got, want, false, 1);
    case 7:
    case 8:
    case 13: return conf::lanes16_match(got, want, true);
    case 9: return conf::lanes16_match(got, want, true, 1);
    case 10: {
      // max of +0 and -0 may be either zero.
      const bool zeros = (got & 0x7fffu) == 0 && (want & 0x7fffu) == 0;
      const std::uint32_t g = zeros ? (got & 0xffff0000u) | (want & 0xffffu) : got;
      return conf::lanes16_match(g, want, false);
    }
    default: return conf::lanes16_match(got, want, false);
  }
}

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.math: float library functions and directed rounding") {
    const CUfunction f = function(load_ptx("math"), "float_math");
    const float inf = HUGE_VALF;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs{0.0f,  -0.0f, 1.0f, -1.0f, 2.5f,  -7.25f, 100.0f, 1e-40f,
                          3e38f, inf,   -inf, nan,   0.75f, 1e10f,  -3.0f,  5.5f};
    std::vector<float> ys{1.0f, -2.0f, 0.0f, 3.0f, -1.5f, 2.0f,  7.0f, 1.0f,
                          2.0f, 2.0f,  5.0f, 1.0f, nan,   -4.0f, 3.0f, -0.0f};
    conf::Rng rng(50);
    for (int i = 0; i < 200; ++i) {
      const double a = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
      const double b = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
      const double scale = i % 3 == 0 ? 1.0 : i % 3 == 1 ? 50.0 : 1e5;
      xs.push_back(static_cast<float>((a * 2.0 - 1.0) * scale));
      ys.push_back(static_cast<float>((b * 2.0 - 1.0) * 39.0));
    }
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dy = upload(ys);
    const CUdeviceptr dout = zeros<std::uint32_t>(xs.size() * kFloatMath);
    run(f, {(static_cast<unsigned>(n) + 99) / 100}, {100}, 0, dx, dy, dout, n);
    std::vector<std::uint32_t> want;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const auto r = float_math_reference(xs[i], ys[i]);
      want.insert(want.end(), r.begin(), r.end());
    }
    conf::compare(
        download<std::uint32_t>(dout, want.size()), want, "float_math (25 results per input)",
        [&](std::uint32_t g, std::uint32_t w, std::size_t i) {
          return float_math_matches(static_cast<int>(i % kFloatMath), xs[i / kFloatMath], g, w);
        });
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.math: fast intrinsics within their documented error") {
    const CUfunction f = function(load_ptx("math"), "fast_math");
    std::vector<float> xs;
    for (int i = 0; i < 300; ++i) xs.push_back(static_cast<float>(i - 150) / 50.0f);
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dout = zeros<float>(xs.size() * 6);
    run(f, {3}, {100}, 0, dx, dout, n);
    std::vector<float> want;
    for (float x : xs) {
      const double d = x;
      const double a = std::fabs(d) + 1.0;
      const float r[6] = {static_cast<float>(std::exp(d)),
                          static_cast<float>(std::log(static_cast<double>(std::fabs(x) + 1.0f))),
                          static_cast<float>(std::sin(d)),
                          static_cast<float>(std::cos(d)),
                          static_cast<float>(d / 3.0),
                          static_cast<float>(std::sqrt(a))};
      want.insert(want.end(), std::begin(r), std::end(r));
    }
    conf::compare(download<float>(dout, want.size()), want, "fast_math (6 results per input)",
                  [](float g, float w, std::size_t) {
                    return std::fabs(static_cast<double>(g) - w) <=
                           std::ldexp(1.0, -19) * std::max(1.0, std::fabs(static_cast<double>(w)));
                  });
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.math: double library functions") {
    const CUfunction f = function(load_ptx("math"), "double_math");
    std::vector<double> xs{0.5, -3.7, 1e300, 1e-300, 100.25, -0.0, 1e22, 7.0, -1e-310, 2.0};
    std::vector<double> ys{2.0, 1.5, -3.0, 7.0, 0.125, 4.0, 3.0, -9.0, 1.0, 0.0};
    conf::Rng rng(51);
    for (int i = 0; i < 150; ++i) {
      const double a = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
      const double b = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
      xs.push_back((a * 2.0 - 1.0) * (i % 2 == 0 ? 100.0 : 1e6));
      ys.push_back((b * 2.0 - 1.0) * 10.0);
    }
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dy = upload(ys);
    const CUdeviceptr dout = zeros<u64>(xs.size() * kDoubleMath);
    run(f, {(static_cast<unsigned>(n) + 63) / 64}, {64}, 0, dx, dy, dout, n);
    std::vector<u64> want;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const auto r = double_math_reference(xs[i], ys[i]);
      want.insert(want.end(), r.begin(), r.end());
    }
    conf::compare(download<u64>(dout, want.size()), want, "double_math (10 results per input)",
                  [](u64 g, u64 w, std::size_t i) {
                    const double gd = std::bit_cast<double>(g), wd = std::bit_cast<double>(w);
                    if (std::isnan(wd)) return std::isnan(gd);
                    if (i % kDoubleMath < 3) return g == w;
                    return conf::ulp_distance(gd, wd) <= 3;
                  });
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.math: half2 and bfloat162 arithmetic and half conversions") {
    const CUfunction f = function(load_ptx("math"), "half_vectors");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs{0.0f, -0.0f, 1.0f,   65504.0f, 70000.0f, 6e-8f,     -2.5f,
                          nan,  1e-3f, 300.7f, -1000.3f, 0.1f,     HUGE_VALF, 3.14159f};
    std::vector<float> ys{-0.0f, 0.0f,    1.0f,   2.0f, -1.0f, 6e-8f, 2.5f,
                          1.0f,  1000.0f, -0.33f, 2.0f, nan,   1.0f,  -2.71828f};
    conf::Rng rng(52);
    for (int i = 0; i < 150; ++i) {
      xs.push_back(static_cast<float>(rng.range(-2000000, 2000000)) / 997.0f);
      ys.push_back(static_cast<float>(rng.range(-200000, 200000)) / 1013.0f);
    }
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dy = upload(ys);
    const CUdeviceptr dout = zeros<std::uint32_t>(xs.size() * kHalfResults);
    run(f, {(static_cast<unsigned>(n) + 99) / 100}, {100}, 0, dx, dy, dout, n);
    std::vector<std::uint32_t> want;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const auto r = half_reference(xs[i], ys[i]);
      want.insert(want.end(), r.begin(), r.end());
    }
    conf::compare(download<std::uint32_t>(dout, want.size()), want,
                  "half_vectors (14 results per input)",
                  [](std::uint32_t g, std::uint32_t w, std::size_t i) {
                    return half_matches(static_cast<int>(i % kHalfResults), g, w);
                  });
  }
}
