// PTX asynchronous copies: cp.async of 4, 8 and 16 bytes (.ca, .cg) with commit_group /
// wait_group / wait_all, zero-fill (src-size, the ignore-src predicate), wait_group's choice of
// groups, cp.async.mbarrier.arrive with and without .noinc, cp.async.bulk from global to shared
// memory completing through an mbarrier's tx-count and from shared to global memory in bulk
// groups, the fence.proxy forms, and setmaxnreg (PTX ISA 9.0 "cp.async", "cp.async.bulk",
// "fence", "setmaxnreg").
#include <cstdint>
#include <numeric>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;
using u8 = unsigned char;

const char* const kShared = ".shared .align 16 .b8 sbuf[1024];\n.shared .align 8 .b64 bar;\n";

std::vector<u8> bytes(std::size_t n) {
  std::vector<u8> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<u8>(i * 7 + 3);
  return v;
}

}  // namespace

TEST_SUITE("ptx.async") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.async: cp.async copies 4, 8 and 16 bytes once waited for") {
    // Thread t copies in[4t..+4) (.ca), in[128+8t..+8) (.ca) and in[384+16t..+16) (.cg) to the
    // same offsets of shared memory; after the wait and a barrier, each thread copies 16-byte
    // chunks others wrote to out.
    const std::vector<u8> in = bytes(896);
    const auto r = run(ptxt::kernel(R"(
  .reg .b32 %s, %d, %o, %v<4>, %chunk;
  .reg .b64 %src, %dst, %off;
  .reg .pred %more;
  mov.u32 %s, sbuf;
  shl.b32 %o, %tx, 2;
  add.u32 %d, %s, %o;
  cvt.u64.u32 %off, %o;
  add.u64 %src, %in, %off;
  cp.async.ca.shared.global [%d], [%src], 4;
  shl.b32 %o, %tx, 3;
  add.u32 %o, %o, 128;
  add.u32 %d, %s, %o;
  cvt.u64.u32 %off, %o;
  add.u64 %src, %in, %off;
  cp.async.ca.shared::cta.global [%d], [%src], 8;
  shl.b32 %o, %tx, 4;
  add.u32 %o, %o, 384;
  add.u32 %d, %s, %o;
  cvt.u64.u32 %off, %o;
  add.u64 %src, %in, %off;
  cp.async.cg.shared.global.L2::128B [%d], [%src], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  mov.u32 %chunk, %tx;
$copy:
  shl.b32 %o, %chunk, 4;
  add.u32 %d, %s, %o;
  ld.shared.v4.u32 {%v0, %v1, %v2, %v3}, [%d];
  cvt.u64.u32 %off, %o;
  add.u64 %dst, %out, %off;
  st.global.v4.u32 [%dst], {%v0, %v1, %v2, %v3};
  add.u32 %chunk, %chunk, 32;
  setp.lt.u32 %more, %chunk, 56;
  @%more bra $copy;
)",
                                    kShared),
                       896, in, {}, {32, 1, 1});
    CHECK(r == in);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: src-size and ignore-src fill the rest with zeros") {
    // The destination is first filled with 0xff bytes. Copies: 16 bytes with src-size 5; 8
    // bytes with src-size 0 from address 0 (nothing is read); 4 bytes ignoring a null source;
    // 4 bytes not ignoring; 16 bytes with src-size 9 in a register.
    const std::vector<u8> in = bytes(64);
    const auto r = run(ptxt::kernel(R"(
  .reg .b32 %s, %d, %v, %n, %i;
  .reg .b64 %null, %dst, %off;
  .reg .pred %yes, %no, %more;
  mov.u32 %s, sbuf;
  mov.u32 %v, -1;
  mov.u32 %i, 0;
$fill:
  add.u32 %d, %s, %i;
  st.shared.u32 [%d], %v;
  add.u32 %i, %i, 4;
  setp.lt.u32 %more, %i, 64;
  @%more bra $fill;
  mov.u64 %null, 0;
  setp.eq.u32 %yes, %tx, 0;
  setp.ne.u32 %no, %tx, 0;
  mov.u32 %n, 9;
  cp.async.cg.shared.global [%s], [%in], 16, 5;
  add.u32 %d, %s, 16;
  cp.async.ca.shared.global [%d], [%null], 8, 0;
  add.u32 %d, %s, 24;
  cp.async.ca.shared.global [%d], [%null], 4, %yes;
  add.u32 %d, %s, 28;
  cp.async.ca.shared.global [%d], [%in+28], 4, %no;
  add.u32 %d, %s, 32;
  cp.async.cg.shared.global [%d], [%in+32], 16, %n;
  cp.async.wait_all;
  mov.u32 %i, 0;
$out:
  add.u32 %d, %s, %i;
  ld.shared.u32 %v, [%d];
  cvt.u64.u32 %off, %i;
  add.u64 %dst, %out, %off;
  st.global.u32 [%dst], %v;
  add.u32 %i, %i, 4;
  setp.lt.u32 %more, %i, 64;
  @%more bra $out;
)",
                                    kShared),
                       64, in);
    std::vector<u8> want(64, 0xff);
    for (int i = 0; i < 16; ++i) want[i] = i < 5 ? in[i] : 0;
    for (int i = 16; i < 28; ++i) want[i] = 0;
    for (int i = 28; i < 32; ++i) want[i] = in[i];
    for (int i = 32; i < 48; ++i) want[i] = i < 41 ? in[i] : 0;
    CHECK(r == want);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: wait_group N waits for all but the N newest groups") {
    // Groups: A (slot 0), B (slot 1), then C (slot 2) not committed. The slots start at 0xff..
    // The PTX ISA guarantees a copy's bytes only after a wait covers it; the software driver
    // performs each copy as late as that allows, so a slot no wait covers still holds its old
    // value (a GPU may or may not have written it), which shows a missing wait.
    const std::vector<u32> in = {0x11111111, 0x22222222, 0x33333333, 0};
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %s, %d1, %d2, %v, %a<3>, %b<3>, %c<3>;
  mov.u32 %s, sbuf;
  add.u32 %d1, %s, 4;
  add.u32 %d2, %s, 8;
  mov.u32 %v, -1;
  st.shared.u32 [%s], %v;
  st.shared.u32 [%d1], %v;
  st.shared.u32 [%d2], %v;
  cp.async.ca.shared.global [%s], [%in], 4;
  cp.async.commit_group;
  cp.async.ca.shared.global [%d1], [%in+4], 4;
  cp.async.commit_group;
  cp.async.ca.shared.global [%d2], [%in+8], 4;
  cp.async.wait_group 1;
  ld.shared.u32 %a0, [%s];
  ld.shared.u32 %a1, [%d1];
  ld.shared.u32 %a2, [%d2];
  cp.async.wait_group 0;
  ld.shared.u32 %b0, [%s];
  ld.shared.u32 %b1, [%d1];
  ld.shared.u32 %b2, [%d2];
  cp.async.wait_all;
  ld.shared.u32 %c0, [%s];
  ld.shared.u32 %c1, [%d1];
  ld.shared.u32 %c2, [%d2];
  st.global.v4.u32 [%out], {%a0, %a1, %a2, %b0};
  st.global.v4.u32 [%out+16], {%b1, %b2, %c0, %c1};
  st.global.u32 [%out+32], %c2;
)",
                                            kShared),
                               9, in);
    CHECK(r[0] == 0x11111111);  // wait_group 1: A is done
    CHECK(r[1] == 0xffffffff);  // B is the one newest group left pending
    CHECK(r[2] == 0xffffffff);  // C is in no group yet
    CHECK(r[3] == 0x11111111);
    CHECK(r[4] == 0x22222222);  // wait_group 0: every committed group
    CHECK(r[5] == 0xffffffff);  // C is still not committed
    CHECK(r[6] == 0x11111111);
    CHECK(r[7] == 0x22222222);
    CHECK(r[8] == 0x33333333);  // wait_all commits C and waits for it
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: cp.async.mbarrier.arrive makes an mbarrier track copies") {
    // 64 threads each copy one word, then arrive through the mbarrier: with .noinc the copies'
    // arrive-on is the thread's arrival (init 64); without it the thread arrives itself too.
    std::vector<u32> in(64);
    std::iota(in.begin(), in.end(), 1000u);
    for (const bool noinc : {true, false}) {
      INFO("noinc: ", noinc);
      const std::string arrive = noinc ? "  cp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n"
                                         "  mov.u32 %par, 0;\n"
                                         "$wait:\n"
                                         "  mbarrier.try_wait.parity.shared.b64 %p, [bar], %par;\n"
                                         "  @!%p bra $wait;\n"
                                       : "  cp.async.mbarrier.arrive.shared.b64 [bar];\n"
                                         "  mbarrier.arrive.shared.b64 %state, [bar];\n"
                                         "$wait:\n"
                                         "  mbarrier.try_wait.shared.b64 %p, [bar], %state;\n"
                                         "  @!%p bra $wait;\n";
      const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %s, %d, %o, %v, %par;
  .reg .b64 %src, %off, %slot, %state;
  .reg .pred %p, %first;
  setp.eq.u32 %first, %tx, 0;
  @%first mbarrier.init.shared.b64 [bar], 64;
  bar.sync 0;
  mov.u32 %s, sbuf;
  shl.b32 %o, %tx, 2;
  add.u32 %d, %s, %o;
  cvt.u64.u32 %off, %o;
  add.u64 %src, %in, %off;
  cp.async.ca.shared.global [%d], [%src], 4;
)" + arrive + R"(
  sub.u32 %o, 63, %tx;
  shl.b32 %o, %o, 2;
  add.u32 %d, %s, %o;
  ld.shared.u32 %v, [%d];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                              kShared),
                                 128, in, {}, {64, 1, 1});
      for (u32 t = 0; t < 64; ++t) CHECK(r[2 * t] == 1000 + 63 - t);
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: cp.async.bulk to shared memory completes its mbarrier") {
    // Thread 0 expects 256 bytes and issues the copy (as CUTLASS orders it), or issues the copy
    // first and expects afterwards (as cuda::memcpy_async does); every thread waits for phase 0.
    std::vector<u32> in(64);
    std::iota(in.begin(), in.end(), 7u);
    const std::string orders[] = {
        R"(
  @%first mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 256;
  @%first cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%in], %n, [%b];
)",
        R"(
  @%first cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%s], [%in], 256, [%b], %policy;
  @%first mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%b], %n;
  @%first mbarrier.arrive.shared::cta.b64 _, [%b];
)"};
    for (const std::string& order : orders) {
      INFO(order);
      const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %s, %b, %d, %o, %v, %n;
  .reg .b64 %slot, %policy;
  .reg .pred %p, %first;
  mov.u32 %s, sbuf;
  mov.u32 %b, bar;
  mov.u32 %n, 256;
  mov.u64 %policy, 0;
  setp.eq.u32 %first, %tx, 0;
  @%first mbarrier.init.shared::cta.b64 [bar], 1;
  bar.sync 0;
)" + order + R"(
$wait:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [%b], 0;
  @!%p bra $wait;
  sub.u32 %o, 63, %tx;
  shl.b32 %o, %o, 2;
  add.u32 %d, %s, %o;
  ld.shared.u32 %v, [%d];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                              kShared),
                                 128, in, {}, {64, 1, 1});
      for (u32 t = 0; t < 64; ++t) CHECK(r[2 * t] == 7 + 63 - t);
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: cp.async.bulk to global memory completes in bulk groups") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %s, %d, %o, %v;
  .reg .pred %first;
  mov.u32 %s, sbuf;
  shl.b32 %o, %tx, 2;
  add.u32 %d, %s, %o;
  mul.lo.u32 %v, %tx, 3;
  st.shared.u32 [%d], %v;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.eq.u32 %first, %tx, 0;
  @!%first bra $done;
  cp.async.bulk.global.shared::cta.bulk_group [%out], [%s], 128;
  cp.async.bulk.commit_group;
  add.u32 %d, %s, 128;
  cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%out+128], [%d], 128, %rd_t;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 1;
  cp.async.bulk.wait_group 0;
$done:
)",
                                            kShared),
                               64, std::vector<u32>{}, {}, {64, 1, 1});
    for (u32 t = 0; t < 64; ++t) CHECK(r[t] == 3 * t);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.async: fence.proxy forms, bulk prefetch and setmaxnreg run") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %v;
  fence.proxy.async;
  fence.proxy.async.global;
  fence.proxy.async.shared::cta;
  fence.proxy.alias;
  fence.mbarrier_init.release.cluster;
  fence.proxy.tensormap::generic.release.gpu;
  fence.proxy.tensormap::generic.acquire.gpu [%in], 128;
  cp.async.bulk.prefetch.L2.global [%in], 64;
  setmaxnreg.dec.sync.aligned.u32 64;
  setmaxnreg.inc.sync.aligned.u32 240;
  griddepcontrol.wait;
  griddepcontrol.launch_dependents;
  mov.u32 %v, 42;
  st.global.u32 [%out], %v;
)"),
                               1, std::vector<u32>{}, {}, {128, 1, 1});
    CHECK(r[0] == 42);
  }
}
