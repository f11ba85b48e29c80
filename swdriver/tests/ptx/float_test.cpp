// PTX floating-point instructions: rounding modifiers, .ftz, .sat, NaN and infinity rules, fused
// multiply-add, min/max, testp, copysign, half and bfloat16 arithmetic (PTX ISA 9.0,
// "Floating-Point Instructions", "Half Precision Floating-Point Instructions").
#include <cmath>
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::bin;
using ptxt::Check;
using ptxt::nan;
using ptxt::PtxTest;
using ptxt::tern;
using ptxt::un;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr u64 kOne = 0x3f800000, kNegOne = 0xbf800000, kTwo = 0x40000000;
constexpr u64 kInf = 0x7f800000, kNegInf = 0xff800000, kNaN = 0x7fc00000;
constexpr u64 kNaNPayload = 0x7fc00123, kMax = 0x7f7fffff, kDenorm = 0x00000001;
constexpr u64 kMinNormal = 0x00800000, kNegZero = 0x80000000;
constexpr u64 kHalfUlp = 0x33800000;  // 2^-24: half an ulp of 1.0
constexpr u64 kD1 = 0x3ff0000000000000, kDInf = 0x7ff0000000000000;

u64 F(float v) { return ptxt::f32(v); }
u64 D(double v) { return ptxt::f64(v); }

}  // namespace

