// PTX special registers: thread and block indices and sizes, lane ids and masks, shared sizes,
// SM ids, grid ids, clocks and timers (PTX ISA 9.0 "Special Registers").
#include <cstdint>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

}  // namespace

TEST_SUITE("ptx.sreg") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.sreg: tid ntid ctaid nctaid in three dimensions") {
    // grid (3,2,1) of blocks (4,2,2): each thread writes its 12 values at its linear index.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %v<12>, %lin, %blk, %nthr;
  .reg .b64 %slot;
  mov.u32 %v0, %tid.x;
  mov.u32 %v1, %tid.y;
  mov.u32 %v2, %tid.z;
  mov.u32 %v3, %ntid.x;
  mov.u32 %v4, %ntid.y;
  mov.u32 %v5, %ntid.z;
  mov.u32 %v6, %ctaid.x;
  mov.u32 %v7, %ctaid.y;
  mov.u32 %v8, %ctaid.z;
  mov.u32 %v9, %nctaid.x;
  mov.u32 %v10, %nctaid.y;
  mov.u32 %v11, %nctaid.z;
  mad.lo.u32 %lin, %v2, %v4, %v1;
  mad.lo.u32 %lin, %lin, %v3, %v0;
  mad.lo.u32 %blk, %v8, %v10, %v7;
  mad.lo.u32 %blk, %blk, %v9, %v6;
  mul.lo.u32 %nthr, %v3, %v4;
  mul.lo.u32 %nthr, %nthr, %v5;
  mad.lo.u32 %lin, %blk, %nthr, %lin;
  mul.wide.u32 %slot, %lin, 48;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%v0, %v1, %v2, %v3};
  st.global.v4.u32 [%slot+16], {%v4, %v5, %v6, %v7};
  st.global.v4.u32 [%slot+32], {%v8, %v9, %v10, %v11};
)"),
                               6 * 16 * 12, std::vector<u32>{}, {3, 2, 1}, {4, 2, 2});
    for (u32 bz = 0; bz < 1; ++bz)
      for (u32 by = 0; by < 2; ++by)
        for (u32 bx = 0; bx < 3; ++bx)
          for (u32 tz = 0; tz < 2; ++tz)
            for (u32 ty = 0; ty < 2; ++ty)
              for (u32 tx = 0; tx < 4; ++tx) {
                const u32 lin = ((by * 3 + bx) * 16) + (tz * 2 + ty) * 4 + tx;
                const u32* l = &r[12 * lin];
                INFO("block ", bx, ",", by, " thread ", tx, ",", ty, ",", tz);
                CHECK(std::vector<u32>(l, l + 12) ==
                      std::vector<u32>{tx, ty, tz, 4, 2, 2, bx, by, bz, 3, 2, 1});
              }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.sreg: laneid and the lane masks") {
    // 64 threads in 2D blocks (16, 4): lanes follow the linear thread index.
    const auto r = run_as<u32>(ptxt::kernel(R"(
  .reg .b32 %lane, %eq, %lt, %le, %gt, %ge, %ty, %lin;
  .reg .b64 %slot;
  mov.u32 %lane, %laneid;
  mov.u32 %eq, %lanemask_eq;
  mov.u32 %lt, %lanemask_lt;
  mov.u32 %le, %lanemask_le;
  mov.u32 %gt, %lanemask_gt;
  mov.u32 %ge, %lanemask_ge;
  mov.u32 %ty, %tid.y;
  mad.lo.u32 %lin, %ty, 16, %tx;
  mul.wide.u32 %slot, %lin, 32;
  add.u64 %slot, %slot, %out;
  st.global.v4.u32 [%slot], {%lane, %eq, %lt, %le};
  st.global.v4.u32 [%slot+16], {%gt, %ge, %lin, %lin};
)"),
                               64 * 8, std::vector<u32>{}, {}, {16, 4, 1});
    for (u32 t = 0; t < 64; ++t) {
      const u32 lane = t % 32;
      const u32* l = &r[8 * t];
      INFO("thread ", t);
      CHECK(l[0] == lane);
      CHECK(ptxt::hex(l[1]) == ptxt::hex(1u << lane));
      CHECK(ptxt::hex(l[2]) == ptxt::hex((1u << lane) - 1));
      CHECK(ptxt::hex(l[3]) == ptxt::hex(lane == 31 ? 0xffffffffu : (2u << lane) - 1));
      CHECK(ptxt::hex(l[4]) == ptxt::hex(lane == 31 ? 0u : ~((2u << lane) - 1)));
      CHECK(ptxt::hex(l[5]) == ptxt::hex(~((1u << lane) - 1)));
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.sreg: shared sizes sm ids grid ids clocks and timers") {
    const std::string prelude = ".shared .align 4 .b8 fixed[40];\n";
    const std::string body = R"(
  .reg .b32 %dyn, %total, %sm, %nsm, %spin, %w, %nw, %f;
  .reg .b64 %grid, %c0, %c1, %t0, %t1;
  .reg .pred %more;
  mov.u32 %f, fixed;
  mov.u32 %dyn, %dynamic_smem_size;
  mov.u32 %total, %total_smem_size;
  mov.u32 %sm, %smid;
  mov.u32 %nsm, %nsmid;
  mov.u64 %grid, %gridid;
  mov.u32 %w, %warpid;
  mov.u32 %nw, %nwarpid;
  mov.u64 %c0, %clock64;
  mov.u64 %t0, %globaltimer;
  mov.u32 %spin, 0;
$spin:
  add.u32 %spin, %spin, 1;
  setp.lt.u32 %more, %spin, 20000;
  @%more bra $spin;
  mov.u64 %c1, %clock64;
  mov.u64 %t1, %globaltimer;
  st.global.v4.u32 [%out], {%dyn, %total, %sm, %nsm};
  st.global.u64 [%out+16], %grid;
  st.global.u64 [%out+24], %c0;
  st.global.u64 [%out+32], %c1;
  st.global.u64 [%out+40], %t0;
  st.global.u64 [%out+48], %t1;
  st.global.v2.u32 [%out+56], {%w, %nw};
)";
    const std::string module = ptxt::kernel(body, prelude);
    const auto a = run_as<u64>(module, 8, std::vector<u32>{}, {}, {1, 1, 1}, 96);
    const auto b = run_as<u64>(module, 8, std::vector<u32>{}, {}, {1, 1, 1}, 0);
    CHECK((a[0] & 0xffffffff) == 96);  // %dynamic_smem_size
    CHECK((b[0] & 0xffffffff) == 0);
    WARN((a[0] >> 32) == 136);  // %total_smem_size: 40 static + 96 dynamic
    CHECK((a[0] >> 32) >= 136);
    const u64 sm = a[1] & 0xffffffff, nsm = a[1] >> 32;
    CHECK(nsm >= 1);
    CHECK(sm < nsm);
    CHECK(a[2] != b[2]);                        // %gridid differs between launches
    CHECK(a[4] > a[3]);                         // %clock64 advances
    CHECK(a[6] > a[5]);                         // %globaltimer advances
    CHECK((a[7] & 0xffffffff) < (a[7] >> 32));  // %warpid < %nwarpid
  }
}
