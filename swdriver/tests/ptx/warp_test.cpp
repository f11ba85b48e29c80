// PTX warp-level instructions: shfl.sync in every mode with clamp and segment masks and the
// predicate output, vote.sync, match.sync, redux.sync, activemask, bar.warp.sync, elect.sync
// (PTX ISA 9.0 "shfl.sync", "vote.sync", "match.sync", "redux.sync", "activemask",
// "bar.warp.sync", "elect.sync").
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

// shfl.sync source lane per the PTX ISA pseudo-code; returns {source lane, in range}.
std::pair<u32, bool> shfl_source(const char* mode, u32 lane, u32 b, u32 c) {
  const u32 bval = b & 31, cval = c & 31, mask = (c >> 8) & 31;
  const u32 max_lane = (lane & mask) | (cval & ~mask);
  const u32 min_lane = lane & mask;
  const std::string m = mode;
  u32 j = 0;
  bool in_range = false;
  if (m == "up") {
    j = lane - bval;
    in_range = static_cast<std::int32_t>(j) >= static_cast<std::int32_t>(max_lane);
  } else if (m == "down") {
    j = lane + bval;
    in_range = j <= max_lane;
  } else if (m == "bfly") {
    j = lane ^ bval;
    in_range = j <= max_lane;
  } else {
    j = min_lane | (bval & ~mask);
    in_range = j <= max_lane;
  }
  return {in_range ? j : lane, in_range};
}

// A kernel where each of 32 lanes computes `code` (result in %v, predicate in %p) and stores
// {%v, %p} into its 8-byte slot.
std::string per_lane(const std::string& code) {
  return ptxt::kernel(R"(
  .reg .b32 %v, %x, %y, %pv;
  .reg .b64 %v64, %slot;
  .reg .pred %p, %q;
  mov.u32 %x, %laneid;
  setp.ne.u32 %p, %x, %x;
)" + code + R"(
  selp.u32 %pv, 1, 0, %p;
  add.u64 %slot, %out, %rd_t;
  st.global.v2.u32 [%slot], {%v, %pv};
)");
}

}  // namespace

