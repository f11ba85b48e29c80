// Kernel conformance: integer and floating types, conversions, rounding intrinsics, half and
// bfloat16, and the math library (conformance/types.cu).
#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance_numeric.hpp"

namespace {

using conf::bf16_bits;
using conf::Conformance;
using conf::Dir;
using conf::directed;
using conf::half_bits;
using conf::rn;
using conf::saturate;
using conf::to_bf16;
using conf::to_half;
using u64 = unsigned long long;

u64 sx(long long v) { return static_cast<u64>(v); }
u64 fbits(float f) { return std::bit_cast<std::uint32_t>(f); }
u64 dbits(double d) { return std::bit_cast<u64>(d); }

constexpr int kFloatResults = 48;
constexpr int kIntResults = 28;
constexpr int kDoubleResults = 12;

// Kind of each float_types result: 0 exact bits (any NaN matches a NaN), 1 float compared by
// value (fmin/fmax: the sign of a zero is not specified), 2 half bits, 3 bf16 bits, k>=10: a
// float within k-10 ulp.
int float_kind(int k) {
  if (k == 9 || k == 10) return 1;
  if (k == 31 || k == 33 || k == 34 || k == 35) return 2;
  if (k == 36 || k == 38 || k == 39) return 3;
  if (k == 40) return 10 + 3;             // rsqrtf
  if (k == 41) return 10 + 3;             // expf
  if (k == 42) return 10 + 2;             // logf
  if (k == 43 || k == 44) return 10 + 3;  // sinf, cosf
  if (k == 45) return 10 + 8;             // powf
  if (k == 46) return 10 + 3;             // exp2f
  if (k == 47) return 10 + 3;             // tanhf
  return 0;
}

bool is_float_result(int k) {
  return (k <= 15) || k == 28 || k == 30 || k == 32 || k == 37 || k >= 40;
}

std::vector<u64> float_reference(float x, float y) {
  std::vector<u64> o(kFloatResults);
  const double dx = x, dy = y;
  o[0] = fbits(x + y);
  o[1] = fbits(x * y);
  o[2] = fbits(x / y);
  o[3] = fbits(x / y);
  o[4] = fbits(std::fma(x, y, 1.5f));
  o[5] = fbits(std::sqrt(std::fabs(x)));
  o[6] = fbits(directed(dx * dy, Dir::zero));
  o[7] = fbits(directed(dx * dy, Dir::up));
  o[8] = fbits(directed(dx * dy, Dir::down));
  o[9] = fbits(std::fmin(x, y));
  o[10] = fbits(std::fmax(x, y));
  o[11] = fbits(std::floor(x));
  o[12] = fbits(std::ceil(x));
  o[13] = fbits(std::trunc(x));
  o[14] = fbits(std::nearbyint(x));
  o[15] = fbits(std::round(x));
  o[16] = static_cast<unsigned>(saturate<int>(std::trunc(dx)));
  o[17] = static_cast<unsigned>(saturate<int>(rn(dx)));
  o[18] = static_cast<unsigned>(saturate<int>(std::trunc(dx)));
  o[19] = static_cast<unsigned>(saturate<int>(std::floor(dx)));
  o[20] = static_cast<unsigned>(saturate<int>(std::ceil(dx)));
  o[21] = saturate<unsigned>(rn(dx));
  o[22] = saturate<unsigned>(std::trunc(dx));
  o[23] = sx(saturate<long long>(std::trunc(dx)));
  o[24] = sx(saturate<long long>(rn(dx)));
  o[25] = saturate<u64>(std::trunc(dx));
  o[26] = sx(static_cast<short>(saturate<int>(std::trunc(dx))));
  o[27] = dbits(dx);
  o[28] = fbits(static_cast<float>(dx * dy));
  o[29] = dbits(dx / dy);
  o[30] = fbits(directed(dx / 3.0, Dir::zero));
  const double hx = to_half(dx);
  const double hy = to_half(dy);
  o[31] = half_bits(hx);
  o[32] = fbits(static_cast<float>(hx));
  o[33] = half_bits(to_half(hx + hy));
  o[34] = half_bits(to_half(hx * hy));
  o[35] = half_bits(to_half(dx, conf::Round::zero));
  const double bx = to_bf16(dx);
  const double by = to_bf16(dy);
  o[36] = bf16_bits(bx);
  o[37] = fbits(static_cast<float>(bx));
  o[38] = bf16_bits(to_bf16(bx + by));
  o[39] = bf16_bits(to_bf16(bx * by));
  o[40] = fbits(static_cast<float>(1.0 / std::sqrt(std::fabs(dx))));
  o[41] = fbits(static_cast<float>(std::exp(dx)));
  o[42] = fbits(static_cast<float>(std::log(std::fabs(dx))));
  o[43] = fbits(static_cast<float>(std::sin(dx)));
  o[44] = fbits(static_cast<float>(std::cos(dx)));
  o[45] = fbits(static_cast<float>(std::pow(std::fabs(dx), dy)));
  o[46] = fbits(static_cast<float>(std::exp2(dy)));
  o[47] = fbits(static_cast<float>(std::tanh(dy)));
  return o;
}

bool is_nan_format(u64 bits, int p, int ebits) {
  const int mbits = p - 1;
  const u64 all_ones = (u64{1} << ebits) - 1;
  return ((bits >> mbits) & all_ones) == all_ones && (bits & ((u64{1} << mbits) - 1)) != 0;
}

float as_float(u64 bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits)); }

