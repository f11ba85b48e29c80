// PTX control flow: branches and loops, divergence and reconvergence, calls with .param
// arguments and results, recursion, indirect calls, brx.idx, ret and exit (PTX ISA 9.0
// "Control Flow Instructions", "Function declarations and definitions").
#include <algorithm>
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;

}  // namespace

TEST_SUITE("ptx.control") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.control: a counted loop with bra") {
    const std::string body = R"(
  .reg .b32 %i, %sum;
  .reg .pred %more;
  mov.u32 %i, 1;
  mov.u32 %sum, 0;
$loop:
  add.u32 %sum, %sum, %i;
  add.u32 %i, %i, 1;
  setp.le.u32 %more, %i, 10;
  @%more bra.uni $loop;
  st.global.u32 [%out], %sum;
)";
    CHECK(run_as<u32>(ptxt::kernel(body), 1)[0] == 55);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: divergent paths reconverge for a warp collective") {
    // Odd and even lanes take different paths with different trip counts, then all 32 vote.
    const std::string body = R"(
  .reg .b32 %v, %i, %bit, %ballot;
  .reg .b64 %slot;
  .reg .pred %odd, %more, %p;
  and.b32 %bit, %tx, 1;
  setp.eq.u32 %odd, %bit, 1;
  mov.u32 %v, 0;
  @%odd bra $odd_path;
  mov.u32 %i, 0;
$even_loop:
  add.u32 %v, %v, 2;
  add.u32 %i, %i, 1;
  setp.lt.u32 %more, %i, %tx;
  @%more bra $even_loop;
  bra $join;
$odd_path:
  mul.lo.u32 %v, %tx, 3;
$join:
  setp.ne.u32 %p, %v, 12345;
  vote.sync.ballot.b32 %ballot, %p, 0xffffffff;
  add.u64 %slot, %out, %rd_t;
  st.global.v2.u32 [%slot], {%v, %ballot};
)";
    const auto r = run_as<u32>(ptxt::kernel(body), 64, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 t = 0; t < 32; ++t) {
      INFO("lane ", t);
      CHECK(r[2 * t] == (t % 2 == 1 ? 3 * t : (t == 0 ? 2 : 2 * t)));
      CHECK(ptxt::hex(r[2 * t + 1]) == ptxt::hex(0xffffffff));
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: call passes .param arguments and returns values") {
    const std::string prelude = R"(
.func (.param .b32 r) add3 (.param .b32 a, .param .b32 b, .param .b32 c)
{
  .reg .b32 %x, %y, %z;
  ld.param.b32 %x, [a];
  ld.param.b32 %y, [b];
  ld.param.b32 %z, [c];
  add.u32 %x, %x, %y;
  add.u32 %x, %x, %z;
  st.param.b32 [r], %x;
  ret;
}
.func (.param .align 8 .b8 r[16]) swap_pair (.param .align 8 .b8 p[16], .param .f64 scale)
{
  .reg .b64 %a, %b;
  .reg .f64 %s, %fa;
  ld.param.b64 %a, [p];
  ld.param.b64 %b, [p+8];
  ld.param.f64 %s, [scale];
  mov.b64 %fa, %a;
  mul.f64 %fa, %fa, %s;
  st.param.b64 [r], %b;
  st.param.f64 [r+8], %fa;
  ret;
}
.func write_through (.param .b64 ptr, .param .b32 value)
{
  .reg .b64 %p;
  .reg .b32 %v;
  ld.param.b64 %p, [ptr];
  ld.param.b32 %v, [value];
  st.u32 [%p], %v;
  ret;
}
)";
    const std::string body = R"(
  .local .align 4 .b8 depot[8];
  .reg .b32 %r, %v;
  .reg .b64 %x, %y, %gen;
  .reg .f64 %f;
  {
    .param .b32 pa;
    .param .b32 pb;
    .param .b32 pc;
    .param .b32 ret0;
    st.param.b32 [pa], 1;
    st.param.b32 [pb], 20;
    st.param.b32 [pc], 300;
    call.uni (ret0), add3, (pa, pb, pc);
    ld.param.b32 %r, [ret0];
  }
  st.global.u32 [%out], %r;
  {
    .param .align 8 .b8 pp[16];
    .param .f64 ps;
    .param .align 8 .b8 rr[16];
    mov.b64 %x, 0x4004000000000000;
    st.param.b64 [pp], %x;
    mov.b64 %y, 77;
    st.param.b64 [pp+8], %y;
    st.param.f64 [ps], 0d4000000000000000;
    call (rr), swap_pair, (pp, ps);
    ld.param.b64 %x, [rr];
    ld.param.f64 %f, [rr+8];
  }
  st.global.u64 [%out+8], %x;
  st.global.f64 [%out+16], %f;
  mov.u64 %gen, depot;
  cvta.local.u64 %gen, %gen;
  {
    .param .b64 q0;
    .param .b32 q1;
    st.param.b64 [q0], %gen;
    st.param.b32 [q1], 4242;
    call write_through, (q0, q1);
  }
  ld.local.u32 %v, [depot];
  st.global.u32 [%out+24], %v;
)";
    const auto r = run_as<std::uint64_t>(ptxt::kernel(body, prelude), 4);
    CHECK((r[0] & 0xffffffff) == 321);
    CHECK(r[1] == 77);
    CHECK(ptxt::as_f64(r[2]) == 5.0);
    CHECK((r[3] & 0xffffffff) == 4242);  // the callee wrote the caller's local memory
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: recursive calls keep their own registers and locals") {
    const std::string prelude = R"(
