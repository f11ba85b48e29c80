// PTX memory instructions: ld/st in every state space (global, shared static and dynamic,
// local, const, param, module globals, generic), widths, sign extension, vectors, and atomics
// (atom/red: add, cas, exch, inc, dec, min, max, bitwise, f32/f64 add) (PTX ISA 9.0 "Data
// Movement and Conversion Instructions", "Parallel Synchronization and Communication").
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

}  // namespace

TEST_SUITE("ptx.memory") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: global loads and stores of every width and vector") {
    const std::string body = R"(
  .reg .b32 %r<8>;
  .reg .b16 %h<4>;
  .reg .b64 %rd<2>;
  ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%in];
  st.global.v4.u32 [%out], {%r3, %r2, %r1, %r0};
  ld.global.v2.u64 {%rd0, %rd1}, [%in+16];
  st.global.v2.u64 [%out+16], {%rd1, %rd0};
  ld.global.s8 %r4, [%in+32];
  st.global.u32 [%out+32], %r4;
  ld.global.u8 %r5, [%in+32];
  st.global.u32 [%out+36], %r5;
  ld.global.s16 %r6, [%in+34];
  st.global.u32 [%out+40], %r6;
  ld.global.u16 %h0, [%in+34];
  st.global.u16 [%out+44], %h0;
  st.global.u8 [%out+46], %r4;
  ld.global.nc.u32 %r7, [%in+36];
  st.global.u32 [%out+48], %r7;
  ldu.global.u32 %r7, [%in+36];
  st.global.u32 [%out+52], %r7;
  ld.global.v4.u8 {%h0, %h1, %h2, %h3}, [%in+40];
  st.global.v4.u8 [%out+56], {%h3, %h2, %h1, %h0};
  ld.volatile.global.u32 %r0, [%in];
  st.global.u32 [%out+60], %r0;
  ld.relaxed.gpu.global.u32 %r0, [%in+4];
  st.global.u32 [%out+64], %r0;
  ld.acquire.gpu.global.u32 %r0, [%in+8];
  st.global.u32 [%out+68], %r0;
  st.release.gpu.global.u32 [%out+72], %r3;
  ld.global.v2.f64 {%rd0, %rd1}, [%in+16];
  st.global.f64 [%out+80], %rd0;
  mov.b64 {%r0, %r1}, %rd0;
  st.global.v2.u32 [%out+88], {%r1, %r0};
  mov.b64 %rd1, {%r1, %r0};
  st.global.u64 [%out+96], %rd1;
  mov.b32 {%h0, %h1}, %r2;
  st.global.v2.u16 [%out+104], {%h1, %h0};
)";
    const std::vector<u32> in{1,          2,          3,          4,
                              0x22222222, 0x11111111, 0x44444444, 0x33333333,
                              0x80018080, 0xdeadbeef, 0x04030201};
    const auto r = run_as<u32>(ptxt::kernel(body), 27, in);
    CHECK(std::vector<u32>(r.begin(), r.begin() + 4) == std::vector<u32>{4, 3, 2, 1});
    CHECK(std::vector<u32>(r.begin() + 4, r.begin() + 8) ==
          std::vector<u32>{0x44444444, 0x33333333, 0x22222222, 0x11111111});
    CHECK(ptxt::hex(r[8]) == ptxt::hex(0xffffff80));  // ld.s8 sign-extends
    CHECK(ptxt::hex(r[9]) == ptxt::hex(0x80));        // ld.u8 zero-extends
    CHECK(ptxt::hex(r[10]) == ptxt::hex(0xffff8001));
    CHECK(ptxt::hex(r[11]) == ptxt::hex(0xab808001));  // u16, u8, and one byte untouched
    CHECK(ptxt::hex(r[12]) == ptxt::hex(0xdeadbeef));
    CHECK(ptxt::hex(r[13]) == ptxt::hex(0xdeadbeef));
    CHECK(ptxt::hex(r[14]) == ptxt::hex(0x01020304));
    CHECK(r[15] == 1);
    CHECK(r[16] == 2);
    CHECK(r[17] == 3);
    CHECK(r[18] == 4);
    CHECK(ptxt::hex(r[20]) == ptxt::hex(0x22222222));  // the f64 bits unchanged
    CHECK(ptxt::hex(r[21]) == ptxt::hex(0x11111111));
    CHECK(ptxt::hex(r[22]) == ptxt::hex(0x11111111));  // mov.b64 {lo, hi} unpacks
    CHECK(ptxt::hex(r[23]) == ptxt::hex(0x22222222));
    CHECK(ptxt::hex(r[24]) == ptxt::hex(0x11111111));  // mov.b64 %rd, {lo, hi} packs
    CHECK(ptxt::hex(r[25]) == ptxt::hex(0x22222222));
    CHECK(ptxt::hex(r[26]) == ptxt::hex(0x00030000));  // halves of 3 swapped
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: shared memory static dynamic and generic") {
    const std::string prelude = R"(
