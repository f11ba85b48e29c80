// PTX integer instructions: arithmetic with wrap and saturation, multiply and divide forms,
// carry chains, shifts, bit-field and byte permutes, logic, dot products (PTX ISA 9.0,
// "Integer Arithmetic", "Extended-Precision Integer Arithmetic", "Logic and Shift").
#include <bit>
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::bin;
using ptxt::Check;
using ptxt::PtxTest;
using ptxt::tern;
using ptxt::un;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

// A value given as a signed number, as the bits of a register of 32 or 64 bits.
constexpr u64 s32(std::int32_t v) { return static_cast<u32>(v); }
constexpr u64 s64(std::int64_t v) { return static_cast<u64>(v); }

// prmt without a mode (PTX ISA prmt): four 4-bit selectors; bit 3 replicates the byte's sign.
u32 prmt_ref(u32 a, u32 b, u32 c) {
  const u64 tmp = (u64{b} << 32) | a;
  u32 d = 0;
  for (int i = 0; i < 4; ++i) {
    const u32 sel = (c >> (4 * i)) & 0xf;
    u32 byte = static_cast<u32>(tmp >> (8 * (sel & 7))) & 0xff;
    if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
    d |= byte << (8 * i);
  }
  return d;
}

// lop3 (PTX ISA lop3): bit i of the result is bit (a_i*4 + b_i*2 + c_i) of immLut.
u32 lop3_ref(u32 a, u32 b, u32 c, u32 lut) {
  u32 d = 0;
  for (int i = 0; i < 32; ++i) {
    const u32 index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
    d |= ((lut >> index) & 1) << i;
  }
  return d;
}

// bfe.u32/.s32 (PTX ISA bfe semantics).
u32 bfe_ref(u32 a, u32 b, u32 c, bool is_signed) {
  const u32 pos = b & 0xff, len = c & 0xff;
  u32 sbit = 0;
  if (is_signed && len != 0) sbit = (a >> std::min(pos + len - 1, 31u)) & 1;
  u32 d = 0;
  for (u32 i = 0; i <= 31; ++i) {
    const u32 bit = (i < len && pos + i <= 31) ? (a >> (pos + i)) & 1 : sbit;
    d |= bit << i;
  }
  return d;
}

// bfi.b32 (PTX ISA bfi semantics).
u32 bfi_ref(u32 a, u32 b, u32 c, u32 d) {
  const u32 pos = c & 0xff, len = d & 0xff;
  u32 f = b;
  for (u32 i = 0; i < len && pos + i <= 31; ++i) {
    f = (f & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  }
  return f;
}

// Four-operand instruction with 32-bit registers: insn %d32, %a32, %b32, %c32, %e32.
Check quad(const std::string& insn, u32 a, u32 b, u32 c, u32 e, u64 expect) {
  return {
      "mov.b32 %a32, " + ptxt::hex(a) + "; mov.b32 %b32, " + ptxt::hex(b) + "; mov.b32 %c32, " +
          ptxt::hex(c) + "; mov.b32 %e32, " + ptxt::hex(e) + "; " + insn +
          " %d32, %a32, %b32, %c32, %e32;",
      32, expect,
      insn + " " + ptxt::hex(a) + ", " + ptxt::hex(b) + ", " + ptxt::hex(c) + ", " + ptxt::hex(e)};
}

}  // namespace

