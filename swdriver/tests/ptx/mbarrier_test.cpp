// PTX mbarrier objects: phases and their parity, pending arrivals (arrive with counts,
// arrive_drop, pending_count of a .noComplete state), tx-counts (expect_tx, complete_tx,
// arrive.expect_tx, bytes completed before they are expected), test_wait and try_wait with a
// state or a phase parity, try_wait suspending a warp until another warp completes the phase,
// and a producer/consumer pipeline over many phases (PTX ISA 9.0 "mbarrier"). Expected values
// follow the ISA's definitions: a phase completes when its pending arrivals and its tx-count are
// both zero; a wait on phase parity P is true once the current phase's parity differs from P.
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;

const char* const kBar =
    ".shared .align 8 .b64 bar;\n.shared .align 8 .b64 bar2;\n"
    ".shared .align 4 .b32 data[32];\n";

// Stores predicates %p0..%p<n-1> as u32 0/1 to out[0..n).
std::string store_preds(int n, int first_slot = 0) {
  std::string s = "  .reg .b32 %sel;\n";
  for (int i = 0; i < n; ++i) {
    s += "  selp.u32 %sel, 1, 0, %p" + std::to_string(i) + ";\n";
    s += "  st.global.u32 [%out+" + std::to_string(4 * (first_slot + i)) + "], %sel;\n";
  }
  return s;
}

}  // namespace

