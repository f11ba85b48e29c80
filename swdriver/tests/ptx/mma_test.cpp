// mma.sync.aligned in every shape and type the interpreter runs: each lane's A, B and C
// registers are packed on the host by the PTX ISA 9.0 tables "Matrix Fragments for
// mma.m8n8k4 with .f16 floating point type" ... "Matrix Fragments for mma.m16n8k32"
// (groupID g = lane >> 2, threadID_in_group t = lane % 4), and D is unpacked by the same
// tables and compared with a host GEMM. The values are exact in every type involved, so the
// comparison is exact; the precision rules of the ISA's "Precision and rounding" get their own
// cases.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "matrix_support.hpp"

namespace {

using mtx::At;
using mtx::E;
using mtx::Frag;
using mtx::Matrix;
using ptxt::PtxTest;

struct MmaCase {
  std::string insn;  // without operands
  unsigned m, n, k;
  unsigned groups;  // 4 for m8n8k4 .f16 (one product per quad-pair), else 1
  Frag a, b, c, d;
};

// The ISA's layouts.
At c_m16n8(unsigned lane, unsigned i) {
  return {0, (lane >> 2) + (i >= 2 ? 8u : 0u), 2 * (lane & 3) + (i & 1)};
}
At c_m8n8(unsigned lane, unsigned i) { return {0, lane >> 2, 2 * (lane & 3) + i}; }

Frag acc16x8(E e) { return {e, 4, c_m16n8}; }

// Cases by shape and type.
std::vector<MmaCase> cases() {
  std::vector<MmaCase> v;
  const auto g = [](unsigned lane) { return lane >> 2; };
  const auto t = [](unsigned lane) { return lane & 3; };
  // .f16 and .bf16, m16n8k16: a_i row g (+8 for i in 2,3,6,7), col 2t + (i & 1) (+8 for i >= 4)
  const Frag a16816 = {
      E::f16, 8, [=](unsigned l, unsigned i) {
        return At{0, g(l) + (((i >> 1) & 1) ? 8u : 0u), 2 * t(l) + (i & 1) + (i >= 4 ? 8u : 0u)};
      }};
  const Frag b16816 = {E::f16, 4, [=](unsigned l, unsigned i) {
                         return At{0, 2 * t(l) + (i & 1) + (i >= 2 ? 8u : 0u), g(l)};
                       }};
  const Frag a1688 = {E::f16, 4, [=](unsigned l, unsigned i) {
                        return At{0, g(l) + (i >= 2 ? 8u : 0u), 2 * t(l) + (i & 1)};
                      }};
  const Frag b1688 = {E::f16, 2, [=](unsigned l, unsigned i) { return At{0, 2 * t(l) + i, g(l)}; }};
  for (E acc : {E::f16, E::f32}) {
    const std::string s = mtx::suffix(acc);
    v.push_back({"mma.sync.aligned.m16n8k16.row.col" + s + ".f16.f16" + s, 16, 8, 16, 1, a16816,
                 b16816, acc16x8(acc), acc16x8(acc)});
    v.push_back({"mma.sync.aligned.m16n8k8.row.col" + s + ".f16.f16" + s, 16, 8, 8, 1, a1688, b1688,
                 acc16x8(acc), acc16x8(acc)});
  }
  Frag bf_a16816 = a16816, bf_b16816 = b16816, bf_a1688 = a1688, bf_b1688 = b1688;
  bf_a16816.type = bf_b16816.type = bf_a1688.type = bf_b1688.type = E::bf16;
  v.push_back({"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, 1, bf_a16816,
               bf_b16816, acc16x8(E::f32), acc16x8(E::f32)});
  v.push_back({"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, 1, bf_a1688,
               bf_b1688, acc16x8(E::f32), acc16x8(E::f32)});
  // .tf32 and .f64, m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b_i (t + 4i, g)
  for (E e : {E::tf32, E::f64}) {
    const Frag a = {e, 4, [=](unsigned l, unsigned i) {
                      return At{0, g(l) + ((i & 1) ? 8u : 0u), t(l) + (i >= 2 ? 4u : 0u)};
                    }};
    const Frag b = {e, 2, [=](unsigned l, unsigned i) { return At{0, t(l) + 4 * i, g(l)}; }};
    const E acc = e == E::f64 ? E::f64 : E::f32;
    const std::string s = mtx::suffix(e), sa = mtx::suffix(acc);
    v.push_back({"mma.sync.aligned.m16n8k8.row.col" + sa + s + s + sa, 16, 8, 8, 1, a, b,
                 acc16x8(acc), acc16x8(acc)});
    // m16n8k4: a_i (g + 8i, t), b0 (t, g)
    const Frag a4 = {e, 2, [=](unsigned l, unsigned i) { return At{0, g(l) + 8 * i, t(l)}; }};
    const Frag b4 = {e, 1, [=](unsigned l, unsigned) { return At{0, t(l), g(l)}; }};
    v.push_back({"mma.sync.aligned.m16n8k4.row.col" + sa + s + s + sa, 16, 8, 4, 1, a4, b4,
                 acc16x8(acc), acc16x8(acc)});
  }
  // .f64 m16n8k16: a_i row g (+8 for odd i), col 4 (i / 2) + t; b_i (t + 4i, g)
  v.push_back({"mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64.rn",
               16,
               8,
               16,
               1,
               {E::f64, 8,
                [=](unsigned l, unsigned i) {
                  return At{0, g(l) + ((i & 1) ? 8u : 0u), 4 * (i >> 1) + t(l)};
                }},
               {E::f64, 4,
                [=](unsigned l, unsigned i) {
                  return At{0, t(l) + 4 * i, g(l)};
                }},
               acc16x8(E::f64),
               acc16x8(E::f64)});
  // .f64 m8n8k4: a0 (g, t), b0 (t, g), c_i (g, 2t + i)
  v.push_back({"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
               8,
               8,
               4,
               1,
               {E::f64, 1,
                [=](unsigned l, unsigned) {
                  return At{0, g(l), t(l)};
                }},
               {E::f64, 1,
                [=](unsigned l, unsigned) {
                  return At{0, t(l), g(l)};
                }},
               {E::f64, 2, c_m8n8},
               {E::f64, 2, c_m8n8}});
  // .s8/.u8
  const E ints[][2] = {{E::s8, E::s8}, {E::u8, E::u8}, {E::s8, E::u8}, {E::u8, E::s8}};
  for (const auto& ab : ints) {
    const std::string types = mtx::suffix(ab[0]) + mtx::suffix(ab[1]);
    // m8n8k16: a_i (g, 4t + i), b_i (4t + i, g), c_i (g, 2t + i)
    v.push_back({"mma.sync.aligned.m8n8k16.row.col.s32" + types + ".s32",
                 8,
                 8,
                 16,
                 1,
                 {ab[0], 4,
                  [=](unsigned l, unsigned i) {
                    return At{0, g(l), 4 * t(l) + i};
                  }},
                 {ab[1], 4,
                  [=](unsigned l, unsigned i) {
                    return At{0, 4 * t(l) + i, g(l)};
                  }},
                 {E::s32, 2, c_m8n8},
                 {E::s32, 2, c_m8n8}});
    // m16n8k16: a_i row g (+8 for i >= 4), col 4t + (i & 3); b_i (4t + i, g)
    v.push_back({"mma.sync.aligned.m16n8k16.row.col.s32" + types + ".s32",
                 16,
                 8,
                 16,
                 1,
                 {ab[0], 8,
                  [=](unsigned l, unsigned i) {
                    return At{0, g(l) + (i >= 4 ? 8u : 0u), 4 * t(l) + (i & 3)};
                  }},
                 {ab[1], 4,
                  [=](unsigned l, unsigned i) {
                    return At{0, 4 * t(l) + i, g(l)};
                  }},
                 acc16x8(E::s32),
                 acc16x8(E::s32)});
    // m16n8k32: a_i row g (+8 for i in 4..7, 12..15), col 4t + (i & 3) (+16 for i >= 8);
    // b_i row 4t + (i & 3) (+16 for i >= 4)
    v.push_back({"mma.sync.aligned.m16n8k32.row.col.satfinite.s32" + types + ".s32",
                 16,
                 8,
                 32,
                 1,
                 {ab[0], 16,
                  [=](unsigned l, unsigned i) {
                    return At{0, g(l) + (((i >> 2) & 1) ? 8u : 0u),
                              4 * t(l) + (i & 3) + (i >= 8 ? 16u : 0u)};
                  }},
                 {ab[1], 8,
                  [=](unsigned l, unsigned i) {
                    return At{0, 4 * t(l) + (i & 3) + (i >= 4 ? 16u : 0u), g(l)};
                  }},
                 acc16x8(E::s32),
                 acc16x8(E::s32)});
  }
  // .f16 m8n8k4: four 8x8x4 products; product q on lanes 4q..4q+3 ("low", rows 0-3) and
  // 4q+16..4q+19 ("high", rows 4-7); r = lane % 4
  const auto q = [](unsigned l) { return (l >> 2) & 3; };
  const auto hi = [](unsigned l) { return l >= 16 ? 4u : 0u; };
  const auto r = [](unsigned l) { return l & 3; };
  const Frag c884_f16 = {E::f16, 8, [=](unsigned l, unsigned i) {
                           return At{q(l), r(l) + hi(l), i};
                         }};
  const Frag c884_f32 = {E::f32, 8, [=](unsigned l, unsigned i) {
                           return At{q(l), (l & 1) + (i & 2) + hi(l), (i & 4) + (l & 2) + (i & 1)};
                         }};
  for (const bool arow : {true, false}) {
    for (const bool brow : {true, false}) {
      const Frag a = {E::f16, 4, [=](unsigned l, unsigned i) {
                        return arow ? At{q(l), r(l) + hi(l), i} : At{q(l), i + hi(l), r(l)};
                      }};
      const Frag b = {E::f16, 4, [=](unsigned l, unsigned i) {
                        return brow ? At{q(l), r(l), i + hi(l)} : At{q(l), i, r(l) + hi(l)};
                      }};
      const std::string lay = std::string(arow ? ".row" : ".col") + (brow ? ".row" : ".col");
      v.push_back({"mma.sync.aligned.m8n8k4" + lay + ".f16.f16.f16.f16", 8, 8, 4, 4, a, b, c884_f16,
                   c884_f16});
      v.push_back({"mma.sync.aligned.m8n8k4" + lay + ".f32.f16.f16.f16", 8, 8, 4, 4, a, b, c884_f16,
                   c884_f32});
      v.push_back({"mma.sync.aligned.m8n8k4" + lay + ".f32.f16.f16.f32", 8, 8, 4, 4, a, b, c884_f32,
                   c884_f32});
    }
  }
  return v;
}

// The case whose instruction is `insn`.
MmaCase find_case(const std::string& insn) {
  for (MmaCase& c : cases()) {
    if (c.insn == insn) return c;
  }
  FAIL("no case " << insn);
  return {};
}

// A kernel where every lane loads its A, B and C registers (8 bytes each, in that order) from
// `in`, runs `insn` and stores its D registers (8 bytes each) to `out`.
std::string mma_kernel(const MmaCase& c) {
  const auto decl = [](char x, const Frag& f) {
    const bool wide = mtx::bits(f.type) == 64;
    return "  .reg " + std::string(wide ? ".b64" : ".b32") + " %" + x + "<" +
           std::to_string(f.regs()) + ">;\n";
  };
  std::string body = decl('a', c.a) + decl('b', c.b) + decl('c', c.c) + decl('d', c.d);
  const unsigned in_regs = c.a.regs() + c.b.regs() + c.c.regs();
  body += "  .reg .b64 %ib, %ob;\n  mul.wide.u32 %ib, %tx, " + std::to_string(8 * in_regs) +
          ";\n  add.s64 %ib, %in, %ib;\n  mul.wide.u32 %ob, %tx, " +
          std::to_string(8 * c.d.regs()) + ";\n  add.s64 %ob, %out, %ob;\n";
  unsigned slot = 0;
  for (const auto& [x, f] : {std::pair{'a', c.a}, std::pair{'b', c.b}, std::pair{'c', c.c}}) {
    const std::string w = mtx::bits(f.type) == 64 ? "64" : "32";
    for (unsigned i = 0; i < f.regs(); ++i, ++slot) {
      body += "  ld.global.b" + w + " %" + x + std::to_string(i) + ", [%ib+" +
              std::to_string(8 * slot) + "];\n";
    }
  }
  body += "  " + c.insn + " {" + mtx::reg_list('d', c.d.regs()) + "}, {" +
          mtx::reg_list('a', c.a.regs()) + "}, {" + mtx::reg_list('b', c.b.regs()) + "}, {" +
          mtx::reg_list('c', c.c.regs()) + "};\n";
  const std::string w = mtx::bits(c.d.type) == 64 ? "64" : "32";
  for (unsigned i = 0; i < c.d.regs(); ++i) {
    body += "  st.global.b" + w + " [%ob+" + std::to_string(8 * i) + "], %d" + std::to_string(i) +
            ";\n";
  }
  return ptxt::kernel(body);
}

struct MmaTest : PtxTest {
  /// Runs `c` on A, B and C (one of each per group); returns each group's D.
  std::vector<Matrix> run_mma(const MmaCase& c, const std::vector<Matrix>& a,
                              const std::vector<Matrix>& b, const std::vector<Matrix>& cm) {
    std::vector<std::uint64_t> in;
    for (unsigned lane = 0; lane < 32; ++lane) {
      for (const auto& [f, m] : {std::pair{&c.a, &a}, std::pair{&c.b, &b}, std::pair{&c.c, &cm}}) {
        for (std::uint64_t r : mtx::pack(*f, *m, lane)) in.push_back(r);
      }
    }
    const auto out = run_as<std::uint64_t>(mma_kernel(c), 32 * c.d.regs(), in, {}, {32, 1, 1});
    std::vector<Matrix> d(c.groups, Matrix(c.m, c.n));
    std::vector<int> seen(c.groups * c.m * c.n, 0);
    for (unsigned lane = 0; lane < 32; ++lane) {
      for (unsigned i = 0; i < c.d.elems; ++i) {
        const At at = c.d.at(lane, i);
        d[at.group].at(at.row, at.col) =
            mtx::decode(c.d.type, mtx::element(c.d, &out[lane * c.d.regs()], i));
        ++seen[(at.group * c.m + at.row) * c.n + at.col];
      }
    }
    for (int s : seen) REQUIRE_MESSAGE(s == 1, "the test's D layout covers every element once");
    return d;
  }
};

}  // namespace