.shared .align 16 .b32 sh[64];
.extern .shared .align 16 .b8 dyn[];
)";
    const std::string body = R"(
  .reg .b32 %a, %b, %v, %off, %roff, %dynp;
  .reg .b64 %s64, %g, %off64;
  .reg .pred %p;
  shl.b32 %off, %tx, 2;
  mov.u32 %roff, 252;
  sub.u32 %roff, %roff, %off;
  mov.u32 %a, sh;
  add.u32 %b, %a, %off;
  mul.lo.u32 %v, %tx, 3;
  st.shared.u32 [%b], %v;
  mov.u32 %dynp, dyn;
  add.u32 %b, %dynp, %off;
  add.u32 %v, %tx, 100;
  st.shared.u32 [%b], %v;
  bar.sync 0;
  add.u32 %b, %a, %roff;
  ld.shared.u32 %v, [%b];
  mul.wide.u32 %off64, %tx, 4;
  add.u64 %g, %out, %off64;
  st.global.u32 [%g], %v;
  add.u32 %b, %dynp, %roff;
  ld.shared.u32 %v, [%b];
  st.global.u32 [%g+256], %v;
  mov.u64 %s64, sh;
  cvta.shared.u64 %s64, %s64;
  cvt.u64.u32 %off64, %roff;
  add.u64 %s64, %s64, %off64;
  ld.u32 %v, [%s64];
  st.global.u32 [%g+512], %v;
  isspacep.shared %p, %s64;
  selp.u32 %v, 1, 0, %p;
  st.global.u32 [%g+768], %v;
  isspacep.global %p, %s64;
  selp.u32 %v, 1, 0, %p;
  st.global.u32 [%g+1024], %v;
  cvta.to.shared.u64 %s64, %s64;
  cvt.u32.u64 %b, %s64;
  ld.shared.u32 %v, [%b];
  st.global.u32 [%g+1280], %v;
)";
    const auto r =
        run_as<u32>(ptxt::kernel(body, prelude), 6 * 64, std::vector<u32>{}, {}, {64, 1, 1}, 256);
    for (u32 t = 0; t < 64; ++t) {
      INFO("thread ", t);
      CHECK(r[t] == (63 - t) * 3);
      CHECK(r[64 + t] == 163 - t);
      CHECK(r[128 + t] == (63 - t) * 3);  // through a generic address
      CHECK(r[192 + t] == 1);             // isspacep.shared
      CHECK(r[256 + t] == 0);             // isspacep.global
      CHECK(r[320 + t] == (63 - t) * 3);  // cvta.to.shared back
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: local const and module globals") {
    const std::string prelude = R"(
.const .align 4 .b32 ctab[4] = {10, 20, 30, 40};
.global .align 4 .u32 gvar = 7;
.global .align 8 .b64 garr[2] = {0x1122334455667788, 2};
.global .align 1 .b8 gstr[6] = {72, 105};
)";
    const std::string body = R"(
  .local .align 8 .b8 loc[32];
  .reg .b32 %r<4>;
  .reg .b64 %l, %gl, %c, %rd;
  .reg .pred %p;
  mov.u64 %l, loc;
  mov.u32 %r0, 5;
  st.local.u32 [%l], %r0;
  mov.u32 %r0, 6;
  st.local.u32 [%l+4], %r0;
  ld.local.v2.u32 {%r1, %r2}, [%l];
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%out], %r1;
  cvta.local.u64 %gl, %l;
  ld.u32 %r1, [%gl+4];
  st.global.u32 [%out+4], %r1;
  mov.u32 %r0, 9;
  st.u32 [%gl+8], %r0;
  ld.local.u32 %r1, [%l+8];
  st.global.u32 [%out+8], %r1;
  isspacep.local %p, %gl;
  selp.u32 %r1, 1, 0, %p;
  st.global.u32 [%out+12], %r1;
  ld.const.u32 %r1, [ctab+8];
  st.global.u32 [%out+16], %r1;
  mov.u64 %c, ctab;
  ld.const.u32 %r1, [%c+12];
  st.global.u32 [%out+20], %r1;
  ld.global.u32 %r1, [gvar];
  st.global.u32 [%out+24], %r1;
  ld.global.u64 %rd, [garr];
  st.global.u64 [%out+32], %rd;
  ld.global.u64 %rd, [garr+8];
  st.global.u64 [%out+40], %rd;
  ld.global.u8 %r1, [gstr+1];
  st.global.u32 [%out+48], %r1;
  ld.global.u8 %r1, [gstr+4];
  st.global.u32 [%out+52], %r1;
  mov.u64 %c, gvar;
  cvta.global.u64 %c, %c;
  ld.u32 %r1, [%c];
  st.global.u32 [%out+56], %r1;
  isspacep.global %p, %c;
  selp.u32 %r1, 1, 0, %p;
  st.global.u32 [%out+60], %r1;
  isspacep.const %p, %gl;
  selp.u32 %r1, 1, 0, %p;
  st.global.u32 [%out+64], %r1;
)";
    const auto r = run_as<u32>(ptxt::kernel(body, prelude), 17);
    CHECK(r[0] == 11);
    CHECK(r[1] == 6);
    CHECK(r[2] == 9);  // a generic store reaches local memory
    CHECK(r[3] == 1);
    CHECK(r[4] == 30);
    CHECK(r[5] == 40);
    CHECK(r[6] == 7);
    CHECK(ptxt::hex(r[8] | (u64{r[9]} << 32)) == ptxt::hex(0x1122334455667788));
    CHECK(r[10] == 2);
    CHECK(r[12] == 105);
    CHECK(r[13] == 0);  // the initializer is shorter than the array: zero-filled
    CHECK(r[14] == 7);
    CHECK(r[15] == 1);
    CHECK(r[16] == 0);
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.memory: a module global written by a kernel is seen by the host") {
    const std::string text = ptxt::kernel(R"(
  .reg .b32 %r;
  ld.global.u32 %r, [counter];
  add.u32 %r, %r, 5;
  st.global.u32 [counter], %r;
)",
                                          ".visible .global .align 4 .u32 counter = 37;\n");
    CUmodule m = load(text);
    CUdeviceptr g = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetGlobal(&g, &bytes, m, "counter"));
    CHECK(bytes == 4);
    u32 value = 100;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(g, &value, 4));
    CUdeviceptr none = 0;
    void* params[] = {&none, &none};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(function(m, "k"), 1, 1, 1, 1, 1, 1,
                                                               0, nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&value, g, 4));
    CHECK(value == 105);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: kernel parameters of every size and a byte array") {
    const std::string text = swcu::test::ptx(R"(
.visible .entry pk(.param .u64 out, .param .u8 c, .param .s16 h, .param .f64 x,
                   .param .align 8 .b8 blob[16], .param .u32 n)
{
  .reg .b64 %o, %rd;
  .reg .b32 %r<3>;
  .reg .b16 %s;
  ld.param.u64 %o, [out];
  cvta.to.global.u64 %o, %o;
  ld.param.u8 %r0, [c];
  st.global.u32 [%o], %r0;
  ld.param.s16 %r0, [h];
  st.global.u32 [%o+4], %r0;
  ld.param.f64 %rd, [x];
  st.global.f64 [%o+8], %rd;
  ld.param.v2.u32 {%r1, %r2}, [blob+8];
  st.global.v2.u32 [%o+16], {%r2, %r1};
  ld.param.u64 %rd, [blob];
  st.global.u64 [%o+24], %rd;
  ld.param.u32 %r0, [n];
  st.global.u32 [%o+32], %r0;
  mov.u64 %rd, blob;
  ld.param.u32 %r0, [%rd+4];
  st.global.u32 [%o+36], %r0;
  ret;
}
)");
    CUmodule m = load(text);
    const CUdeviceptr out = alloc(40);
    CUdeviceptr out_arg = out;
    unsigned char c = 200;
    short h = -3;
    double x = 2.5;
    struct Blob {
      u64 a;
      u32 b, c;
    } blob{0x0102030405060708, 11, 22};
    u32 n = 0xfeedface;
    void* params[] = {&out_arg, &c, &h, &x, &blob, &n};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(function(m, "pk"), 1, 1, 1, 1, 1, 1,
                                                               0, nullptr, params, nullptr));
    std::vector<u32> r(10);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(r.data(), out, 40));
    CHECK(r[0] == 200);
    CHECK(ptxt::hex(r[1]) == ptxt::hex(0xfffffffd));  // ld.param.s16 into .b32 sign-extends
    double back = 0;
    std::memcpy(&back, &r[2], 8);
    CHECK(back == 2.5);
    CHECK(r[4] == 22);
    CHECK(r[5] == 11);
    CHECK(ptxt::hex(r[6] | (u64{r[7]} << 32)) == ptxt::hex(0x0102030405060708));
    CHECK(ptxt::hex(r[8]) == ptxt::hex(0xfeedface));
    CHECK(ptxt::hex(r[9]) == ptxt::hex(0x01020304));  // through the parameter's address
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(out));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: atom returns the old value and updates memory") {
    // Each case: a cell set to `init`, one atomic on it; the result and the cell are stored.
    struct Case {
      const char* type;  // for st/ld of the cell and the result: u32 or u64
      u64 init;
      std::string insn;  // "%res" is the result register, "[%cell]" the cell
      u64 old, now;
    };
    const std::vector<Case> cases{
        {"u32", 5, "atom.global.inc.u32 %res, [%cell], 5;", 5, 0},
        {"u32", 3, "atom.global.inc.u32 %res, [%cell], 5;", 3, 4},
        {"u32", 9, "atom.global.inc.u32 %res, [%cell], 5;", 9, 0},
        {"u32", 0, "atom.global.dec.u32 %res, [%cell], 5;", 0, 5},
        {"u32", 7, "atom.global.dec.u32 %res, [%cell], 5;", 7, 5},
        {"u32", 3, "atom.global.dec.u32 %res, [%cell], 5;", 3, 2},
        {"u32", 10, "atom.global.cas.b32 %res, [%cell], 10, 20;", 10, 20},
        {"u32", 10, "atom.global.cas.b32 %res, [%cell], 5, 30;", 10, 10},
        {"u32", 20, "atom.global.exch.b32 %res, [%cell], 99;", 20, 99},
        {"u32", 0xfffffffb, "atom.global.min.s32 %res, [%cell], 3;", 0xfffffffb, 0xfffffffb},
        {"u32", 0xfffffffb, "atom.global.max.s32 %res, [%cell], 3;", 0xfffffffb, 3},
        {"u32", 0xffffffff, "atom.global.min.u32 %res, [%cell], 3;", 0xffffffff, 3},
        {"u32", 0xffffffff, "atom.global.max.u32 %res, [%cell], 3;", 0xffffffff, 0xffffffff},
        {"u32", 0xff00ff00, "atom.global.and.b32 %res, [%cell], 0x0ff00ff0;", 0xff00ff00,
         0x0f000f00},
        {"u32", 0xff00ff00, "atom.global.or.b32 %res, [%cell], 0x0ff00ff0;", 0xff00ff00,
         0xfff0fff0},
        {"u32", 0xff00ff00, "atom.global.xor.b32 %res, [%cell], 0x0ff00ff0;", 0xff00ff00,
         0xf0f0f0f0},
        {"u32", 0xffffffff, "atom.global.add.u32 %res, [%cell], 2;", 0xffffffff, 1},
        {"u64", 0xffffffff, "atom.global.add.u64 %res, [%cell], 1;", 0xffffffff, 0x100000000},
        {"u64", 0x100000000, "atom.global.cas.b64 %res, [%cell], 0x100000000, 7;", 0x100000000, 7},
        {"u64", 0x100000000, "atom.global.cas.b64 %res, [%cell], 0, 7;", 0x100000000, 0x100000000},
        {"u64", 5, "atom.global.exch.b64 %res, [%cell], 0xffffffffffffffff;", 5, ~u64{0}},
        {"u64", ~u64{0}, "atom.global.min.s64 %res, [%cell], 5;", ~u64{0}, ~u64{0}},
        {"u64", 1, "atom.global.max.u64 %res, [%cell], 0xffffffffffffffff;", 1, ~u64{0}},
        {"u64", 0x8000000000000000, "atom.global.max.s64 %res, [%cell], 1;", 0x8000000000000000, 1},
        {"u64", 0xff, "atom.global.and.b64 %res, [%cell], 0x0f;", 0xff, 0x0f},
        {"u32", ptxt::f32(1.5f), "atom.global.add.f32 %res, [%cell], 0f40100000;", ptxt::f32(1.5f),
         ptxt::f32(3.75f)},
        {"u64", ptxt::f64(1.5), "atom.global.add.f64 %res, [%cell], 0d3FD0000000000000;",
         ptxt::f64(1.5), ptxt::f64(1.75)},
        // atom.add.f32 on global memory flushes subnormal inputs and results (PTX ISA atom).
        {"u32", 0, "atom.global.add.f32 %res, [%cell], 0f00000001;", 0, 0},
        {"u32", 1, "red.global.add.u32 [%cell], 5; mov.u32 %res, 1;", 1, 6},
        {"u32", 1, "red.global.max.s32 [%cell], -4; mov.u32 %res, 1;", 1, 1},
        {"u64", 1, "red.global.add.u64 [%cell], 0xffffffffffffffff; mov.u64 %res, 1;", 1, 0},
        {"u32", 3,
         "cvta.global.u64 %cell, %cell; atom.add.u32 %res, [%cell], 4; "
         "cvta.to.global.u64 %cell, %cell;",
         3, 7},
        {"u32", 6, "atom.relaxed.gpu.global.add.u32 %res, [%cell], 1;", 6, 7},
        {"u32", 6, "atom.acq_rel.gpu.global.exch.b32 %res, [%cell], 1;", 6, 1},
    };
    std::string body = "  .reg .b64 %cell, %init64, %res64;\n  .reg .b32 %init32, %res32;\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const bool wide = std::string(c.type) == "u64";
      const std::string res = wide ? "%res64" : "%res32";
      const std::string init = wide ? "%init64" : "%init32";
      std::string insn = c.insn;
      for (std::size_t at = insn.find("%res"); at != std::string::npos;
           at = insn.find("%res", at + res.size())) {
        insn.replace(at, 4, res);
      }
      body += "  add.u64 %cell, %out, " + std::to_string(16 * i + 8) + ";\n";
      body +=
          "  mov.b" + std::string(wide ? "64 " : "32 ") + init + ", " + ptxt::hex(c.init) + ";\n";
      body += "  st.global." + std::string(c.type) + " [%cell], " + init + ";\n";
      body += "  " + insn + "\n";
      body += "  st.global." + std::string(c.type) + " [%out+" + std::to_string(16 * i) + "], " +
              res + ";\n";
    }
    const auto r = run_as<u64>(ptxt::kernel(body), 2 * cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const u64 mask = std::string(c.type) == "u64" ? ~u64{0} : 0xffffffff;
      INFO(c.insn, " on ", ptxt::hex(c.init));
      CHECK(ptxt::hex(r[2 * i] & mask) == ptxt::hex(c.old));
      CHECK(ptxt::hex(r[2 * i + 1] & mask) == ptxt::hex(c.now));
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: atomics from many threads lose no update") {
    // 4 blocks of 64 threads; cells in the shared in/out buffer.
    const std::string body = R"(
  .reg .b32 %g, %old, %v, %neg, %cta;
  .reg .b64 %slot;
  .reg .f32 %half;
  .reg .f64 %one;
  .reg .pred %p0;
  mov.u32 %g, %ctaid.x;
  mad.lo.u32 %g, %g, 64, %tx;
  atom.global.add.u32 %old, [%in], 1;
  mov.f32 %half, 0f3F000000;
  atom.global.add.f32 %half, [%in+4], %half;
  cvt.u64.u32 %slot, %g;
  atom.global.add.u64 %slot, [%in+8], %slot;
  add.u32 %v, %g, 1;
  atom.global.exch.b32 %old, [%in+16], %v;
  mul.wide.u32 %slot, %g, 4;
  add.u64 %slot, %slot, %in;
  st.global.u32 [%slot+64], %old;
  atom.global.max.u32 %old, [%in+20], %g;
  neg.s32 %neg, %g;
  atom.global.min.s32 %old, [%in+24], %neg;
  atom.global.inc.u32 %old, [%in+28], 1000;
  mov.f64 %one, 0d3FF0000000000000;
  atom.global.add.f64 %one, [%in+32], %one;
  setp.eq.u32 %p0, %tx, 0;
  @%p0 st.shared.u32 [scount], 0;
  bar.sync 0;
  atom.shared.add.u32 %old, [scount], 2;
  bar.sync 0;
  @%p0 ld.shared.u32 %v, [scount];
  mov.u32 %cta, %ctaid.x;
  @%p0 mul.wide.u32 %slot, %cta, 4;
  @%p0 add.u64 %slot, %slot, %in;
  @%p0 st.global.u32 [%slot+48], %v;
  red.global.add.u32 [%in+40], 3;
)";
    std::vector<u32> buffer(16 + 256, 0);
    run_inout_as(ptxt::kernel(body, ".shared .align 4 .u32 scount;\n"), buffer, {4, 1, 1},
                 {64, 1, 1});
    CHECK(buffer[0] == 256);
    CHECK(ptxt::as_f32(buffer[1]) == 128.0f);
    CHECK((buffer[2] | (u64{buffer[3]} << 32)) == 255u * 256u / 2u);
    // exch: the old values and the final value are a permutation of 0..256
    std::vector<u32> seen(buffer.begin() + 16, buffer.end());
    seen.push_back(buffer[4]);
    std::sort(seen.begin(), seen.end());
    std::vector<u32> all(257);
    std::iota(all.begin(), all.end(), 0u);
    CHECK(seen == all);
    CHECK(buffer[5] == 255);
    CHECK(static_cast<std::int32_t>(buffer[6]) == -255);
    CHECK(buffer[7] == 256);
    double sum = 0;
    std::memcpy(&sum, &buffer[8], 8);
    CHECK(sum == 256.0);
    CHECK(buffer[10] == 768);
    for (int b = 0; b < 4; ++b) CHECK(buffer[12 + b] == 128);  // shared atomics per block
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: a spin lock taken by one lane per warp works") {
    // Lane 0 of each warp of two blocks of 128 takes the lock, increments a plain counter, and
    // releases it: the scheduler must let the holder's warp run while other warps spin.
    const std::string body = R"(
  .reg .b32 %old, %c, %lane;
  .reg .pred %busy, %other;
  mov.u32 %lane, %laneid;
  setp.ne.u32 %other, %lane, 0;
  @%other bra $done;