TEST_SUITE("ptx.warp") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: shfl.sync up down bfly idx with clamps and segments") {
    struct Case {
      const char* mode;
      u32 b, c;
    };
    const Case cases[] = {{"up", 1, 0},        {"up", 5, 0},      {"down", 1, 0x1f},
                          {"down", 7, 0x1f},   {"bfly", 1, 0x1f}, {"bfly", 16, 0x1f},
                          {"idx", 5, 0x1f},    {"idx", 37, 0x1f}, {"idx", 3, 0x101f},
                          {"down", 2, 0x181f}, {"up", 2, 0x1800}, {"bfly", 4, 0x1c1f},
                          {"idx", 9, 0x0f},    {"down", 1, 0x0f}};
    for (const Case& c : cases) {
      const std::string code = "  mul.lo.u32 %y, %x, 10;\n  shfl.sync." + std::string(c.mode) +
                               ".b32 %v|%p, %y, " + std::to_string(c.b) + ", " +
                               std::to_string(c.c) + ", 0xffffffff;\n";
      const auto r = run_as<u32>(per_lane(code), 64, std::vector<u32>{}, {}, {32, 1, 1});
      for (u32 lane = 0; lane < 32; ++lane) {
        const auto [src, in_range] = shfl_source(c.mode, lane, c.b, c.c);
        INFO("shfl.", c.mode, " b=", c.b, " c=", ptxt::hex(c.c), " lane ", lane);
        CHECK(r[2 * lane] == 10 * src);
        CHECK(r[2 * lane + 1] == (in_range ? 1u : 0u));
      }
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: shfl.sync among the lanes of a membermask") {
    // Only the low 16 lanes take part (the others branch around); idx reads within them.
    const auto r = run_as<u32>(per_lane(R"(
  mov.u32 %v, 7;
  setp.ge.u32 %q, %x, 16;
  @%q bra $skip;
  add.u32 %y, %x, 100;
  shfl.sync.idx.b32 %v|%p, %y, 15, 0x1f, 0x0000ffff;
$skip:
)"),
                               64, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) {
      INFO("lane ", lane);
      CHECK(r[2 * lane] == (lane < 16 ? 115u : 7u));
      CHECK(r[2 * lane + 1] == (lane < 16 ? 1u : 0u));
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: vote.sync all any uni ballot") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %r<6>, %ballot, %half;
  .reg .b64 %slot;
  .reg .pred %low, %yes, %a, %b, %c, %d, %e;
  mov.u32 %lane, %laneid;
  setp.lt.u32 %low, %lane, 16;
  setp.eq.u32 %yes, %lane, %lane;
  vote.sync.all.pred %a, %low, 0xffffffff;
  vote.sync.any.pred %b, %low, 0xffffffff;
  vote.sync.uni.pred %c, %low, 0xffffffff;
  vote.sync.all.pred %d, %yes, 0xffffffff;
  vote.sync.uni.pred %e, %yes, 0xffffffff;
  vote.sync.ballot.b32 %ballot, %low, 0xffffffff;
  selp.u32 %r0, 1, 0, %a;
  selp.u32 %r1, 1, 0, %b;
  selp.u32 %r2, 1, 0, %c;
  selp.u32 %r3, 1, 0, %d;
  selp.u32 %r4, 1, 0, %e;
  mov.u32 %half, 0;
  @!%low bra $skip;
  and.b32 %r5, %lane, 1;
  setp.eq.u32 %a, %r5, 0;
  vote.sync.ballot.b32 %half, %a, 0x0000ffff;
  vote.sync.any.pred %b, !%low, 0x0000ffff;
  selp.u32 %r5, 1, 0, %b;
  add.u32 %half, %half, %r5;
$skip:
  mul.wide.u32 %slot, %lane, 32;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%r0, %r1, %r2, %r3};
  st.global.v4.u32 [%slot+16], {%r4, %ballot, %half, %lane};
)"),
                               256, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) {
      INFO("lane ", lane);
      const u32* l = &r[8 * lane];
      CHECK(l[0] == 0);  // all(lane < 16)
      CHECK(l[1] == 1);  // any
      CHECK(l[2] == 0);  // uni
      CHECK(l[3] == 1);
      CHECK(l[4] == 1);
      CHECK(ptxt::hex(l[5]) == ptxt::hex(0x0000ffff));
      CHECK(ptxt::hex(l[6]) == ptxt::hex(lane < 16 ? 0x5555u : 0u));  // + any(false) == 0
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: exited lanes do not take part in vote.sync") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %ballot;
  .reg .b64 %slot;
  .reg .pred %gone, %t, %all;
  mov.u32 %lane, %laneid;
  setp.ge.u32 %gone, %lane, 20;
  @%gone exit;
  setp.eq.u32 %t, %lane, %lane;
  vote.sync.ballot.b32 %ballot, %t, 0xffffffff;
  vote.sync.all.pred %all, %t, 0xffffffff;
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %ballot;
  @%all st.global.u32 [%slot+4], 1;
)"),
                               64, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 20; ++lane) {
      INFO("lane ", lane);
      CHECK(ptxt::hex(r[2 * lane]) == ptxt::hex(0x000fffff));
      CHECK(r[2 * lane + 1] == 1);
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: match.sync any and all") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %key, %any, %all, %same, %all2, %any64, %pv, %pv2;
  .reg .b64 %k64, %slot;
  .reg .pred %p, %p2;
  mov.u32 %lane, %laneid;
  shr.u32 %key, %lane, 2;
  match.any.sync.b32 %any, %key, 0xffffffff;
  match.all.sync.b32 %all|%p, %key, 0xffffffff;
  mov.u32 %same, 42;
  match.all.sync.b32 %all2|%p2, %same, 0xffffffff;
  and.b32 %key, %lane, 1;
  cvt.u64.u32 %k64, %key;
  shl.b64 %k64, %k64, 40;
  match.any.sync.b64 %any64, %k64, 0xffffffff;
  selp.u32 %pv, 1, 0, %p;
  selp.u32 %pv2, 1, 0, %p2;
  mul.wide.u32 %slot, %lane, 32;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%any, %all, %pv, %all2};
  st.global.v4.u32 [%slot+16], {%pv2, %any64, %lane, %lane};
)"),
                               256, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) {
      INFO("lane ", lane);
      const u32* l = &r[8 * lane];
      CHECK(ptxt::hex(l[0]) == ptxt::hex(0xfu << (4 * (lane / 4))));
      CHECK(l[1] == 0);
      CHECK(l[2] == 0);
      CHECK(ptxt::hex(l[3]) == ptxt::hex(0xffffffff));
      CHECK(l[4] == 1);
      CHECK(ptxt::hex(l[5]) == ptxt::hex(lane % 2 ? 0xaaaaaaaau : 0x55555555u));
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: redux.sync reduces over the members") {
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %s, %r<8>;
  .reg .b64 %slot;
  .reg .pred %low;
  mov.u32 %lane, %laneid;
  redux.sync.add.u32 %r0, %lane, 0xffffffff;
  sub.s32 %s, %lane, 16;
  redux.sync.min.s32 %r1, %s, 0xffffffff;
  redux.sync.max.s32 %r2, %s, 0xffffffff;
  redux.sync.min.u32 %r3, %s, 0xffffffff;
  mov.u32 %s, 1;
  shl.b32 %s, %s, %lane;
  redux.sync.or.b32 %r4, %s, 0xffffffff;
  redux.sync.xor.b32 %r5, %lane, 0xffffffff;
  not.b32 %s, %s;
  redux.sync.and.b32 %r6, %s, 0xffffffff;
  mov.u32 %r7, 0;
  setp.lt.u32 %low, %lane, 16;
  @!%low bra $skip;
  mov.u32 %s, 0x10000001;
  redux.sync.add.s32 %r7, %s, 0x0000ffff;
$skip:
  mul.wide.u32 %slot, %lane, 32;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%r0, %r1, %r2, %r3};
  st.global.v4.u32 [%slot+16], {%r4, %r5, %r6, %r7};
)"),
                               256, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) {
      INFO("lane ", lane);
      const u32* l = &r[8 * lane];
      CHECK(l[0] == 496);
      CHECK(static_cast<std::int32_t>(l[1]) == -16);
      CHECK(l[2] == 15);
      CHECK(l[3] == 0);  // unsigned: 0 (lane 16) is the least
      CHECK(ptxt::hex(l[4]) == ptxt::hex(0xffffffff));
      CHECK(l[5] == 0);  // xor of 0..31
      CHECK(l[6] == 0);
      CHECK(ptxt::hex(l[7]) == ptxt::hex(lane < 16 ? 0x10u : 0u));  // truncated to 32 bits
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: redux.sync add over half a warp") {
    const auto r = run_as<u32>(per_lane(R"(
  mov.u32 %v, 0;
  setp.ge.u32 %q, %x, 16;
  @%q bra $skip;
  redux.sync.add.u32 %v, %x, 0x0000ffff;
$skip:
)"),
                               64, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) CHECK(r[2 * lane] == (lane < 16 ? 120u : 0u));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: activemask in converged code names the live lanes") {
    // 20 threads: one warp with lanes 20..31 absent.
    const auto r =
        run_as<u32>(per_lane("  activemask.b32 %v;\n"), 40, std::vector<u32>{}, {}, {20, 1, 1});
    for (u32 lane = 0; lane < 20; ++lane) CHECK(ptxt::hex(r[2 * lane]) == ptxt::hex(0x000fffff));
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: bar.warp.sync orders shared memory within the warp") {
    const std::string prelude = ".shared .align 4 .b32 wsh[32];\n";
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %a, %next, %v, %w;
  .reg .b64 %slot;
  mov.u32 %lane, %laneid;
  mov.u32 %a, wsh;
  shl.b32 %w, %lane, 2;
  add.u32 %w, %a, %w;
  mul.lo.u32 %v, %lane, 7;
  st.shared.u32 [%w], %v;
  bar.warp.sync 0xffffffff;
  add.u32 %next, %lane, 1;
  and.b32 %next, %next, 31;
  shl.b32 %next, %next, 2;
  add.u32 %next, %a, %next;
  ld.shared.u32 %v, [%next];
  add.u64 %slot, %out, %rd_t;
  st.global.u32 [%slot], %v;
)",
                                            prelude),
                               64, std::vector<u32>{}, {}, {32, 1, 1});
    for (u32 lane = 0; lane < 32; ++lane) CHECK(r[2 * lane] == ((lane + 1) % 32) * 7);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.warp: elect.sync elects exactly one member") {
    const auto r = run_as<u32>(per_lane(R"(
  setp.lt.u32 %q, %x, 8;
  mov.u32 %v, 99;
  @%q bra $skip;
  elect.sync %v|%p, 0xffffff00;
$skip:
)"),
                               64, std::vector<u32>{}, {}, {32, 1, 1});
    const u32 leader = r[2 * 8];
    CHECK(leader >= 8);
    CHECK(leader < 32);
    int elected = 0;
    for (u32 lane = 8; lane < 32; ++lane) {
      INFO("lane ", lane);
      CHECK(r[2 * lane] == leader);
      CHECK(r[2 * lane + 1] == (lane == leader ? 1u : 0u));
      elected += static_cast<int>(r[2 * lane + 1]);
    }
    CHECK(elected == 1);
  }
}