TEST_SUITE("ptx.mbarrier") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.mbarrier: phases complete when their arrivals are in") {
    // init 4: arrivals of 1 and 2 leave phase 0 open; the 4th completes it; one arrive of count 4
    // completes phase 1. pending_count reads the pending count before the arrive.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b64 %s1, %s2, %s3, %s4;
  .reg .b32 %c1, %c2;
  .reg .pred %p<8>;
  mbarrier.init.shared.b64 [bar], 4;
  mbarrier.arrive.noComplete.shared.b64 %s1, [bar], 1;
  mbarrier.pending_count.b64 %c1, %s1;
  mbarrier.arrive.noComplete.shared.b64 %s2, [bar], 2;
  mbarrier.pending_count.b64 %c2, %s2;
  mbarrier.test_wait.shared.b64 %p0, [bar], %s2;
  mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;
  mbarrier.test_wait.parity.shared.b64 %p2, [bar], 1;
  mbarrier.arrive.shared.b64 %s3, [bar];
  mbarrier.test_wait.shared.b64 %p3, [bar], %s3;
  mbarrier.test_wait.shared.b64 %p4, [bar], %s1;
  mbarrier.test_wait.parity.shared.b64 %p5, [bar], 0;
  mbarrier.test_wait.parity.shared.b64 %p6, [bar], 1;
  mbarrier.arrive.shared::cta.b64 %s4, [bar], 4;
  mbarrier.test_wait.parity.shared.b64 %p7, [bar], 1;
  st.global.u32 [%out+32], %c1;
  st.global.u32 [%out+36], %c2;
)" + store_preds(8),
                                            kBar),
                               10);
    CHECK(r[0] == 0);  // phase 0 still open after 3 of 4 arrivals
    CHECK(r[1] == 0);  // parity 0: the current phase, incomplete
    CHECK(r[2] == 1);  // parity 1: the phase before the first one counts as complete
    CHECK(r[3] == 1);  // the 4th arrival completed phase 0
    CHECK(r[4] == 1);  // an older state of phase 0 sees it complete too
    CHECK(r[5] == 1);
    CHECK(r[6] == 0);  // phase 1 is current
    CHECK(r[7] == 1);  // one arrive of count 4 completed phase 1
    CHECK(r[8] == 4);  // pending before the first arrive
    CHECK(r[9] == 3);  // pending before the second
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.mbarrier: tx-counts hold a phase until their bytes complete") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b64 %s1, %s2, %s3;
  .reg .pred %p<6>;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 64;
  mbarrier.arrive.shared.b64 %s1, [bar];
  mbarrier.test_wait.shared.b64 %p0, [bar], %s1;
  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 32;
  mbarrier.test_wait.shared.b64 %p1, [bar], %s1;
  mbarrier.complete_tx.shared::cta.b64 [bar], 32;
  mbarrier.test_wait.shared.b64 %p2, [bar], %s1;
  // phase 1: the bytes complete before they are expected (the tx-count goes below zero)
  mbarrier.complete_tx.shared::cta.b64 [bar], 16;
  mbarrier.arrive.expect_tx.shared::cta.b64 %s2, [bar], 16;
  mbarrier.test_wait.shared.b64 %p3, [bar], %s2;
  // phase 2: arrive.expect_tx, then the bytes
  mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %s3, [bar], 8;
  mbarrier.test_wait.parity.shared.b64 %p4, [bar], 0;
  mbarrier.complete_tx.shared::cta.b64 [bar], 8;
  mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p5, [bar], 0;
)" + store_preds(6),
                                            kBar),
                               6);
    CHECK(r[0] == 0);  // every arrival in, 64 bytes outstanding
    CHECK(r[1] == 0);  // 32 outstanding
    CHECK(r[2] == 1);
    CHECK(r[3] == 1);  // -16 + 16 = 0 with the arrival: complete
    CHECK(r[4] == 0);  // phase 2 waits for 8 bytes
    CHECK(r[5] == 1);
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.mbarrier: arrive_drop lowers the arrivals every later phase expects") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b64 %s<7>;
  .reg .b32 %c;
  .reg .pred %p<5>;
  mbarrier.init.shared.b64 [bar], 3;
  mbarrier.arrive_drop.shared.b64 %s1, [bar];
  mbarrier.arrive.shared.b64 %s2, [bar];
  mbarrier.test_wait.shared.b64 %p0, [bar], %s2;
  mbarrier.arrive.shared.b64 %s3, [bar];
  mbarrier.test_wait.shared.b64 %p1, [bar], %s3;
  mbarrier.arrive.noComplete.shared.b64 %s4, [bar], 1;
  mbarrier.pending_count.b64 %c, %s4;
  mbarrier.arrive_drop.release.cta.shared::cta.b64 %s5, [bar], 1;
  mbarrier.test_wait.parity.shared.b64 %p2, [bar], 1;
  mbarrier.test_wait.parity.shared.b64 %p3, [bar], 0;
  mbarrier.arrive.shared.b64 %s6, [bar];
  mbarrier.test_wait.parity.shared.b64 %p4, [bar], 0;
  st.global.u32 [%out+20], %c;
)" + store_preds(5),
                                            kBar),
                               6);
    CHECK(r[0] == 0);  // phase 0: 2 of 3 arrivals (the drop counts as one)
    CHECK(r[1] == 1);  // the 3rd completes it
    CHECK(r[2] == 1);  // phase 1 expects 2 (3 - 1 dropped): completed by the 2nd arrival
    CHECK(r[3] == 0);  // phase 2 is current
    CHECK(r[4] == 1);  // phase 2 expects 1 (another drop): one arrive completes it
    CHECK(r[5] == 2);  // pending count at the start of phase 1
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.mbarrier: generic and .shared::cluster addresses, inval and init again") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b64 %g, %s;
  .reg .b32 %a, %n, %hint;
  .reg .pred %p<4>;
  mov.u64 %g, bar;
  cvta.shared.u64 %g, %g;
  mov.u32 %a, bar;
  mov.u32 %n, 2;
  mov.u32 %hint, 1000;
  mbarrier.init.b64 [%g], %n;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%a], 1;
  mbarrier.arrive.relaxed.cta.b64 %s, [%g];
  mbarrier.try_wait.b64 %p0, [%g], %s;
  mbarrier.try_wait.relaxed.cta.shared::cta.b64 %p1, [bar], %s, %hint;
  mbarrier.inval.shared.b64 [bar];
  mbarrier.init.shared::cta.b64 [bar], 1;
  mbarrier.test_wait.parity.relaxed.cluster.shared::cta.b64 %p2, [bar], 0;
  mbarrier.arrive.shared.b64 _, [%a];
  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [bar], 0, 500;
)" + store_preds(4),
                                            kBar),
                               4);
    CHECK(r[0] == 1);
    CHECK(r[1] == 1);
    CHECK(r[2] == 0);  // a new object starts at phase 0
    CHECK(r[3] == 1);
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.mbarrier: try_wait suspends a warp until another completes the phase") {
    // Warp 0 waits first (it runs first); warp 1 writes the data, then arrives 32 times.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %w, %v, %a;
  .reg .b64 %slot;
  .reg .pred %p, %consumer, %first;
  and.b32 %lane, %tx, 31;
  setp.eq.u32 %first, %tx, 0;
  @%first mbarrier.init.shared.b64 [bar], 32;
  bar.sync 0;
  mov.u32 %a, data;
  setp.lt.u32 %consumer, %tx, 32;
  @!%consumer bra $produce;