bool float_result_matches(int k, u64 got, u64 want) {
  const int kind = float_kind(k);
  if (kind == 2 || kind == 3) {
    const int p = kind == 2 ? 11 : 8;
    const int e = kind == 2 ? 5 : 8;
    if (is_nan_format(want, p, e)) return is_nan_format(got, p, e);
    return got == want;
  }
  if (k == 27 || k == 29) {
    const double g = std::bit_cast<double>(got), w = std::bit_cast<double>(want);
    return (std::isnan(g) && std::isnan(w)) || got == want;
  }
  if (!is_float_result(k)) return got == want;
  if (got >> 32 != 0) return false;
  const float g = as_float(got), w = as_float(want);
  if (kind == 1) return (std::isnan(g) && std::isnan(w)) || g == w;
  if (kind >= 10) return conf::ulp_distance(g, w) <= static_cast<std::uint64_t>(kind - 10);
  return (std::isnan(g) && std::isnan(w)) || got == want;
}

std::vector<u64> int_reference(long long v) {
  std::vector<u64> o(kIntResults);
  const char c = static_cast<char>(v);
  const auto sc = static_cast<signed char>(v >> 8);
  const auto uc = static_cast<unsigned char>(v >> 3);
  const auto s = static_cast<short>(v >> 5);
  const auto us = static_cast<unsigned short>(v >> 17);
  const int x = static_cast<int>(v);
  const auto u = static_cast<unsigned>(v >> 13);
  const auto ull = static_cast<u64>(v);
  const auto wrap = [](long long w) { return static_cast<int>(static_cast<std::uint32_t>(w)); };
  o[0] = sx(c);
  o[1] = sx(sc);
  o[2] = uc;
  o[3] = sx(s);
  o[4] = us;
  o[5] = sx(x);
  o[6] = u;
  o[7] = sx(sc * c + uc);
  o[8] = sx(wrap(static_cast<long long>(s) * us - x));
  const int d = static_cast<int>(((v >> 40) & 0xffff) | 3) - 30001;
  o[9] = sx(x / d);
  o[10] = sx(x % d);
  const unsigned ud = static_cast<unsigned>(d) | 1u;
  o[11] = u / ud;
  o[12] = u % ud;
  const long long d64 = (v >> 20) | 1;
  o[13] = sx(v / d64);
  o[14] = sx(v % d64);
  o[15] = ull / (static_cast<u64>(d64) | 5u);
  o[16] = sx(x >> (v & 31));
  o[17] = u >> (v & 31);
  o[18] = ull << (v & 63);
  o[19] = sx(v >> ((v >> 8) & 63));
  o[20] = sx(static_cast<short>(s * 3 + c));
  o[21] = sx(wrap(static_cast<long long>(x) + d));
  o[22] = sx(x == INT_MIN ? 0 : std::abs(x));
  o[23] = static_cast<u64>(v == LLONG_MIN ? 0 : std::llabs(v));
  o[24] = fbits(static_cast<float>(x));
  o[25] = fbits(static_cast<float>(v));
  o[26] = dbits(static_cast<double>(ull));
  o[27] = fbits(static_cast<float>(u)) | (fbits(static_cast<float>(us)) << 32);
  return o;
}

