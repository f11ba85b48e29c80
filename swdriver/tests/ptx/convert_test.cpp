// PTX cvt: float to integer with integer rounding and saturation (NaN gives 0), integer to float
// rounding, float to float narrowing and widening, half/bfloat16/tf32 conversions, and integer
// widening, narrowing and saturation (PTX ISA 9.0 "cvt").
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::Check;
using ptxt::nan;
using ptxt::PtxTest;
using ptxt::un;
using u64 = std::uint64_t;

constexpr u64 s32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
u64 F(float v) { return ptxt::f32(v); }
u64 D(double v) { return ptxt::f64(v); }

// cvt<modifiers>.<dtype>.<stype> from a register of width `sw` into one of width `dw`.
Check cvt(const std::string& insn, int sw, u64 a, int dw, u64 expect) {
  return un(insn, sw, a, expect, dw);
}

}  // namespace

TEST_SUITE("ptx.convert") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: float to integer rounds by .rni .rzi .rmi .rpi") {
    check_all({
        cvt("cvt.rzi.s32.f32", 32, F(2.7f), 32, 2),
        cvt("cvt.rzi.s32.f32", 32, F(-2.7f), 32, s32(-2)),
        cvt("cvt.rni.s32.f32", 32, F(2.5f), 32, 2),
        cvt("cvt.rni.s32.f32", 32, F(3.5f), 32, 4),
        cvt("cvt.rni.s32.f32", 32, F(-2.5f), 32, s32(-2)),
        cvt("cvt.rmi.s32.f32", 32, F(-2.1f), 32, s32(-3)),
        cvt("cvt.rpi.s32.f32", 32, F(2.1f), 32, 3),
        cvt("cvt.rpi.s32.f32", 32, F(-2.9f), 32, s32(-2)),
        cvt("cvt.rzi.s32.f64", 64, D(-0.9), 32, 0),
        cvt("cvt.rni.s64.f64", 64, D(-1e15 - 0.5), 64, static_cast<u64>(-1000000000000000LL)),
        cvt("cvt.rzi.u32.f32", 32, F(4000000000.0f), 32, 4000000000u),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: float to integer saturates and NaN gives 0") {
    check_all({
        cvt("cvt.rzi.s32.f32", 32, F(3e9f), 32, 0x7fffffff),
        cvt("cvt.rzi.s32.f32", 32, F(-3e9f), 32, 0x80000000),
        cvt("cvt.rzi.s32.f32", 32, 0x7fc00000, 32, 0),
        cvt("cvt.rni.s32.f32", 32, 0x7f800000, 32, 0x7fffffff),
        cvt("cvt.rni.s32.f32", 32, 0xff800000, 32, 0x80000000),
        cvt("cvt.rzi.u32.f32", 32, F(-1.0f), 32, 0),
        cvt("cvt.rzi.u32.f32", 32, F(5e9f), 32, 0xffffffff),
        cvt("cvt.rzi.u32.f32", 32, 0xffc00000, 32, 0),
        cvt("cvt.rzi.s64.f64", 64, D(1e19), 64, 0x7fffffffffffffff),
        cvt("cvt.rzi.s64.f64", 64, D(-1e19), 64, 0x8000000000000000),
        cvt("cvt.rzi.u64.f64", 64, D(-5.0), 64, 0),
        cvt("cvt.rzi.u64.f64", 64, 0x7ff8000000000000, 64, 0),
        cvt("cvt.rzi.s64.f32", 32, 0x7fc00000, 64, 0),
        cvt("cvt.rni.s16.f32", 32, F(40000.0f), 16, 0x7fff),
        cvt("cvt.rni.s16.f32", 32, F(-40000.0f), 16, 0x8000),
        cvt("cvt.rni.u16.f32", 32, F(-3.0f), 16, 0),
        cvt("cvt.rni.u8.f32", 32, F(300.0f), 16, 0xff),
        cvt("cvt.rni.s8.f32", 32, F(-300.0f), 32, 0xffffff80),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: integer to float rounds by .rn .rz .rm .rp") {
    check_all({
        cvt("cvt.rn.f32.s32", 32, 16777217, 32, 0x4b800000),  // 2^24+1: tie to even
        cvt("cvt.rp.f32.s32", 32, 16777217, 32, 0x4b800001),
        cvt("cvt.rm.f32.s32", 32, s32(-16777217), 32, 0xcb800001),
        cvt("cvt.rz.f32.s32", 32, s32(-16777217), 32, 0xcb800000),
        cvt("cvt.rn.f32.u32", 32, 0xffffffff, 32, 0x4f800000),
        cvt("cvt.rz.f32.u32", 32, 0xffffffff, 32, 0x4f7fffff),
        cvt("cvt.rn.f32.s32", 32, 0x80000000, 32, 0xcf000000),
        cvt("cvt.rn.f64.s64", 64, (u64{1} << 53) + 1, 64, 0x4340000000000000),
        cvt("cvt.rp.f64.s64", 64, (u64{1} << 53) + 1, 64, 0x4340000000000001),
        cvt("cvt.rn.f64.u64", 64, ~u64{0}, 64, 0x43f0000000000000),
        cvt("cvt.rn.f64.s32", 32, s32(-1), 64, 0xbff0000000000000),
        cvt("cvt.rn.f32.s16", 16, 0x8000, 32, F(-32768.0f)),
        cvt("cvt.rn.f32.u64", 64, ~u64{0}, 32, 0x5f800000),
        cvt("cvt.rz.f32.u64", 64, ~u64{0}, 32, 0x5f7fffff),
        cvt("cvt.rn.f16.s32", 32, 4097, 16, 0x6c00),  // 4097 -> 4096 (f16 ulp is 4 there)
        cvt("cvt.rn.f16.u32", 32, 100000, 16, 0x7c00),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: float to float narrowing widening and rounding") {
    check_all({
        cvt("cvt.rn.f32.f64", 64, 0x3fd5555555555555, 32, 0x3eaaaaab),
        cvt("cvt.rz.f32.f64", 64, 0x3fd5555555555555, 32, 0x3eaaaaaa),
        cvt("cvt.rm.f32.f64", 64, 0xbfd5555555555555, 32, 0xbeaaaaab),
        cvt("cvt.rp.f32.f64", 64, 0xbfd5555555555555, 32, 0xbeaaaaaa),
        cvt("cvt.rn.f32.f64", 64, D(1e300), 32, 0x7f800000),
        cvt("cvt.rz.f32.f64", 64, D(1e300), 32, 0x7f7fffff),
        cvt("cvt.rn.f32.f64", 64, D(1e-50), 32, 0),
        cvt("cvt.rn.f32.f64", 64, D(0x1.8p-149), 32, 2),  // 1.5 subnormal ulps: tie to even
        cvt("cvt.rn.f32.f64", 64, D(0x1p-140), 32, 0x200),
        cvt("cvt.rn.ftz.f32.f64", 64, D(0x1p-140), 32, 0),
        nan(cvt("cvt.rn.f32.f64", 64, 0x7ff8000000000001, 32, 0)),
        cvt("cvt.f64.f32", 32, 0x3eaaaaab, 64, 0x3fd5555560000000),
        cvt("cvt.f64.f32", 32, 1, 64, 0x36a0000000000000),
        cvt("cvt.ftz.f64.f32", 32, 0x80000001, 64, 0x8000000000000000),
        nan(cvt("cvt.f64.f32", 32, 0x7fc00000, 64, 0)),
        cvt("cvt.f64.f32", 32, 0xff800000, 64, 0xfff0000000000000),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: rounding to integral values keeps the type") {
    check_all({
        cvt("cvt.rni.f32.f32", 32, F(2.5f), 32, F(2.0f)),
        cvt("cvt.rni.f32.f32", 32, F(3.5f), 32, F(4.0f)),
        cvt("cvt.rni.f32.f32", 32, F(-0.5f), 32, 0x80000000),
        cvt("cvt.rzi.f32.f32", 32, F(-2.7f), 32, F(-2.0f)),
        cvt("cvt.rmi.f32.f32", 32, F(-0.5f), 32, F(-1.0f)),
        cvt("cvt.rpi.f32.f32", 32, F(-0.5f), 32, 0x80000000),
        cvt("cvt.rpi.f32.f32", 32, F(1.25f), 32, F(2.0f)),
        cvt("cvt.rzi.f32.f32", 32, 0x7f800000, 32, 0x7f800000),
        cvt("cvt.rni.f32.f32", 32, F(16777215.0f), 32, F(16777215.0f)),
        cvt("cvt.rni.f64.f64", 64, D(2.5), 64, D(2.0)),
        cvt("cvt.rmi.f64.f64", 64, D(-1e-300), 64, D(-1.0)),
        cvt("cvt.rzi.ftz.f32.f32", 32, 0x80000001, 32, 0x80000000),
        cvt("cvt.sat.f32.f32", 32, F(1.5f), 32, F(1.0f)),
        cvt("cvt.sat.f32.f32", 32, F(-0.5f), 32, 0),
        cvt("cvt.sat.f32.f32", 32, F(0.25f), 32, F(0.25f)),
        cvt("cvt.sat.f32.f32", 32, 0x7fc00000, 32, 0),
        cvt("cvt.rn.sat.f32.f64", 64, D(2.0), 32, F(1.0f)),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: f16 bf16 and tf32 conversions") {
    check_all({
        cvt("cvt.rn.f16.f32", 32, F(1.0f), 16, 0x3c00),
        cvt("cvt.rn.f16.f32", 32, F(65519.0f), 16, 0x7bff),
        cvt("cvt.rn.f16.f32", 32, F(65520.0f), 16, 0x7c00),
        cvt("cvt.rz.f16.f32", 32, F(1e6f), 16, 0x7bff),
        cvt("cvt.rn.satfinite.f16.f32", 32, F(1e6f), 16, 0x7bff),
        cvt("cvt.rn.satfinite.f16.f32", 32, F(-1e6f), 16, 0xfbff),
        cvt("cvt.rn.relu.f16.f32", 32, F(-1.0f), 16, 0),
        cvt("cvt.rn.relu.f16.f32", 32, F(2.0f), 16, 0x4000),
        cvt("cvt.rn.f16.f32", 32, 0x3f801000, 16, 0x3c00),  // 1 + 2^-11: tie to even
        cvt("cvt.rn.f16.f32", 32, 0x3f803000, 16, 0x3c02),  // 1 + 3*2^-11: tie to even
        cvt("cvt.rz.f16.f32", 32, 0x3f803000, 16, 0x3c01),
        cvt("cvt.rn.f16.f32", 32, F(0x1p-25f), 16, 0),  // half the least subnormal
        cvt("cvt.rn.f16.f32", 32, F(0x1.8p-25f), 16, 1),
        cvt("cvt.rn.f16.f32", 32, F(0x1p-20f), 16, 0x0010),  // subnormal result
        nan(cvt("cvt.rn.f16.f32", 32, 0x7fc00000, 16, 0)),
        cvt("cvt.f32.f16", 16, 0x0001, 32, 0x33800000),
        cvt("cvt.f32.f16", 16, 0x7c00, 32, 0x7f800000),
        cvt("cvt.f32.f16", 16, 0xc000, 32, F(-2.0f)),
        cvt("cvt.f64.f16", 16, 0x3555, 64, D(0x1.554p-2)),
        cvt("cvt.rn.bf16.f32", 32, 0x3f808000, 16, 0x3f80),  // tie to even
        cvt("cvt.rn.bf16.f32", 32, 0x3f818000, 16, 0x3f82),
        cvt("cvt.rz.bf16.f32", 32, 0x3f81ffff, 16, 0x3f81),
        cvt("cvt.rn.bf16.f32", 32, 0x7f7fffff, 16, 0x7f80),  // overflow to +inf
        cvt("cvt.rn.satfinite.bf16.f32", 32, 0x7f7fffff, 16, 0x7f7f),
        cvt("cvt.f32.bf16", 16, 0x3f81, 32, 0x3f810000),
        {"mov.b32 %a32, 0x3f800000; mov.b32 %b32, 0x40000000; cvt.rn.f16x2.f32 %d32, %a32, %b32;",
         32, 0x3c004000, "cvt.rn.f16x2.f32 puts a in the upper half"},
        {"mov.b32 %a32, 0x3f800000; mov.b32 %b32, 0xbf800000; cvt.rn.bf16x2.f32 %d32, %a32, %b32;",
         32, 0x3f80bf80, "cvt.rn.bf16x2.f32 puts a in the upper half"},
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: tf32 rounds to 10 mantissa bits") {
    check_all({
        cvt("cvt.rna.tf32.f32", 32, 0x3f801000, 32, 0x3f802000),  // a tie goes away from 0
        cvt("cvt.rna.tf32.f32", 32, 0x3f800fff, 32, 0x3f800000),
        cvt("cvt.rn.tf32.f32", 32, 0x3f801000, 32, 0x3f800000),  // a tie goes to even
        cvt("cvt.rz.tf32.f32", 32, 0x3f801fff, 32, 0x3f800000),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.convert: integer widening narrowing and saturation") {
    check_all({
        cvt("cvt.s32.s8", 32, 0x00000080, 32, 0xffffff80),
        cvt("cvt.u32.u8", 32, 0x000001ff, 32, 0xff), cvt("cvt.s32.s16", 16, 0x8000, 32, 0xffff8000),
        cvt("cvt.u32.u16", 16, 0xffff, 32, 0xffff), cvt("cvt.u16.u32", 32, 0x12345678, 16, 0x5678),
        cvt("cvt.s64.s32", 32, s32(-1), 64, ~u64{0}),
        cvt("cvt.u64.u32", 32, 0xffffffff, 64, 0xffffffff),
        cvt("cvt.u64.s32", 32, s32(-1), 64, ~u64{0}),  // sign-extended by the source type
        cvt("cvt.u32.u64", 64, 0x100000005, 32, 5), cvt("cvt.sat.u16.s32", 32, s32(-5), 16, 0),
        cvt("cvt.sat.s16.s32", 32, 100000, 16, 0x7fff),
        cvt("cvt.sat.s16.s32", 32, s32(-100000), 16, 0x8000),
        cvt("cvt.sat.u8.s32", 32, 300, 32, 0xff),
        cvt("cvt.sat.s32.s64", 64, u64{1} << 40, 32, 0x7fffffff),
        cvt("cvt.sat.u32.s64", 64, ~u64{0}, 32, 0),
        cvt("cvt.sat.s32.u32", 32, 0x80000000, 32, 0x7fffffff),
        cvt("cvt.sat.u32.s32", 32, s32(-7), 32, 0),
        cvt("cvt.s8.s32", 32, 0x1ff, 32, 0xffffffff),  // truncated to 8 bits, sign-extended
    });
  }
}