.func (.param .b64 r) fact (.param .b64 n)
{
  .reg .b64 %n, %m, %sub;
  .reg .pred %base;
  ld.param.b64 %n, [n];
  setp.le.u64 %base, %n, 1;
  @%base bra $one;
  sub.u64 %m, %n, 1;
  {
    .param .b64 a;
    .param .b64 b;
    st.param.b64 [a], %m;
    call (b), fact, (a);
    ld.param.b64 %sub, [b];
  }
  mul.lo.u64 %n, %n, %sub;
  st.param.b64 [r], %n;
  ret;
$one:
  st.param.b64 [r], 1;
  ret;
}
.func (.param .b32 r) fib (.param .b32 n)
{
  .local .align 4 .b8 keep[4];
  .reg .b32 %n, %a, %b;
  .reg .pred %small;
  ld.param.b32 %n, [n];
  setp.lt.u32 %small, %n, 2;
  @%small bra $done;
  st.local.u32 [keep], %n;
  sub.u32 %a, %n, 1;
  {
    .param .b32 x;
    .param .b32 y;
    st.param.b32 [x], %a;
    call (y), fib, (x);
    ld.param.b32 %a, [y];
  }
  ld.local.u32 %n, [keep];
  sub.u32 %b, %n, 2;
  {
    .param .b32 x;
    .param .b32 y;
    st.param.b32 [x], %b;
    call (y), fib, (x);
    ld.param.b32 %b, [y];
  }
  add.u32 %n, %a, %b;
$done:
  st.param.b32 [r], %n;
  ret;
}
)";
    const std::string body = R"(
  .reg .b64 %f;
  .reg .b32 %g;
  {
    .param .b64 a;
    .param .b64 b;
    st.param.b64 [a], 20;
    call (b), fact, (a);
    ld.param.b64 %f, [b];
  }
  st.global.u64 [%out], %f;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], 15;
    call (b), fib, (a);
    ld.param.b32 %g, [b];
  }
  st.global.u32 [%out+8], %g;
)";
    const auto r =
        run_as<std::uint64_t>(ptxt::kernel(body, prelude), 2, std::vector<u32>{}, {}, {4, 1, 1});
    CHECK(r[0] == 2432902008176640000ull);  // 20!
    CHECK((r[1] & 0xffffffff) == 610);      // fib(15)
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: an indirect call through a function pointer") {
    const std::string prelude = R"(
.func (.param .b32 r) twice (.param .b32 a)
{
  .reg .b32 %x;
  ld.param.b32 %x, [a];
  shl.b32 %x, %x, 1;
  st.param.b32 [r], %x;
  ret;
}
.func (.param .b32 r) square (.param .b32 a)
{
  .reg .b32 %x;
  ld.param.b32 %x, [a];
  mul.lo.u32 %x, %x, %x;
  st.param.b32 [r], %x;
  ret;
}
)";
    const std::string body = R"(
  .reg .b64 %fp;
  .reg .b32 %v;
  .reg .pred %odd;
  .reg .b64 %slot;
  setp.ne.u32 %odd, %tx, 0;
  mov.u64 %fp, twice;
  @%odd mov.u64 %fp, square;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], 9;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (b), %fp, (a), proto;
    ld.param.b32 %v, [b];
  }
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)";
    const auto r =
        run_as<std::uint64_t>(ptxt::kernel(body, prelude), 2, std::vector<u32>{}, {}, {2, 1, 1});
    CHECK((r[0] & 0xffffffff) == 18);
    CHECK((r[1] & 0xffffffff) == 81);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: brx.idx jumps to the indexed target") {
    const std::string body = R"(
  .reg .b32 %idx, %v;
  .reg .b64 %slot;
  rem.u32 %idx, %tx, 3;
  $targets: .branchtargets $L0, $L1, $L2;
  brx.idx %idx, $targets;
$L0:
  mov.u32 %v, 100;
  bra $end;
$L1:
  mov.u32 %v, 200;
  bra $end;
$L2:
  mov.u32 %v, 300;
$end:
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)";
    const auto r = run_as<std::uint64_t>(ptxt::kernel(body), 6, std::vector<u32>{}, {}, {6, 1, 1});
    for (u32 t = 0; t < 6; ++t) CHECK((r[t] & 0xffffffff) == 100 * (t % 3 + 1));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.control: exit and ret end only their thread") {
    // Threads 16..63 exit early; the rest still pass a CTA barrier (exited threads do not hold
    // it up) and write. A .func returns early with @p ret.
    const std::string prelude = R"(
.func (.param .b32 r) clamp10 (.param .b32 a)
{
  .reg .b32 %x;
  .reg .pred %big;
  ld.param.b32 %x, [a];
  setp.gt.u32 %big, %x, 10;
  st.param.b32 [r], 10;
  @%big ret;
  st.param.b32 [r], %x;
  ret;
}
)";
    const std::string body = R"(
  .reg .b32 %v;
  .reg .b64 %slot;
  .reg .pred %late, %odd;
  setp.ge.u32 %late, %tx, 16;
  @%late exit;
  bar.sync 0;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %tx;
    call (b), clamp10, (a);
    ld.param.b32 %v, [b];
  }
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
  setp.eq.u32 %odd, %tx, 3;
  @%odd ret;
  st.global.u32 [%slot+4], 1;
)";
    const auto r =
        run_as<std::uint64_t>(ptxt::kernel(body, prelude), 64, std::vector<u32>{}, {}, {64, 1, 1});
    for (u32 t = 0; t < 64; ++t) {
      INFO("thread ", t);
      if (t < 16) {
        CHECK((r[t] & 0xffffffff) == std::min(t, 10u));
        CHECK((r[t] >> 32) == (t == 3 ? 0xababababu : 1u));
      } else {
        CHECK(r[t] == 0xababababababababull);
      }
    }
  }
}
