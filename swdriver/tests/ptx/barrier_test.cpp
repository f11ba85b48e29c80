// PTX CTA barriers: bar.sync, bar.red.popc/and/or, bar.arrive with bar.sync and thread counts,
// named barriers, barrier.sync from different instructions, and exited threads (PTX ISA 9.0
// "bar, barrier").
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;

const char* const kShared = ".shared .align 4 .b32 bsh[128];\n";

}  // namespace

TEST_SUITE("ptx.barrier") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: bar.sync makes every warp's stores visible") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %a, %w, %v, %other;
  .reg .b64 %slot;
  mov.u32 %a, bsh;
  shl.b32 %w, %tx, 2;
  add.u32 %w, %a, %w;
  mul.lo.u32 %v, %tx, %tx;
  st.shared.u32 [%w], %v;
  bar.sync 0;
  mov.u32 %other, 127;
  sub.u32 %other, %other, %tx;
  shl.b32 %other, %other, 2;
  add.u32 %other, %a, %other;
  ld.shared.u32 %v, [%other];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                            kShared),
                               256, std::vector<u32>{}, {2, 1, 1}, {128, 1, 1});
    for (u32 t = 0; t < 128; ++t) CHECK(r[2 * t] == (127 - t) * (127 - t));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: bar.red counts and combines predicates") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %m, %count, %all, %any, %none;
  .reg .b64 %slot;
  .reg .pred %third, %pos, %big, %a, %b, %c;
  rem.u32 %m, %tx, 3;
  setp.eq.u32 %third, %m, 0;
  bar.red.popc.u32 %count, 0, %third;
  setp.lt.u32 %pos, %tx, 1000;
  bar.red.and.pred %a, 1, %pos;
  setp.eq.u32 %big, %tx, 77;
  bar.red.or.pred %b, 2, %big;
  bar.red.and.pred %c, 3, %big;
  selp.u32 %all, 1, 0, %a;
  selp.u32 %any, 1, 0, %b;
  selp.u32 %none, 1, 0, %c;
  mul.wide.u32 %slot, %tx, 16;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%count, %all, %any, %none};
)"),
                               512, std::vector<u32>{}, {}, {128, 1, 1});
    for (u32 t = 0; t < 128; ++t) {
      INFO("thread ", t);
      CHECK(r[4 * t] == 43);
      CHECK(r[4 * t + 1] == 1);
      CHECK(r[4 * t + 2] == 1);
      CHECK(r[4 * t + 3] == 0);
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: producers bar.arrive and consumers bar.sync") {
    // Warps 0-1 write and arrive at barrier 1; warps 2-3 wait at it, then read.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %a, %w, %v, %src;
  .reg .b64 %slot;
  .reg .pred %producer;
  mov.u32 %a, bsh;
  setp.lt.u32 %producer, %tx, 64;
  @!%producer bra $consume;
  shl.b32 %w, %tx, 2;
  add.u32 %w, %a, %w;
  add.u32 %v, %tx, 1000;
  st.shared.u32 [%w], %v;
  bar.arrive 1, 128;
  mov.u32 %v, 0;
  bra $done;
$consume:
  bar.sync 1, 128;
  sub.u32 %src, %tx, 64;
  shl.b32 %src, %src, 2;
  add.u32 %src, %a, %src;
  ld.shared.u32 %v, [%src];
$done:
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                            kShared),
                               256, std::vector<u32>{}, {}, {128, 1, 1});
    for (u32 t = 64; t < 128; ++t) CHECK(r[2 * t] == t - 64 + 1000);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: named barriers with counts run independently") {
    // Warps 0-1 use barrier 1 and warps 2-3 barrier 2, 64 threads each, several rounds.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %a, %w, %v, %round, %partner, %sum, %id;
  .reg .b64 %slot;
  .reg .pred %first, %more;
  mov.u32 %a, bsh;
  shl.b32 %w, %tx, 2;
  add.u32 %w, %a, %w;
  xor.b32 %partner, %tx, 32;
  shl.b32 %partner, %partner, 2;
  add.u32 %partner, %a, %partner;
  setp.lt.u32 %first, %tx, 64;
  mov.u32 %round, 0;
  mov.u32 %sum, 0;
$loop:
  add.u32 %v, %tx, %round;
  st.shared.u32 [%w], %v;
  @%first bar.sync 1, 64;
  @!%first bar.sync 2, 64;
  ld.shared.u32 %v, [%partner];
  add.u32 %sum, %sum, %v;
  @%first bar.sync 1, 64;
  @!%first bar.sync 2, 64;
  add.u32 %round, %round, 1;
  setp.lt.u32 %more, %round, 4;
  @%more bra $loop;
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %sum;
)",
                                            kShared),
                               256, std::vector<u32>{}, {}, {128, 1, 1});
    for (u32 t = 0; t < 128; ++t) CHECK(r[2 * t] == 4 * (t ^ 32) + 6);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: barrier.sync from different instructions") {
    // Non-.aligned barrier.sync: odd and even threads wait at different instructions.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %a, %w, %v, %bit, %other;
  .reg .b64 %slot;
  .reg .pred %odd;
  mov.u32 %a, bsh;
  shl.b32 %w, %tx, 2;
  add.u32 %w, %a, %w;
  st.shared.u32 [%w], %tx;
  and.b32 %bit, %tx, 1;
  setp.eq.u32 %odd, %bit, 1;
  @%odd bra $odd;
  barrier.sync 0;
  bra $join;
$odd:
  barrier.sync 0;
$join:
  xor.b32 %other, %tx, 1;
  shl.b32 %other, %other, 2;
  add.u32 %other, %a, %other;
  ld.shared.u32 %v, [%other];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                            kShared),
                               128, std::vector<u32>{}, {}, {64, 1, 1});
    for (u32 t = 0; t < 64; ++t) CHECK(r[2 * t] == (t ^ 1));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.barrier: exited threads do not hold up bar.sync") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %v;
  .reg .b64 %slot;
  .reg .pred %gone;
  setp.ge.u32 %gone, %tx, 40;
  @%gone exit;
  bar.sync 0;
  bar.sync 0;
  mov.u32 %v, 1;
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)"),
                               256, std::vector<u32>{}, {}, {128, 1, 1});
    for (u32 t = 0; t < 40; ++t) CHECK(r[2 * t] == 1);
  }
}
