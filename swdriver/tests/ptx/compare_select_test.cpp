// PTX comparisons and selection: setp with ordered and unordered float comparisons and Boolean
// combination, set, selp, slct, and predicate logic (PTX ISA 9.0 "Comparison and Selection
// Instructions", "Half Precision Comparison Instructions").
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::bin;
using ptxt::Check;
using ptxt::PtxTest;
using ptxt::tern;
using u64 = std::uint64_t;

constexpr u64 s32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
constexpr u64 kNaN = 0x7fc00000, kOne = 0x3f800000, kTwo = 0x40000000;

Check setp(const std::string& op, int w, u64 a, u64 b, bool expect) {
  return bin("setp." + op, w, a, b, expect ? 1 : 0, 1);
}

}  // namespace

TEST_SUITE("ptx.compare") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.compare: setp on integers is signed or unsigned by type") {
    check_all({
        setp("lt.s32", 32, s32(-1), 1, true),
        setp("lt.u32", 32, s32(-1), 1, false),
        setp("lo.u32", 32, s32(-1), 1, false),
        setp("hi.u32", 32, s32(-1), 1, true),
        setp("ls.u32", 32, 5, 5, true),
        setp("hs.u32", 32, 4, 5, false),
        setp("ge.s64", 64, 0x8000000000000000, 0, false),
        setp("gt.u64", 64, 0x8000000000000000, 0, true),
        setp("eq.b16", 16, 0xffff, 0xffff, true),
        setp("ne.b32", 32, 1, 2, true),
        setp("le.s16", 16, 0x8000, 0x7fff, true),
        setp("gt.s32", 32, 0x7fffffff, 0x80000000, true),
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.compare: setp on floats is false for NaN unless unordered") {
    std::vector<Check> checks;
    struct Op {
      const char* name;
      bool with_nan, one_two, equal;
    };
    // with a NaN operand, for (1, 2), and for (2, 2)
    const Op ops[] = {
        {"eq", false, false, true}, {"ne", false, true, false},  {"lt", false, true, false},
        {"le", false, true, true},  {"gt", false, false, false}, {"ge", false, false, true},
        {"equ", true, false, true}, {"neu", true, true, false},  {"ltu", true, true, false},
        {"leu", true, true, true},  {"gtu", true, false, false}, {"geu", true, false, true},
        {"num", false, true, true}, {"nan", true, false, false}};
    for (const Op& op : ops) {
      checks.push_back(setp(std::string(op.name) + ".f32", 32, kNaN, kOne, op.with_nan));
      checks.push_back(setp(std::string(op.name) + ".f32", 32, kOne, kTwo, op.one_two));
      checks.push_back(setp(std::string(op.name) + ".f32", 32, kTwo, kTwo, op.equal));
      checks.push_back(setp(std::string(op.name) + ".f64", 64, 0x3ff0000000000000,
                            0x7ff8000000000000, op.with_nan));
    }
    checks.push_back(setp("eq.f32", 32, 0, 0x80000000, true));  // +0 == -0
    checks.push_back(setp("eq.f32", 32, 1, 0, false));          // a subnormal is not zero
    checks.push_back(setp("eq.ftz.f32", 32, 1, 0, true));       // unless flushed
    checks.push_back(setp("lt.f32", 32, 0xff800000, 0xff7fffff, true));
    checks.push_back(setp("gt.f16", 16, 0x3c00, 0xbc00, true));
    checks.push_back(setp("nan.f16", 16, 0x7e00, 0x3c00, true));
    checks.push_back(setp("ltu.bf16", 16, 0x7fc0, 0x3f80, true));
    check_all(checks);
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.compare: setp combines with a predicate and writes both results") {
    auto combined = [](const std::string& insn, std::uint32_t a, std::uint32_t b, bool c,
                       bool second, bool expect) {
      return Check{"mov.b32 %a32, " + ptxt::hex(a) + "; mov.b32 %b32, " + ptxt::hex(b) +
                       "; setp.ne.u32 %r, %a32, %a32; " + (c ? "not.pred %r, %r; " : "") + insn +
                       (second ? " %q|%p" : " %p|%q") + ", %a32, %b32, %r;",
                   1, expect ? 1u : 0u,
                   insn + " " + std::to_string(a) + " " + std::to_string(b) +
                       " c=" + std::to_string(c) + (second ? " (second result)" : "")};
    };
    check_all({
        combined("setp.lt.and.s32", 1, 2, true, false, true),
        combined("setp.lt.and.s32", 1, 2, true, true, false),
        combined("setp.lt.and.s32", 3, 2, true, true, true),
        combined("setp.lt.and.s32", 1, 2, false, false, false),
        combined("setp.lt.or.s32", 3, 2, true, false, true),
        combined("setp.lt.or.s32", 3, 2, false, false, false),
        combined("setp.lt.xor.s32", 1, 2, true, false, false),
        combined("setp.lt.xor.s32", 1, 2, true, true, true),
        {"mov.b32 %a32, 1; mov.b32 %b32, 2; setp.eq.u32 %r, %a32, %a32; "
         "setp.lt.and.s32 %p, %a32, %b32, !%r;",
         1, 0, "setp with a negated predicate"},
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.compare: set writes all ones or 1.0") {
    check_all({
        bin("set.lt.u32.s32", 32, s32(-1), 1, 0xffffffff),
        bin("set.lt.u32.u32", 32, s32(-1), 1, 0),
        bin("set.eq.f32.s32", 32, 3, 3, kOne),
        bin("set.ne.f32.s32", 32, 3, 3, 0),
        bin("set.gtu.u32.f32", 32, kNaN, kOne, 0xffffffff),
        bin("set.gt.u32.f32", 32, kNaN, kOne, 0),
        bin("set.ne.s32.f32", 32, kNaN, kOne, 0),
        bin("set.num.s32.f32", 32, kOne, kTwo, 0xffffffff),
        bin("set.ge.u32.f64", 64, 0x4000000000000000, 0x3ff0000000000000, 0xffffffff, 32),
        {"mov.b32 %a32, 1; mov.b32 %b32, 2; setp.eq.u32 %r, %a32, %a32; "
         "set.lt.and.u32.s32 %d32, %a32, %b32, %r;",
         32, 0xffffffff, "set.lt.and true"},
        {"mov.b32 %a32, 1; mov.b32 %b32, 2; setp.eq.u32 %r, %a32, %a32; "
         "set.lt.xor.u32.s32 %d32, %a32, %b32, %r;",
         32, 0, "set.lt.xor"},
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.compare: selp and slct choose by predicate and sign") {
    auto selp = [](const std::string& type, int w, u64 a, u64 b, bool p, u64 expect) {
      const std::string ws = std::to_string(w);
      return Check{"mov.b" + ws + " %a" + ws + ", " + ptxt::hex(a) + "; mov.b" + ws + " %b" + ws +
                       ", " + ptxt::hex(b) + "; mov.b32 %e32, 0; setp.eq.u32 %p, %e32, " +
                       (p ? "0" : "1") + "; selp." + type + " %d" + ws + ", %a" + ws + ", %b" + ws +
                       ", %p;",
                   w, expect, "selp." + type + (p ? " true" : " false")};
    };
    check_all({
        selp("b32", 32, 11, 22, true, 11),
        selp("b32", 32, 11, 22, false, 22),
        selp("f64", 64, 0x3ff0000000000000, 0x4000000000000000, false, 0x4000000000000000),
        selp("u16", 16, 0x1234, 0x5678, true, 0x1234),
        tern("slct.u32.s32", 32, 11, 22, 0, 11),
        tern("slct.u32.s32", 32, 11, 22, s32(-1), 22),
        tern("slct.s32.s32", 32, 11, 22, 0x7fffffff, 11),
        tern("slct.f32.f32", 32, 11, 22, 0x80000000, 11),      // -0.0 >= 0
        tern("slct.f32.f32", 32, 11, 22, 0x7fc00000, 22),      // NaN selects b
        tern("slct.f32.f32", 32, 11, 22, 0x80000001, 22),      // a negative subnormal
        tern("slct.ftz.f32.f32", 32, 11, 22, 0x80000001, 11),  // flushed to -0.0
        {"mov.b64 %a64, 1; mov.b64 %b64, 2; mov.b32 %c32, -5; slct.b64.s32 %d64, %a64, %b64, %c32;",
         64, 2, "slct.b64.s32"},
    });
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.compare: predicate logic and guarded instructions") {
    check_all({
        {"mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 0; mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 1; "
         "and.pred %p, %p, %q;",
         1, 0, "and.pred"},
        {"mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 0; mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 1; "
         "or.pred %p, %p, %q;",
         1, 1, "or.pred"},
        {"mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 0; mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 0; "
         "xor.pred %p, %p, %q;",
         1, 0, "xor.pred"},
        {"mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 0; not.pred %p, %q;", 1, 0, "not.pred"},
        {"mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 0; mov.pred %p, %q;", 1, 1, "mov.pred"},
        {"mov.b32 %e32, 0; setp.eq.u32 %q, %e32, 1; mov.pred %p, 1; @%q mov.pred %p, 0;", 1, 1,
         "mov.pred immediate"},
        {"mov.b32 %d32, 1; mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 0; @%p mov.b32 %d32, 2;", 32, 2,
         "@p runs"},
        {"mov.b32 %d32, 1; mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 0; @!%p mov.b32 %d32, 2;", 32, 1,
         "@!p skips"},
        {"mov.b32 %d32, 1; mov.b32 %e32, 0; setp.eq.u32 %p, %e32, 1; @!%p add.u32 %d32, %d32, 5;",
         32, 6, "@!p runs"},
    });
  }
}