std::vector<u64> double_reference(double x, double y) {
  std::vector<u64> o(kDoubleResults);
  o[0] = dbits(x + y);
  o[1] = dbits(x * y);
  o[2] = dbits(x / y);
  o[3] = dbits(std::fma(x, y, -0.25));
  o[4] = dbits(std::sqrt(std::fabs(x)));
  o[5] = sx(saturate<int>(std::trunc(x)));
  o[6] = sx(saturate<long long>(std::trunc(x)));
  o[7] = fbits(static_cast<float>(x));
  o[8] = dbits(std::floor(x));
  o[9] = dbits(std::nearbyint(y));
  o[10] = sx(saturate<long long>(rn(x)));
  o[11] = dbits(std::exp(y));
  return o;
}

// Compares all results; `matches(k, got, want)` per result index k.
template <class Matches>
void compare_results(const std::vector<u64>& got, const std::vector<u64>& want, int per,
                     const std::string& what, Matches matches) {
  // The report names flat indices: input = index / per, result = index % per.
  conf::compare(got, want, what + " (" + std::to_string(per) + " results per input)",
                [&](u64 g, u64 w, std::size_t i) {
                  return matches(static_cast<int>(i % static_cast<std::size_t>(per)), g, w);
                });
}

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance, "conformance.types: integer types and conversions between them") {
    const CUfunction f = function(load_ptx("types"), "int_types");
    std::vector<long long> in{0,
                              1,
                              -1,
                              127,
                              128,
                              -128,
                              255,
                              32767,
                              -32768,
                              65535,
                              INT_MAX,
                              INT_MIN,
                              LLONG_MAX,
                              LLONG_MIN,
                              0x80000000LL,
                              0xffffffffLL,
                              -0x123456789abLL,
                              0x7fffffffffffLL,
                              1LL << 40,
                              -(1LL << 40) + 17};
    conf::Rng rng(30);
    for (int i = 0; i < 180; ++i) {
      const u64 r = rng.next();
      in.push_back(static_cast<long long>(i % 3 == 0 ? r : i % 3 == 1 ? r >> 20 : r >> 45));
    }
    const auto n = static_cast<int>(in.size());
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<u64>(in.size() * kIntResults);
    run(f, {(static_cast<unsigned>(n) + 99) / 100}, {100}, 0, din, dout, n);
    std::vector<u64> want;
    for (long long v : in) {
      const std::vector<u64> r = int_reference(v);
      want.insert(want.end(), r.begin(), r.end());
    }
    compare_results(download<u64>(dout, want.size()), want, kIntResults, "int_types",
                    [](int, u64 g, u64 w) { return g == w; });
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.types: float conversions rounding intrinsics half bfloat16 and math") {
    const CUfunction f = function(load_ptx("types"), "float_types");
    const float inf = HUGE_VALF;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs{0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.0f,
                          inf,
                          -inf,
                          nan,
                          1.0f,
                          2.5f,
                          -2.5f,
                          0.5f,
                          1.5f,
                          -1.5f,
                          3.5f,
                          2147483520.0f,
                          2147483648.0f,
                          -2147483648.0f,
                          -2147483904.0f,
                          4294967040.0f,
                          4294967296.0f,
                          -0.4f,
                          -0.6f,
                          1e10f,
                          -1e20f,
                          1e-40f,
                          1.17549435e-38f,
                          3.4e38f,
                          9.22337204e18f,
                          -9.22337204e18f,
                          1.8446744e19f,
                          65504.0f,
                          65520.0f,
                          6e-8f,
                          1e-5f,
                          0.1f,
                          -7.75f,
                          100.0f,
                          0.3f};
    std::vector<float> ys{1.0f,  1.0f,  0.0f, 0.0f,   0.0f,   2.0f,  0.5f,  1.0f,   nan,  1.5f,
                          3.0f,  -0.5f, 2.0f, -2.0f,  0.25f,  1.0f,  1.0f,  1.0f,   1.0f, 1.0f,
                          1.0f,  1.0f,  1.0f, -1e10f, 1e-20f, 1e30f, 0.5f,  10.0f,  1.0f, 3.0f,
                          -2.0f, 1.0f,  1.0f, 1.0f,   3.0f,   -3.0f, 1.25f, -0.75f, 0.3f};
    REQUIRE(xs.size() == ys.size());
    conf::Rng rng(31);
    for (int i = 0; i < 160; ++i) {
      const double scale = i % 4 == 0 ? 1.0 : i % 4 == 1 ? 100.0 : i % 4 == 2 ? 1e6 : 1e-3;
      const double a = static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) /
                       9007199254740992.0;  // [0, 1)
      const double b =
          static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) / 9007199254740992.0;
      xs.push_back(static_cast<float>((a * 2.0 - 1.0) * scale));
      ys.push_back(static_cast<float>((b * 2.0 - 1.0) * (i % 2 == 0 ? 4.0 : 30.0)));
    }
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dy = upload(ys);
    const CUdeviceptr dout = zeros<u64>(xs.size() * kFloatResults);
    run(f, {(static_cast<unsigned>(n) + 63) / 64}, {64}, 0, dx, dy, dout, n);
    std::vector<u64> want;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::vector<u64> r = float_reference(xs[i], ys[i]);
      want.insert(want.end(), r.begin(), r.end());
    }
    compare_results(download<u64>(dout, want.size()), want, kFloatResults, "float_types",
                    float_result_matches);
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.types: double arithmetic and conversions") {
    const CUfunction f = function(load_ptx("types"), "double_types");
    const double inf = HUGE_VAL;
    std::vector<double> xs{0.0,
                           -0.0,
                           1.5,
                           -2.5,
                           2.5,
                           inf,
                           -inf,
                           std::nan(""),
                           1e300,
                           -1e-310,
                           2147483647.5,
                           -2147483648.9,
                           3e9,
                           9.3e18,
                           -9.3e18,
                           4503599627370497.0,
                           0.49999999999999994,
                           7.0,
                           -0.5,
                           1e-5};
    std::vector<double> ys{1.0,   2.0,    0.0, 3.0,  -0.5, 1.5, 2.5,  1.0, 1e10,   1e-10,
                           700.0, -745.0, 0.5, -0.5, 1.5,  2.5, -1.5, 3.0, 1e-300, 40.0};
    conf::Rng rng(32);
    for (int i = 0; i < 100; ++i) {
      xs.push_back(static_cast<double>(static_cast<std::int64_t>(rng.next())) * 1e-12);
      ys.push_back(static_cast<double>(static_cast<std::int64_t>(rng.next() >> 8)) * 1e-16);
    }
    const auto n = static_cast<int>(xs.size());
    const CUdeviceptr dx = upload(xs);
    const CUdeviceptr dy = upload(ys);
    const CUdeviceptr dout = zeros<u64>(xs.size() * kDoubleResults);
    run(f, {(static_cast<unsigned>(n) + 99) / 100}, {100}, 0, dx, dy, dout, n);
    std::vector<u64> want;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::vector<u64> r = double_reference(xs[i], ys[i]);
      want.insert(want.end(), r.begin(), r.end());
    }
    compare_results(download<u64>(dout, want.size()), want, kDoubleResults, "double_types",
                    [](int k, u64 g, u64 w) {
                      if (k == 5 || k == 6 || k == 10) return g == w;
                      if (k == 7) {
                        const float gf = as_float(g), wf = as_float(w);
                        return (std::isnan(gf) && std::isnan(wf)) || g == w;
                      }
                      const double gd = std::bit_cast<double>(g), wd = std::bit_cast<double>(w);
                      if (k == 11) return conf::ulp_distance(gd, wd) <= 2;
                      return (std::isnan(gd) && std::isnan(wd)) || g == w;
                    });
  }
}