$spin:
  atom.acquire.gpu.global.cas.b32 %old, [%in], 0, 1;
  setp.ne.u32 %busy, %old, 0;
  @%busy bra $spin;
  ld.volatile.global.u32 %c, [%in+4];
  add.u32 %c, %c, 1;
  st.volatile.global.u32 [%in+4], %c;
  fence.acq_rel.gpu;
  atom.release.gpu.global.exch.b32 %old, [%in], 0;
$done:
)";
    std::vector<u32> buffer{0, 0};
    run_inout_as(ptxt::kernel(body), buffer, {2, 1, 1}, {128, 1, 1});
    CHECK(buffer[0] == 0);
    CHECK(buffer[1] == 8);
  }

  // Independent thread scheduling (sm_70+) guarantees that the lane holding the lock progresses
  // while lanes of its own warp spin on it.
  TEST_CASE_FIXTURE(PtxTest, "ptx.memory: a spin lock contended within a warp works") {
    // Every thread of two blocks of 64 takes the lock, increments a plain counter, and releases
    // it: the scheduler must let the holder run while others spin.
    const std::string body = R"(
  .reg .b32 %old, %c;
  .reg .pred %busy;
$spin:
  atom.acquire.gpu.global.cas.b32 %old, [%in], 0, 1;
  setp.ne.u32 %busy, %old, 0;
  @%busy bra $spin;
  ld.volatile.global.u32 %c, [%in+4];
  add.u32 %c, %c, 1;
  st.volatile.global.u32 [%in+4], %c;
  fence.acq_rel.gpu;
  atom.release.gpu.global.exch.b32 %old, [%in], 0;
)";
    std::vector<u32> buffer{0, 0};
    run_inout_as(ptxt::kernel(body), buffer, {2, 1, 1}, {64, 1, 1});
    CHECK(buffer[0] == 0);
    CHECK(buffer[1] == 128);
  }
}