TEST_SUITE("ptx.float") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.float: add.f32 rounds by its modifier") {
    check_all({
        bin("add.f32", 32, kOne, kTwo, F(3.0f)),
        bin("add.rn.f32", 32, kOne, kHalfUlp, 0x3f800000),  // a tie goes to even
        bin("add.rp.f32", 32, kOne, kHalfUlp, 0x3f800001),
        bin("add.rz.f32", 32, kOne, kHalfUlp + 1, 0x3f800000),
        bin("add.rn.f32", 32, kOne, kHalfUlp + 1, 0x3f800001),
        bin("add.rm.f32", 32, kOne, kHalfUlp + 1, 0x3f800000),
        bin("add.rm.f32", 32, kNegOne, kHalfUlp | kNegZero, 0xbf800001),
        bin("add.rp.f32", 32, kNegOne, kHalfUlp | kNegZero, 0xbf800000),
        bin("add.rz.f32", 32, kNegOne, kHalfUlp | kNegZero, 0xbf800000),
        bin("add.rn.f32", 32, kOne, kNegOne, 0),
        bin("add.rm.f32", 32, kOne, kNegOne, kNegZero),  // an exact zero sum is -0 rounding down
        bin("add.f32", 32, kMax, kMax, kInf),
        bin("add.rz.f32", 32, kMax, kMax, kMax),
        bin("add.rm.f32", 32, kMax, kMax, kMax),
        bin("sub.rp.f32", 32, kMax | kNegZero, kMax, kMax | kNegZero),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: NaN and infinity in add mul div sqrt") {
    check_all({
        nan(bin("add.f32", 32, kInf, kNegInf, 0)),
        nan(bin("sub.f32", 32, kInf, kInf, 0)),
        nan(bin("add.f32", 32, kNaNPayload, kOne, 0)),
        nan(bin("mul.f32", 32, 0, kInf, 0)),
        nan(bin("div.rn.f32", 32, 0, 0, 0)),
        nan(bin("div.rn.f32", 32, kInf, kNegInf, 0)),
        nan(un("sqrt.rn.f32", 32, kNegOne, 0)),
        nan(bin("add.f64", 64, kDInf, kDInf | 0x8000000000000000, 0)),
        nan(bin("mul.f64", 64, 0x7ff8000000000123, kD1, 0)),
        bin("mul.f32", 32, F(3.0f), kInf, kInf),
        bin("mul.f32", 32, F(-3.0f), kInf, kNegInf),
        bin("div.rn.f32", 32, kOne, 0, kInf),
        bin("div.rn.f32", 32, kNegOne, 0, kNegInf),
        bin("div.rn.f32", 32, kOne, kNegZero, kNegInf),
        bin("div.rn.f32", 32, kOne, kInf, 0),
        un("sqrt.rn.f32", 32, kNegZero, kNegZero),
        un("sqrt.rn.f32", 32, kInf, kInf),
        un("rcp.rn.f32", 32, 0, kInf),
        un("rcp.rn.f32", 32, kNegZero, kNegInf),
        un("rcp.rn.f32", 32, kInf, 0),
        bin("div.rn.f64", 64, kD1, 0, kDInf),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: mul div rcp sqrt round correctly in each mode") {
    check_all({
        bin("mul.rn.f32", 32, 0x3f800001, 0x3f800001, 0x3f800002),
        bin("mul.rz.f32", 32, 0x3f800001, 0x3f800001, 0x3f800002),
        bin("mul.rp.f32", 32, 0x3f800001, 0x3f800001, 0x3f800003),
        bin("mul.rm.f32", 32, 0xbf800001, 0x3f800001, 0xbf800003),
        bin("div.rn.f32", 32, kOne, F(3.0f), 0x3eaaaaab),
        bin("div.rz.f32", 32, kOne, F(3.0f), 0x3eaaaaaa),
        bin("div.rm.f32", 32, kOne, F(3.0f), 0x3eaaaaaa),
        bin("div.rp.f32", 32, kOne, F(3.0f), 0x3eaaaaab),
        bin("div.rn.f32", 32, F(10.0f), F(4.0f), F(2.5f)),
        bin("div.rn.f64", 64, kD1, D(3.0), 0x3fd5555555555555),
        bin("div.rp.f64", 64, kD1, D(3.0), 0x3fd5555555555556),
        bin("div.rz.f64", 64, kD1, D(3.0), 0x3fd5555555555555),
        un("rcp.rn.f32", 32, F(4.0f), F(0.25f)),
        un("rcp.rn.f32", 32, F(3.0f), 0x3eaaaaab),
        un("rcp.rz.f32", 32, F(3.0f), 0x3eaaaaaa),
        un("rcp.rn.f64", 64, D(3.0), 0x3fd5555555555555),
        un("sqrt.rn.f32", 32, kTwo, 0x3fb504f3),
        un("sqrt.rz.f32", 32, kTwo, 0x3fb504f3),
        un("sqrt.rp.f32", 32, kTwo, 0x3fb504f4),
        un("sqrt.rn.f32", 32, F(16.0f), F(4.0f)),
        un("sqrt.rn.f64", 64, D(2.0), 0x3ff6a09e667f3bcd),
        bin("add.rn.f64", 64, kD1, 0x3ca0000000000000, kD1),  // 1 + 2^-53: tie to even
        bin("add.rp.f64", 64, kD1, 0x3ca0000000000000, kD1 + 1),
        bin("sub.rm.f64", 64, kD1, kD1, 0x8000000000000000),
        bin("mul.rz.f64", 64, 0x3ff0000000000001, 0x3ff0000000000001, 0x3ff0000000000002),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: subnormals survive without .ftz and flush with it") {
    check_all({
        bin("add.f32", 32, kDenorm, kDenorm, 2),
        bin("add.ftz.f32", 32, kDenorm, kDenorm, 0),
        bin("sub.f32", 32, kMinNormal + 1, kMinNormal, 1),
        bin("sub.ftz.f32", 32, kMinNormal + 1, kMinNormal, 0),
        bin("mul.f32", 32, kMinNormal, F(0.5f), 0x00400000),
        bin("mul.ftz.f32", 32, kMinNormal, F(0.5f), 0),
        bin("mul.ftz.f32", 32, kMinNormal | kNegZero, F(0.5f), kNegZero),  // sign kept
        bin("mul.ftz.f32", 32, kDenorm | kNegZero, kOne, kNegZero),
        bin("div.rn.ftz.f32", 32, kOne, kDenorm, kInf),  // the divisor flushes to +0
        bin("div.rn.f32", 32, kDenorm, F(0.5f), 2),
        un("sqrt.rn.ftz.f32", 32, kDenorm, 0),
        tern("fma.rn.ftz.f32", 32, kDenorm, kOne, 0, 0),
        tern("fma.rn.f32", 32, kDenorm, kOne, 0, kDenorm),
        bin("add.f64", 64, 1, 1, 2),  // f64 never flushes
        un("abs.ftz.f32", 32, kDenorm | kNegZero, 0),
        un("neg.ftz.f32", 32, kDenorm, kNegZero),
        un("neg.f32", 32, kDenorm, kDenorm | kNegZero),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: .sat clamps to 0..1 and turns NaN into +0") {
    check_all({
        bin("add.sat.f32", 32, F(0.75f), F(0.5f), kOne),
        bin("add.sat.f32", 32, kNegOne, F(0.5f), 0),
        bin("add.sat.f32", 32, F(0.25f), F(0.5f), F(0.75f)),
        bin("add.sat.f32", 32, kInf, kNegInf, 0),
        bin("mul.sat.f32", 32, kTwo, kTwo, kOne),
        bin("sub.sat.f32", 32, F(0.25f), F(0.5f), 0),
        tern("fma.rn.sat.f32", 32, kTwo, kOne, 0, kOne),
        tern("fma.rn.sat.f32", 32, kNaN, kOne, 0, 0),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: fma rounds once") {
    check_all({
        tern("fma.rn.f32", 32, 0x3f800001, 0x3f800001, 0xbf800002, 0x28800000),
        tern("mad.rn.f32", 32, 0x3f800001, 0x3f800001, 0xbf800002, 0x28800000),
        tern("fma.rn.f64", 64, 0x3ff0000000000001, 0x3ff0000000000001, 0xbff0000000000002,
             0x3970000000000000),
        tern("fma.rn.f32", 32, F(2.0f), F(3.0f), F(1.0f), F(7.0f)),
        tern("fma.rz.f32", 32, 0x3f800001, 0x3f800001, 0, 0x3f800002),
        tern("fma.rp.f32", 32, 0x3f800001, 0x3f800001, 0, 0x3f800003),
        tern("fma.rm.f32", 32, kOne, kOne, kNegOne, kNegZero),
        nan(tern("fma.rn.f32", 32, kInf, 0, kOne, 0)),
        tern("fma.rn.f64", 64, D(2.0), D(3.0), D(1.0), D(7.0)),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: min and max ignore a single NaN") {
    check_all({
        bin("min.f32", 32, kNaN, kOne, kOne),
        bin("min.f32", 32, kOne, kNaNPayload, kOne),
        bin("max.f32", 32, kNaN, kNegOne, kNegOne),
        nan(bin("min.f32", 32, kNaN, kNaNPayload, 0)),
        nan(bin("max.f32", 32, kNaN, kNaN, 0)),
        nan(bin("min.NaN.f32", 32, kNaN, kOne, 0)),
        nan(bin("max.NaN.f32", 32, kOne, kNaN, 0)),
        bin("min.f32", 32, kNegInf, 0, kNegInf),
        bin("max.f32", 32, kNegInf, kInf, kInf),
        bin("min.f32", 32, F(-2.0f), F(1.0f), F(-2.0f)),
        bin("max.f64", 64, 0x7ff8000000000000, D(2.0), D(2.0)),
        bin("min.f64", 64, D(-1.5), D(2.0), D(-1.5)),
        bin("min.f32", 32, 0, kNegZero, kNegZero),  // PTX ISA min: +0.0 > -0.0
        bin("max.f32", 32, kNegZero, 0, 0),
        bin("min.f64", 64, 0, 0x8000000000000000, 0x8000000000000000),
        bin("max.f32", 32, kDenorm, 0, kDenorm),
        bin("max.ftz.f32", 32, kDenorm, F(-1.0f), 0),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: abs neg copysign touch only the sign") {
    check_all({
        un("abs.f32", 32, kNegZero, 0),
        un("abs.f32", 32, kNegInf, kInf),
        un("neg.f32", 32, 0, kNegZero),
        un("neg.f64", 64, kD1, 0xbff0000000000000),
        un("abs.f64", 64, 0x8000000000000000, 0),
        nan(un("abs.f32", 32, 0xffc00000, 0)),
        bin("copysign.f32", 32, kNegOne, kTwo, 0xc0000000),  // sign of a, value of b
        bin("copysign.f32", 32, 0, F(-3.0f), F(3.0f)),
        bin("copysign.f32", 32, kNegZero, kInf, kNegInf),
        bin("copysign.f64", 64, 0x8000000000000000, 0x7ff8000000000000, 0xfff8000000000000),
        bin("copysign.f64", 64, kD1, 0xc000000000000000, 0x4000000000000000),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: testp classifies values") {
    check_all({
        un("testp.finite.f32", 32, kOne, 1, 1),
        un("testp.finite.f32", 32, kInf, 0, 1),
        un("testp.finite.f32", 32, kNaN, 0, 1),
        un("testp.infinite.f32", 32, kNegInf, 1, 1),
        un("testp.infinite.f32", 32, kMax, 0, 1),
        un("testp.number.f32", 32, kNaN, 0, 1),
        un("testp.number.f32", 32, kInf, 1, 1),
        un("testp.notanumber.f32", 32, kNaNPayload, 1, 1),
        un("testp.notanumber.f32", 32, kOne, 0, 1),
        un("testp.normal.f32", 32, 0, 0, 1),
        un("testp.normal.f32", 32, kOne, 1, 1),
        un("testp.normal.f32", 32, kDenorm, 0, 1),
        un("testp.normal.f32", 32, kInf, 0, 1),
        un("testp.subnormal.f32", 32, kDenorm, 1, 1),
        un("testp.subnormal.f32", 32, kNegZero, 0, 1),
        un("testp.subnormal.f64", 64, 1, 1, 1),
        un("testp.infinite.f64", 64, kDInf, 1, 1),
        un("testp.normal.f64", 64, kD1, 1, 1),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: f16 and f16x2 arithmetic rounds in half precision") {
    check_all({
        bin("add.f16", 16, 0x3c00, 0x3c00, 0x4000),
        bin("add.f16", 16, 0x7bff, 0x7bff, 0x7c00),      // overflow to +inf
        bin("add.f16", 16, 0x3c00, 0x1000, 0x3c00),      // 1 + 2^-11: tie to even
        bin("add.f16", 16, 0x3c00, 0x1001, 0x3c01),      // just above the tie
        bin("mul.f16", 16, 0x3c01, 0x3c01, 0x3c02),      // (1+2^-10)^2
        bin("add.f16", 16, 0x0001, 0x0001, 0x0002),      // subnormals kept
        bin("add.ftz.f16", 16, 0x0001, 0x0001, 0x0000),  // and flushed with .ftz
        bin("sub.f16", 16, 0x4000, 0x4200, 0xbc00),      // 2 - 3
        tern("fma.rn.f16", 16, 0x4000, 0x4200, 0x3c00, 0x4700),
        nan(bin("mul.f16", 16, 0x7c00, 0x0000, 0)),
        un("neg.f16", 16, 0x3c00, 0xbc00),
        un("abs.f16", 16, 0xbc00, 0x3c00),
        bin("min.f16", 16, 0x7e00, 0x3c00, 0x3c00),
        bin("max.f16", 16, 0xc000, 0x3c00, 0x3c00),
        bin("add.sat.f16", 16, 0x3c00, 0x3c00, 0x3c00),
        bin("add.f16x2", 32, 0x3c004000, 0x3c003c00, 0x40004200),
        bin("mul.f16x2", 32, 0x40004200, 0xbc003c00, 0xc0004200),
        tern("fma.rn.f16x2", 32, 0x40004000, 0x40004200, 0x3c00bc00, 0x45004500),
        bin("min.f16x2", 32, 0x3c00c000, 0x40004000, 0x3c00c000),
        bin("max.f16x2", 32, 0x7e003c00, 0x40004000, 0x40004000),
        un("neg.f16x2", 32, 0x3c00bc00, 0xbc003c00),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: bf16 and bf16x2 arithmetic") {
    check_all({
        bin("add.bf16", 16, 0x3f80, 0x3f80, 0x4000),
        bin("add.rn.bf16", 16, 0x3f80, 0x3b80, 0x3f80),  // 1 + 2^-8: tie to even
        bin("add.rn.bf16", 16, 0x3f80, 0x3b81, 0x3f81),
        bin("mul.rn.bf16", 16, 0x4000, 0x4040, 0x40c0),  // 2 * 3
        tern("fma.rn.bf16", 16, 0x4000, 0x4040, 0x3f80, 0x40e0),
        bin("sub.rn.bf16", 16, 0x3f80, 0x4000, 0xbf80),
        bin("add.rn.bf16x2", 32, 0x3f804000, 0x3f803f80, 0x40004040),
        tern("fma.rn.bf16x2", 32, 0x40004000, 0x40404000, 0x3f80bf80, 0x40e04040),
        un("neg.bf16", 16, 0x3f80, 0xbf80),
        un("abs.bf16", 16, 0xbf80, 0x3f80),
        bin("max.bf16", 16, 0xbf80, 0x3f80, 0x3f80),
        bin("min.bf16x2", 32, 0x3f80c000, 0x40004000, 0x3f80c000),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.float: approximate functions are close and get special values") {
    // .approx results are hardware approximations: checked to a relative 2^-20, with the
    // special values of the PTX ISA tables exact.
    const std::string body = R"(
  .reg .f32 %x, %y;
  .reg .f64 %xd, %yd;
  mov.f32 %x, 0f40400000;           // 3.0
  ex2.approx.f32 %y, %x;            // 8
  st.global.f32 [%out], %y;
  mov.f32 %x, 0f41000000;           // 8.0
  lg2.approx.f32 %y, %x;            // 3
  st.global.f32 [%out+4], %y;
  mov.f32 %x, 0f40800000;           // 4.0
  rsqrt.approx.f32 %y, %x;          // 0.5
  st.global.f32 [%out+8], %y;
  mov.f32 %x, 0f3F000000;           // 0.5
  sin.approx.f32 %y, %x;
  st.global.f32 [%out+12], %y;
  cos.approx.f32 %y, %x;
  st.global.f32 [%out+16], %y;
  tanh.approx.f32 %y, %x;
  st.global.f32 [%out+20], %y;
  rcp.approx.f32 %y, %x;            // 2
  st.global.f32 [%out+24], %y;
  mov.f32 %x, 0f40400000;
  div.approx.f32 %y, %x, %x;        // 1
  st.global.f32 [%out+28], %y;
  div.full.f32 %y, %x, %x;          // 1
  st.global.f32 [%out+32], %y;
  sqrt.approx.f32 %y, %x;           // sqrt 3
  st.global.f32 [%out+36], %y;
  mov.f32 %x, 0fFF800000;           // -inf
  ex2.approx.ftz.f32 %y, %x;        // +0
  st.global.f32 [%out+40], %y;
  mov.f32 %x, 0f00000000;
  lg2.approx.f32 %y, %x;            // -inf
  st.global.f32 [%out+44], %y;
  rsqrt.approx.f32 %y, %x;          // +inf
  st.global.f32 [%out+48], %y;
  mov.f32 %x, 0f7F800000;
  sin.approx.f32 %y, %x;            // NaN
  st.global.f32 [%out+52], %y;
  mov.f32 %x, 0fBF800000;
  lg2.approx.f32 %y, %x;            // NaN
  st.global.f32 [%out+56], %y;
  mov.f64 %xd, 0d4010000000000000;  // 4.0
  rsqrt.approx.f64 %yd, %xd;
  cvt.rn.f32.f64 %y, %yd;
  st.global.f32 [%out+60], %y;
  rcp.approx.ftz.f64 %yd, %xd;
  cvt.rn.f32.f64 %y, %yd;
  st.global.f32 [%out+64], %y;
)";
    const auto r = run_as<float>(ptxt::kernel(body), 17);
    const float expect[] = {8.0f, 3.0f, 0.5f, std::sin(0.5f), std::cos(0.5f), std::tanh(0.5f),
                            2.0f, 1.0f, 1.0f, std::sqrt(3.0f)};
    for (std::size_t i = 0; i < 10; ++i) {
      INFO("approximation ", i);
      CHECK(std::fabs(r[i] - expect[i]) <= std::fabs(expect[i]) * 0x1p-20f);
    }
    CHECK(ptxt::f32(r[10]) == 0u);
    CHECK(ptxt::f32(r[11]) == kNegInf);
    CHECK(ptxt::f32(r[12]) == kInf);
    CHECK(std::isnan(r[13]));
    CHECK(std::isnan(r[14]));
    CHECK(std::fabs(r[15] - 0.5f) <= 0x1p-20f);
    CHECK(std::fabs(r[16] - 0.25f) <= 0x1p-20f);
  }
}