TEST_SUITE("ptx.int") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.int: add and sub wrap and .sat clamps signed results") {
    check_all({
        bin("add.s32", 32, 0x7fffffff, 1, 0x80000000),
        bin("add.u32", 32, 0xffffffff, 2, 1),
        bin("add.sat.s32", 32, 0x7fffffff, 1, 0x7fffffff),
        bin("add.sat.s32", 32, 0x80000000, s32(-1), 0x80000000),
        bin("add.sat.s32", 32, s32(-5), 3, s32(-2)),
        bin("add.u16", 16, 0xffff, 2, 1),
        bin("add.s64", 64, ~u64{0}, 1, 0),
        bin("sub.s32", 32, 0x80000000, 1, 0x7fffffff),
        bin("sub.sat.s32", 32, 0x80000000, 1, 0x80000000),
        bin("sub.sat.s32", 32, 0x7fffffff, s32(-1), 0x7fffffff),
        bin("sub.u64", 64, 0, 1, ~u64{0}),
        bin("sub.s16", 16, 0x8000, 1, 0x7fff),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: mul lo hi wide and mul24 keep the right bits") {
    check_all({
        bin("mul.lo.s32", 32, 0x10000, 0x10000, 0),
        bin("mul.lo.u32", 32, 0xffffffff, 0xffffffff, 1),
        bin("mul.hi.u32", 32, 0xffffffff, 0xffffffff, 0xfffffffe),
        bin("mul.hi.s32", 32, s32(-1), s32(-1), 0),
        bin("mul.hi.s32", 32, 0x80000000, 2, 0xffffffff),
        bin("mul.wide.u32", 32, 0xffffffff, 0xffffffff, 0xfffffffe00000001, 64),
        bin("mul.wide.s32", 32, s32(-1), 2, s64(-2), 64),
        bin("mul.wide.s16", 16, 0x8000, 0x8000, 0x40000000, 32),
        bin("mul.wide.u16", 16, 0xffff, 0xffff, 0xfffe0001, 32),
        bin("mul.lo.u64", 64, 0x100000001, 0x100000001, 0x200000001),
        bin("mul.hi.u64", 64, ~u64{0}, 2, 1),
        bin("mul.hi.s64", 64, s64(-1), s64(-1), 0),
        bin("mul.hi.s64", 64, s64(INT64_MIN), 2, ~u64{0}),
        bin("mul24.lo.u32", 32, 0x01000002, 3, 6),
        bin("mul24.lo.s32", 32, 0x00ffffff, 2, s32(-2)),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: mad lo hi wide and sad") {
    check_all({
        tern("mad.lo.s32", 32, 3, 4, 5, 17),
        tern("mad.lo.s32", 32, s32(-3), 4, 5, s32(-7)),
        tern("mad.hi.u32", 32, 0xffffffff, 0xffffffff, 1, 0xffffffff),
        tern("mad.hi.sat.s32", 32, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff),
        {"mov.b32 %a32, 0xffffffff; mov.b64 %c64, 1; mad.wide.u32 %d64, %a32, %a32, %c64;", 64,
         0xfffffffe00000002, "mad.wide.u32"},
        {"mov.b32 %a32, 0xfffffffe; mov.b32 %b32, 3; mov.b64 %c64, 10; "
         "mad.wide.s32 %d64, %a32, %b32, %c64;",
         64, 4, "mad.wide.s32 -2*3+10"},
        tern("mad.lo.u64", 64, 0x100000000, 0x100000000, 7, 7),
        tern("sad.u32", 32, 3, 10, 100, 107),
        tern("sad.s32", 32, s32(-5), 5, 0, 10),
        tern("sad.u32", 32, 0, 0xffffffff, 1, 0),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: div and rem truncate toward zero") {
    check_all({
        bin("div.s32", 32, s32(-7), 2, s32(-3)),
        bin("div.s32", 32, 7, s32(-2), s32(-3)),
        bin("div.u32", 32, 7, 2, 3),
        bin("div.u32", 32, 0xffffffff, 0x10, 0x0fffffff),
        bin("div.s64", 64, s64(-9), 4, s64(-2)),
        bin("div.u64", 64, ~u64{0}, 3, 0x5555555555555555),
        bin("div.s16", 16, 0x8001, 2, 0xc001),
        bin("rem.s32", 32, s32(-7), 2, s32(-1)),
        bin("rem.s32", 32, 7, s32(-2), 1),
        bin("rem.u32", 32, 7, 3, 1),
        bin("rem.s64", 64, s64(-10), 3, s64(-1)),
        bin("rem.u64", 64, ~u64{0}, 10, 5),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: division by zero does not fault") {
    // PTX ISA div/rem: division by zero yields an unspecified, machine-specific value (GPUs
    // give all ones). Only that the kernel completes is required; the value is a warning.
    const std::string body = R"(
  .reg .b32 %z, %q, %seven, %mseven;
  .reg .b64 %q64, %seven64;
  ld.global.u32 %z, [%in];
  mov.u32 %seven, 7;
  mov.u32 %mseven, -7;
  mov.u64 %seven64, 7;
  div.u32 %q, %seven, %z;
  st.global.u32 [%out], %q;
  div.s32 %q, %mseven, %z;
  st.global.u32 [%out+4], %q;
  rem.u32 %q, %seven, %z;
  st.global.u32 [%out+8], %q;
  cvt.u64.u32 %q64, %z;
  div.u64 %q64, %seven64, %q64;
  st.global.u64 [%out+16], %q64;
  st.global.u32 [%out+24], 42;
)";
    const auto r = run_as<u32, u32>(ptxt::kernel(body), 7, {0u});
    CHECK(r[6] == 42u);
    WARN_MESSAGE(r[0] == 0xffffffffu, "div.u32 x/0 on a GPU is all ones, got ", r[0]);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: abs neg min max with edge values") {
    check_all({
        un("abs.s32", 32, s32(-5), 5),
        un("abs.s32", 32, 0x80000000, 0x80000000),
        un("abs.s16", 16, 0x8000, 0x8000),
        un("abs.s64", 64, s64(-1), 1),
        un("neg.s32", 32, 1, 0xffffffff),
        un("neg.s32", 32, 0x80000000, 0x80000000),
        un("neg.s64", 64, 5, s64(-5)),
        bin("min.s32", 32, s32(-1), 1, s32(-1)),
        bin("min.u32", 32, 0xffffffff, 1, 1),
        bin("max.s32", 32, s32(-1), 1, 1),
        bin("max.u32", 32, 0xffffffff, 1, 0xffffffff),
        bin("max.s64", 64, s64(INT64_MIN), s64(-1), s64(-1)),
        bin("min.u16", 16, 0x8000, 0x7fff, 0x7fff),
        bin("min.s16", 16, 0x8000, 0x7fff, 0x8000),
        bin("min.relu.s32", 32, s32(-5), s32(-3), 0),
        bin("max.relu.s32", 32, s32(-5), 7, 7),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: min and max on packed half words") {
    check_all({
        bin("min.s16x2", 32, 0x80007fff, 0x00010001, 0x80000001),
        bin("max.u16x2", 32, 0x80000001, 0x00018000, 0x80008000),
        bin("max.relu.s16x2", 32, 0xfffb0007, 0xfffd0002, 0x00000007),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: popc clz brev bfind") {
    check_all({
        un("popc.b32", 32, 0xffffffff, 32),
        un("popc.b32", 32, 0, 0),
        un("popc.b64", 64, 0x8000000000000001, 2, 32),
        un("clz.b32", 32, 0, 32),
        un("clz.b32", 32, 1, 31),
        un("clz.b32", 32, 0x80000000, 0),
        un("clz.b64", 64, 1, 63, 32),
        un("clz.b64", 64, 0, 64, 32),
        un("brev.b32", 32, 1, 0x80000000),
        un("brev.b32", 32, 0x12345678, 0x1e6a2c48),
        un("brev.b64", 64, 1, 0x8000000000000000),
        un("bfind.u32", 32, 0, 0xffffffff),
        un("bfind.u32", 32, 0x00010000, 16),
        un("bfind.shiftamt.u32", 32, 0x00010000, 15),
        un("bfind.shiftamt.u32", 32, 0, 0xffffffff),
        un("bfind.s32", 32, 0xffffffff, 0xffffffff),
        un("bfind.s32", 32, 0xfffffffe, 0),
        un("bfind.s32", 32, 0x80000000, 30),
        un("bfind.s32", 32, 5, 2),
        un("bfind.u64", 64, u64{1} << 40, 40, 32),
        un("bfind.shiftamt.s64", 64, 1, 63, 32),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: bfe extracts and sign-extends fields") {
    std::vector<Check> checks{
        tern("bfe.u32", 32, 0xf0f0f0f0, 4, 8, 0x0f),
        tern("bfe.s32", 32, 0x00000f80, 4, 8, 0xfffffff8),
        tern("bfe.s32", 32, 0x80000000, 28, 8, 0xfffffff8),
        tern("bfe.u32", 32, 0xffffffff, 40, 4, 0),
        tern("bfe.s32", 32, 0xffffffff, 40, 4, 0xffffffff),
        tern("bfe.s32", 32, 0xffffffff, 3, 0, 0),
        tern("bfe.u32", 32, 0x12345678, 0, 32, 0x12345678),
        tern("bfe.u32", 32, 0xf0f0f0f0, 0x104, 0x108, 0x0f),  // only 8 bits of b and c count
        {"mov.b64 %a64, 0xf000000000000000; mov.b32 %b32, 60; mov.b32 %c32, 8; "
         "bfe.s64 %d64, %a64, %b32, %c32;",
         64, ~u64{0}, "bfe.s64 past the msb"},
        {"mov.b64 %a64, 0x0000ab0000000000; mov.b32 %b32, 40; mov.b32 %c32, 8; "
         "bfe.u64 %d64, %a64, %b32, %c32;",
         64, 0xab, "bfe.u64"},
    };
    for (const u32 a : {0x8badf00du, 0x7fff0001u}) {
      for (const u32 pos : {0u, 7u, 30u}) {
        for (const u32 len : {1u, 9u, 31u}) {
          checks.push_back(tern("bfe.s32", 32, a, pos, len, bfe_ref(a, pos, len, true)));
          checks.push_back(tern("bfe.u32", 32, a, pos, len, bfe_ref(a, pos, len, false)));
        }
      }
    }
    check_all(checks);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: bfi inserts fields and ignores what is out of range") {
    std::vector<Check> checks{
        quad("bfi.b32", 0xa, 0xffff0000, 4, 4, 0xffff00a0),
        quad("bfi.b32", 0xff, 0x12345678, 28, 8, 0xf2345678),
        quad("bfi.b32", 0xff, 0x12345678, 8, 0, 0x12345678),
        quad("bfi.b32", 0xff, 0x12345678, 32, 8, 0x12345678),
        quad("bfi.b32", 0xff, 0x12345678, 0x100, 0x104, 0x1234567f),
        {"mov.b64 %a64, 0xff; mov.b64 %b64, 0; mov.b32 %c32, 60; mov.b32 %e32, 8; "
         "bfi.b64 %d64, %a64, %b64, %c32, %e32;",
         64, 0xf000000000000000, "bfi.b64 at 60"},
    };
    for (const u32 pos : {0u, 5u, 31u}) {
      for (const u32 len : {3u, 16u, 32u}) {
        checks.push_back(quad("bfi.b32", 0x5a5a5a5a, 0x0f0f0f0f, pos, len,
                              bfi_ref(0x5a5a5a5a, 0x0f0f0f0f, pos, len)));
      }
    }
    check_all(checks);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: prmt generic selectors and every mode") {
    const u32 a = 0x44332211, b = 0x88776655;
    std::vector<Check> checks{
        tern("prmt.b32", 32, 0x03020100, 0x07060504, 0x3210, 0x03020100),
        tern("prmt.b32", 32, 0x03020100, 0x07060504, 0x7654, 0x07060504),
        tern("prmt.b32", 32, 0x03020100, 0x07060504, 0x0123, 0x00010203),
        tern("prmt.b32", 32, 0x00000080, 0, 0x8888, 0xffffffff),
        tern("prmt.b32", 32, 0x00007f80, 0, 0x9180, 0x007fff80),
        tern("prmt.b32", 32, 0x00000080, 0, 0xffff3210, 0x00000080),  // high bits of c ignored
        tern("prmt.b32.f4e", 32, a, b, 1, 0x55443322),
        tern("prmt.b32.f4e", 32, a, b, 3, 0x77665544),
        tern("prmt.b32.b4e", 32, a, b, 0, 0x66778811),
        tern("prmt.b32.b4e", 32, a, b, 3, 0x11223344),
        tern("prmt.b32.rc8", 32, a, b, 2, 0x33333333),
        tern("prmt.b32.ecl", 32, a, b, 1, 0x44332222),
        tern("prmt.b32.ecr", 32, a, b, 2, 0x33332211),
        tern("prmt.b32.rc16", 32, a, b, 1, 0x44334433),
        tern("prmt.b32.f4e", 32, a, b, 0x4, 0x44332211),  // only c[1:0] in modes
    };
    for (const u32 c : {0x1111u, 0x7531u, 0xc0d9u, 0xfedcu}) {
      checks.push_back(
          tern("prmt.b32", 32, 0x80ff7f01, 0x01fe8070, c, prmt_ref(0x80ff7f01, 0x01fe8070, c)));
    }
    check_all(checks);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: shl and shr clamp shift amounts at the width") {
    check_all({
        bin("shl.b32", 32, 1, 31, 0x80000000),
        bin("shl.b32", 32, 1, 32, 0),
        bin("shl.b32", 32, 1, 33, 0),
        bin("shr.u32", 32, 0x80000000, 31, 1),
        bin("shr.u32", 32, 0x80000000, 32, 0),
        bin("shr.b32", 32, 0x80000000, 0xffffffff, 0),
        bin("shr.s32", 32, 0x80000000, 31, 0xffffffff),
        bin("shr.s32", 32, 0x80000000, 100, 0xffffffff),
        bin("shr.s32", 32, 0x40000000, 100, 0),
        bin("shr.s32", 32, 0xfffffff0, 2, 0xfffffffc),
        {"mov.b64 %a64, 1; mov.b32 %b32, 63; shl.b64 %d64, %a64, %b32;", 64, 0x8000000000000000,
         "shl.b64 by 63"},
        {"mov.b64 %a64, 1; mov.b32 %b32, 64; shl.b64 %d64, %a64, %b32;", 64, 0, "shl.b64 by 64"},
        {"mov.b64 %a64, 0x8000000000000000; mov.b32 %b32, 0xffffffff; shr.s64 %d64, %a64, %b32;",
         64, ~u64{0}, "shr.s64 by 2^32-1"},
        {"mov.b64 %a64, 0x8000000000000000; mov.b32 %b32, 65; shr.u64 %d64, %a64, %b32;", 64, 0,
         "shr.u64 by 65"},
        {"mov.b16 %a16, 1; mov.b32 %b32, 16; shl.b16 %d16, %a16, %b32;", 16, 0, "shl.b16 by 16"},
        {"mov.b16 %a16, 0x8000; mov.b32 %b32, 20; shr.s16 %d16, %a16, %b32;", 16, 0xffff,
         "shr.s16 by 20"},
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: shf funnel shifts clamp or wrap") {
    check_all({
        tern("shf.l.wrap.b32", 32, 0x80000000, 1, 4, 0x18),
        tern("shf.l.clamp.b32", 32, 0x80000000, 1, 40, 0x80000000),
        tern("shf.l.wrap.b32", 32, 0x80000000, 1, 40, 0x180),
        tern("shf.l.clamp.b32", 32, 0x80000000, 1, 0, 1),
        tern("shf.r.wrap.b32", 32, 0x10, 1, 4, 0x10000001),
        tern("shf.r.clamp.b32", 32, 0x10, 1, 33, 1),
        tern("shf.r.wrap.b32", 32, 0x10, 1, 33, 0x80000008),
        tern("shf.r.clamp.b32", 32, 0x10, 1, 0, 0x10),
        tern("shf.r.clamp.b32", 32, 0x12345678, 0x9abcdef0, 16, 0xdef01234),
        tern("shf.l.clamp.b32", 32, 0x12345678, 0x9abcdef0, 16, 0xdef01234),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: logic lop3 cnot bmsk szext") {
    std::vector<Check> checks{
        bin("and.b32", 32, 0xff00ff00, 0x0ff00ff0, 0x0f000f00),
        bin("or.b32", 32, 0xff00ff00, 0x0ff00ff0, 0xfff0fff0),
        bin("xor.b64", 64, 0xff00ff00ff00ff00, 0x0ff00ff00ff00ff0, 0xf0f0f0f0f0f0f0f0),
        un("not.b16", 16, 0x00ff, 0xff00),
        un("cnot.b32", 32, 0, 1),
        un("cnot.b32", 32, 5, 0),
        bin("bmsk.clamp.b32", 32, 4, 8, 0xff0),
        bin("bmsk.clamp.b32", 32, 28, 8, 0xf0000000),
        bin("bmsk.clamp.b32", 32, 32, 8, 0),
        bin("bmsk.wrap.b32", 32, 32, 8, 0xff),
        bin("bmsk.clamp.b32", 32, 0, 32, 0xffffffff),
        bin("bmsk.wrap.b32", 32, 0, 32, 0),
        bin("bmsk.wrap.b32", 32, 1, 2, 6),
        bin("szext.clamp.s32", 32, 0x80, 8, 0xffffff80),
        bin("szext.clamp.u32", 32, 0xffff, 8, 0xff),
        bin("szext.wrap.u32", 32, 0xffffffff, 0, 0),
        bin("szext.clamp.s32", 32, 0x80000000, 40, 0x80000000),
        bin("szext.wrap.s32", 32, 0x80, 40, 0xffffff80),
        {"mov.b32 %a32, 0xf0; mov.b32 %b32, 0xcc; mov.b32 %c32, 0; setp.ne.u32 %q, %c32, 0; "
         "lop3.or.b32 %d32|%p, %a32, %b32, %c32, 0x80, %q;",
         1, 0, "lop3.or: d == 0 or false"},
        {"mov.b32 %a32, 0xf0; mov.b32 %b32, 0xcc; mov.b32 %c32, 0xaa; setp.eq.u32 %q, %c32, 0xaa; "
         "lop3.and.b32 %d32|%p, %a32, %b32, %c32, 0x80, %q;",
         1, 1, "lop3.and: d != 0 and true"},
        {"mov.b32 %a32, 0xf0; mov.b32 %b32, 0xcc; mov.b32 %c32, 0; setp.eq.u32 %q, %c32, 0; "
         "lop3.or.b32 %d32|%p, %a32, %b32, %c32, 0x80, %q;",
         1, 1, "lop3.or: d == 0 or true"},
        {"mov.b32 %a32, 0xf0; mov.b32 %b32, 0xcc; mov.b32 %c32, 0xaa; setp.eq.u32 %q, %c32, 0xaa; "
         "lop3.and.b32 %d32|%p, %a32, %b32, %c32, 0x80, %q; mov.b32 %d32, %d32;",
         32, 0x80, "lop3.and: d is still written"},
    };
    for (const u32 lut : {0x80u, 0xfeu, 0x96u, 0xe8u, 0x1au, 0x00u, 0xffu, 0x3cu}) {
      checks.push_back(
          {"mov.b32 %a32, 0x12345678; mov.b32 %b32, 0xf0f0f0f0; "
           "mov.b32 %c32, 0xcccc3333; lop3.b32 %d32, %a32, %b32, %c32, " +
               ptxt::hex(lut) + ";",
           32, lop3_ref(0x12345678, 0xf0f0f0f0, 0xcccc3333, lut), "lop3 " + ptxt::hex(lut)});
    }
    check_all(checks);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: dp4a and dp2a extend bytes by their types") {
    check_all({
        tern("dp4a.u32.u32", 32, 0x01020304, 0x01010101, 10, 20),
        tern("dp4a.s32.s32", 32, 0xff02ff04, 0x01010101, 0, 4),
        tern("dp4a.s32.u32", 32, 0xffffffff, 0xffffffff, 0, s32(-1020)),
        tern("dp4a.u32.s32", 32, 0xffffffff, 0xffffffff, 0, s32(-1020)),
        tern("dp4a.u32.u32", 32, 0xffffffff, 0xffffffff, 0, 4 * 255 * 255),
        tern("dp4a.s32.s32", 32, 0x80808080, 0x80808080, 1, 4 * 128 * 128 + 1),
        tern("dp2a.lo.s32.s32", 32, 0x0002ffff, 0x04030201, 0, 3),
        tern("dp2a.hi.s32.s32", 32, 0x0002ffff, 0x04030201, 0, 5),
        tern("dp2a.lo.u32.u32", 32, 0x0002ffff, 0x04030201, 1, 65535 + 4 + 1),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.int: carry chains through add.cc addc sub.cc subc mad.cc") {
    check_all({
        {"mov.b32 %a32, 0xffffffff; add.cc.u32 %b32, %a32, 1; mov.b32 %e32, 0; addc.u32 %d32, "
         "%e32, %e32;",
         32, 1, "add.cc carry out"},
        {"mov.b32 %a32, 1; add.cc.u32 %b32, %a32, 1; mov.b32 %e32, 0; addc.u32 %d32, %e32, %e32;",
         32, 0, "add.cc no carry"},
        {"mov.b32 %a32, 0xffffffff; add.cc.u32 %b32, %a32, 1; addc.cc.u32 %c32, %a32, 0; "
         "mov.b32 %e32, 0; addc.u32 %d32, %e32, %e32;",
         32, 1, "carry through three words"},
        {"mov.b32 %a32, 0xffffffff; add.cc.u32 %d32, %a32, 1;", 32, 0, "add.cc low word"},
        {"mov.b32 %a32, 0; sub.cc.u32 %b32, %a32, 1; mov.b32 %c32, 1; subc.u32 %d32, %c32, 0;", 32,
         0, "sub.cc borrow"},
        {"mov.b32 %a32, 5; sub.cc.u32 %b32, %a32, 1; mov.b32 %c32, 1; subc.u32 %d32, %c32, 0;", 32,
         1, "sub.cc no borrow"},
        {"mov.b32 %a32, 0; sub.cc.u32 %b32, %a32, 1; subc.cc.u32 %c32, %a32, 0; "
         "mov.b32 %e32, 7; subc.u32 %d32, %e32, 0;",
         32, 6, "borrow through three words"},
        {"mov.b32 %a32, 0xffffffff; mad.lo.cc.u32 %e32, %a32, %a32, %a32; "
         "madc.hi.u32 %d32, %a32, %a32, 0;",
         32, 0xffffffff, "mad.lo.cc then madc.hi"},
        {"mov.b32 %a32, 0xffffffff; mad.lo.cc.u32 %d32, %a32, %a32, %a32;", 32, 0,
         "mad.lo.cc low word"},
        {"mov.b64 %a64, 0xffffffffffffffff; add.cc.u64 %b64, %a64, 1; mov.b64 %e64, 0; addc.u64 "
         "%d64, %e64, %e64;",
         64, 1, "add.cc.u64 carry"},
    });
  }
}