TEST_SUITE("ptx.mma") {
  TEST_CASE_FIXTURE(MmaTest, "ptx.mma: every shape and type follows the ISA's fragment layouts") {
    std::uint64_t seed = 1;
    for (const MmaCase& c : cases()) {
      INFO(c.insn);
      mtx::Lcg rng(seed++);
      // Values exact in every type involved, and sums exact even in an .f16 accumulator:
      // multiples of 1/2 in [-2, 2] for floats, the full range for 8-bit integers.
      const auto value = [&](E e) -> double {
        switch (e) {
          case E::s8: return rng.next(-128, 127);
          case E::u8: return rng.next(0, 255);
          case E::s32: return rng.next(-100000, 100000);
          default: return rng.next(-4, 4) / 2.0;
        }
      };
      std::vector<Matrix> a(c.groups, Matrix(c.m, c.k)), b(c.groups, Matrix(c.k, c.n));
      std::vector<Matrix> cm(c.groups, Matrix(c.m, c.n));
      for (unsigned gi = 0; gi < c.groups; ++gi) {
        for (double& x : a[gi].v) x = value(c.a.type);
        for (double& x : b[gi].v) x = value(c.b.type);
        for (double& x : cm[gi].v) x = value(c.c.type);
      }
      const std::vector<Matrix> d = run_mma(c, a, b, cm);
      for (unsigned gi = 0; gi < c.groups; ++gi) {
        for (unsigned i = 0; i < c.m; ++i) {
          for (unsigned j = 0; j < c.n; ++j) {
            double want = cm[gi].at(i, j);
            for (unsigned kk = 0; kk < c.k; ++kk) want += a[gi].at(i, kk) * b[gi].at(kk, j);
            INFO("D[", gi, "][", i, "][", j, "]");
            CHECK(d[gi].at(i, j) == want);
          }
        }
      }
    }
  }

  // "When both .ctype and .dtype are .f16, the accumulation is performed with at least half
  // precision": here in f32, rounded to .f16 once. 2048 + 16 ones is 2064 (per-step .f16
  // rounding would stay at 2048, whose neighbours are 2046 and 2050); 2048 + i rounds to the
  // nearest even .f16.
  TEST_CASE_FIXTURE(MmaTest, "ptx.mma: an .f16 accumulator sums in f32 and rounds once") {
    const MmaCase c = find_case("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
    std::vector<Matrix> a(1, Matrix(16, 16)), b(1, Matrix(16, 8)), cm(1, Matrix(16, 8));
    for (unsigned i = 0; i < 16; ++i) {
      for (unsigned k = 0; k < 16; ++k) a[0].at(i, k) = (i == 0 || k < i) ? 1 : 0;
    }
    for (double& x : b[0].v) x = 1;
    for (double& x : cm[0].v) x = 2048;
    const std::vector<Matrix> d = run_mma(c, a, b, cm);
    CHECK(d[0].at(0, 0) == 2064);
    for (unsigned i = 1; i < 16; ++i) {
      INFO("row ", i);
      CHECK(d[0].at(i, 3) == mtx::half_value(mtx::half_bits(2048.0 + i)));
    }
    CHECK(d[0].at(1, 0) == 2048);  // 2049: a tie, to the even 2048
    CHECK(d[0].at(3, 0) == 2052);  // 2051: a tie, to the even 2052
  }

  // .tf32 operands carry 10 mantissa bits: the low 13 bits of the register are ignored.
  TEST_CASE_FIXTURE(MmaTest, "ptx.mma: .tf32 operands are truncated to 10 mantissa bits") {
    const MmaCase c = find_case("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    std::vector<Matrix> a(1, Matrix(16, 8)), b(1, Matrix(8, 8)), cm(1, Matrix(16, 8));
    a[0].at(0, 0) = ptxt::as_f32(0x3f801fffu);  // 1 + 8191 * 2^-23: tf32 1.0
    a[0].at(1, 0) = ptxt::as_f32(0x3f802000u);  // 1 + 2^-10: a tf32 value
    a[0].at(2, 0) = ptxt::as_f32(0xbfffffffu);  // -(2 - 2^-23): tf32 -(2 - 2^-10)
    for (unsigned j = 0; j < 8; ++j) b[0].at(0, j) = 1;
    const std::vector<Matrix> d = run_mma(c, a, b, cm);
    for (unsigned j = 0; j < 8; ++j) {
      CHECK(d[0].at(0, j) == 1.0);
      CHECK(d[0].at(1, j) == 1.0 + 0x1p-10);
      CHECK(d[0].at(2, j) == -(2.0 - 0x1p-10));
    }
  }

  // "The .satfinite qualifier indicates that on overflow, the accumulated value is limited to the
  // range MIN_INT32..MAX_INT32. If .satfinite is not specified, the accumulated value is wrapped."
  TEST_CASE_FIXTURE(MmaTest, "ptx.mma: integer accumulators wrap, or saturate with .satfinite") {
    for (const bool sat : {false, true}) {
      MmaCase c = find_case("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32");
      if (sat) c.insn = "mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32";
      INFO(c.insn);
      std::vector<Matrix> a(1, Matrix(16, 16)), b(1, Matrix(16, 8)), cm(1, Matrix(16, 8));
      for (unsigned i = 0; i < 16; ++i) {
        for (unsigned k = 0; k < 16; ++k) a[0].at(i, k) = i < 8 ? 127 : -128;
      }
      for (double& x : b[0].v) x = 127;
      for (unsigned i = 0; i < 16; ++i) {
        for (unsigned j = 0; j < 8; ++j) {
          cm[0].at(i, j) = i < 8 ? std::numeric_limits<std::int32_t>::max() - 10.0 * j
                                 : std::numeric_limits<std::int32_t>::min() + 10.0 * j;
        }
      }
      const std::vector<Matrix> d = run_mma(c, a, b, cm);
      for (unsigned i = 0; i < 16; ++i) {
        for (unsigned j = 0; j < 8; ++j) {
          const double exact = cm[0].at(i, j) + 16.0 * a[0].at(i, 0) * 127;
          const double wrapped = static_cast<std::int32_t>(
              static_cast<std::uint32_t>(static_cast<std::int64_t>(exact)));
          const double clamped = i < 8 ? std::numeric_limits<std::int32_t>::max()
                                       : std::numeric_limits<std::int32_t>::min();
          INFO("D[", i, "][", j, "]");
          CHECK(d[0].at(i, j) == (sat ? clamped : wrapped));
        }
      }
    }
  }

  // .f64 mma: each multiply-add is an .f64 fused multiply-add in the instruction's rounding mode
  // (default .rn). 1 + 1.5 * 2^-53 lies between 1 and 1 + 2^-52.
  TEST_CASE_FIXTURE(MmaTest, "ptx.mma: .f64 products round by the rounding modifier") {
    const double up = 1.0 + 0x1p-52;
    struct Mode {
      const char* suffix;
      double pos, neg;  // results for +(1 + 1.5 * 2^-53) and -(1 + 1.5 * 2^-53)
    };
    const Mode modes[] = {
        {"", up, -up}, {".rn", up, -up}, {".rz", 1.0, -1.0}, {".rm", 1.0, -up}, {".rp", up, -1.0}};
    for (const Mode& mode : modes) {
      MmaCase c = find_case("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64");
      c.insn += mode.suffix;
      INFO(c.insn);
      std::vector<Matrix> a(1, Matrix(8, 4)), b(1, Matrix(4, 8)), cm(1, Matrix(8, 8));
      for (unsigned i = 0; i < 8; ++i) {
        a[0].at(i, 0) = i % 2 ? -0x1p-53 : 0x1p-53;
        for (unsigned j = 0; j < 8; ++j) cm[0].at(i, j) = i % 2 ? -1.0 : 1.0;
      }
      for (unsigned j = 0; j < 8; ++j) b[0].at(0, j) = 1.5;
      const std::vector<Matrix> d = run_mma(c, a, b, cm);
      for (unsigned i = 0; i < 8; ++i) {
        INFO("row ", i);
        CHECK(d[0].at(i, 5) == (i % 2 ? mode.neg : mode.pos));
      }
    }
  }
}