$wait:
  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], 0;
  @!%p bra $wait;
  sub.u32 %w, 31, %lane;
  shl.b32 %w, %w, 2;
  add.u32 %w, %a, %w;
  ld.shared.u32 %v, [%w];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
  bra $done;
$produce:
  shl.b32 %w, %lane, 2;
  add.u32 %w, %a, %w;
  mad.lo.u32 %v, %lane, 7, 1;
  st.shared.u32 [%w], %v;
  mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];
$done:
)",
                                            kBar),
                               64, std::vector<u32>{}, {}, {64, 1, 1});
    for (u32 t = 0; t < 32; ++t) CHECK(r[2 * t] == (31 - t) * 7 + 1);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.mbarrier: waits in inline-asm blocks that reuse their labels") {
    // CUTLASS's ClusterBarrier::wait is inline asm with its own labels in a { } block; inlined
    // twice, the labels repeat in sibling blocks, which ptxas scopes to each block.
    const std::string wait = R"(
  {
  .reg .pred P1;
  LAB_WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%a], %par, 10000000;
  @P1 bra DONE;
  bra LAB_WAIT;
  DONE:
  }
)";
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %a, %par, %v;
  mov.u32 %a, bar;
  mov.u32 %par, 0;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.arrive.shared.b64 _, [bar];
)" + wait + R"(
  mov.u32 %par, 1;
  mbarrier.arrive.shared.b64 _, [bar];
)" + wait + R"(
  mov.u32 %v, 2;
  st.global.u32 [%out], %v;
  bra DONE;
  mov.u32 %v, 3;
  st.global.u32 [%out], %v;
DONE:
)",
                                            kBar),
                               1);
    CHECK(r[0] == 2);  // the last bra goes to the function's own DONE
  }

  TEST_CASE_FIXTURE(PtxTest,
                    "ptx.mbarrier: a producer and a consumer warp alternate over 8 phases") {
    // full: the consumer may read; empty: the producer may write. Round r waits for parity r & 1
    // of full, and (r & 1) ^ 1 of empty (the phase before the first counts as complete).
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %w, %v, %round, %parity, %sum, %a;
  .reg .b64 %slot;
  .reg .pred %p, %consumer, %first, %more;
  and.b32 %lane, %tx, 31;
  setp.eq.u32 %first, %tx, 0;
  @%first mbarrier.init.shared.b64 [bar], 32;
  @%first mbarrier.init.shared.b64 [bar2], 32;
  bar.sync 0;
  mov.u32 %a, data;
  shl.b32 %w, %lane, 2;
  add.u32 %w, %a, %w;
  mov.u32 %round, 0;
  mov.u32 %sum, 0;
  setp.lt.u32 %consumer, %tx, 32;
  @!%consumer bra $produce;
$consume:
  and.b32 %parity, %round, 1;
$cwait:
  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar], %parity;
  @!%p bra $cwait;
  ld.shared.u32 %v, [%w];
  add.u32 %sum, %sum, %v;
  mbarrier.arrive.shared::cta.b64 _, [bar2];
  add.u32 %round, %round, 1;
  setp.lt.u32 %more, %round, 8;
  @%more bra $consume;
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %sum;
  bra $done;
$produce:
  and.b32 %parity, %round, 1;
  xor.b32 %parity, %parity, 1;
$pwait:
  mbarrier.try_wait.parity.shared::cta.b64 %p, [bar2], %parity;
  @!%p bra $pwait;
  mad.lo.u32 %v, %round, 100, %lane;
  st.shared.u32 [%w], %v;
  mbarrier.arrive.shared::cta.b64 _, [bar];
  add.u32 %round, %round, 1;
  setp.lt.u32 %more, %round, 8;
  @%more bra $produce;
$done:
)",
                                            kBar),
                               64, std::vector<u32>{}, {}, {64, 1, 1});
    for (u32 t = 0; t < 32; ++t) CHECK(r[2 * t] == 2800 + 8 * t);  // sum of r * 100 + lane
  }
}
