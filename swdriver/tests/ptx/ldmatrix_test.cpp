// ldmatrix, stmatrix and movmatrix (PTX ISA 9.0 "Warp-level matrix load instruction: ldmatrix",
// "... store instruction: stmatrix", "... transpose instruction: movmatrix"): 8x8 matrices of
// 16-bit elements whose rows lie at the shared-memory addresses that lanes 8j..8j+7 give for
// matrix j; lane i's register j holds row i / 4, columns 2 (i % 4) and 2 (i % 4) + 1 of matrix j
// (the lower column in the low half), or with .trans those of its transpose. The rows are put at
// scattered addresses, and ldmatrix.x4 feeds mma.m16n8k16 as hand-written kernels use it.
#include <cstdint>
#include <string>
#include <vector>

#include "matrix_support.hpp"

namespace {

using ptxt::PtxTest;

// The shared-memory row slot (16 bytes each, 32 slots) that lane L's address points at: a
// permutation, so rows need not be contiguous.
unsigned slot_of(unsigned lane) { return (lane * 13 + 5) % 32; }

// Element (r, c) of matrix j: distinct 16-bit values.
std::uint16_t value(unsigned j, unsigned r, unsigned c) {
  return static_cast<std::uint16_t>(0x1000 * (j + 1) + 0x10 * r + c);
}

// Register j of lane i per the ISA's figure (.trans: of the transposed matrix).
std::uint32_t expected(unsigned i, unsigned j, bool trans) {
  const unsigned r = i / 4, c = 2 * (i % 4);
  if (trans) return value(j, c, r) | (std::uint32_t{value(j, c + 1, r)} << 16);
  return value(j, r, c) | (std::uint32_t{value(j, r, c + 1)} << 16);
}

// Shared memory holding every matrix row at its lane's slot: slot_of(8 j + r) holds row r of
// matrix j.
std::vector<std::uint16_t> rows_in_slots(unsigned num) {
  std::vector<std::uint16_t> s(32 * 8, 0);
  for (unsigned j = 0; j < num; ++j) {
    for (unsigned r = 0; r < 8; ++r) {
      for (unsigned c = 0; c < 8; ++c) s[slot_of(8 * j + r) * 8 + c] = value(j, r, c);
    }
  }
  return s;
}

// Prologue: %s (.b32) = the shared address of this lane's row slot, %g (.b64) its generic
// address; shared memory `sm` holds `in`'s first 512 bytes.
const char* kPrologue = R"(
  .reg .b32 %s, %w, %slot;
  .reg .b64 %g, %p;
  .reg .pred %first;
  mad.lo.u32 %slot, %tx, 13, 5;
  rem.u32 %slot, %slot, 32;
  mov.u32 %s, sm;
  mad.lo.u32 %s, %slot, 16, %s;
  cvt.u64.u32 %g, %s;
  cvta.shared.u64 %g, %g;
  mul.wide.u32 %p, %tx, 16;
  add.s64 %p, %in, %p;
  ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%p];
  mov.u32 %w, sm;
  mad.lo.u32 %w, %tx, 16, %w;
  st.shared.v4.b32 [%w], {%r0, %r1, %r2, %r3};
  bar.sync 0;
)";

const char* kShared = ".shared .align 16 .b8 sm[512];\n";

}  // namespace

TEST_SUITE("ptx.ldmatrix") {
  TEST_CASE_FIXTURE(PtxTest, "ptx.ldmatrix: x1 x2 x4 with and without trans from scattered rows") {
    for (const unsigned num : {1u, 2u, 4u}) {
      for (const bool trans : {false, true}) {
        for (const bool generic : {false, true}) {
          const std::string insn = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(num) +
                                   (trans ? ".trans" : "") + (generic ? "" : ".shared") + ".b16";
          INFO(insn);
          std::string body = "  .reg .b32 %r<4>;\n" + std::string(kPrologue);
          body += "  " + insn + " {" + mtx::reg_list('r', num) + "}, [" + (generic ? "%g" : "%s") +
                  "];\n  mul.wide.u32 %p, %tx, 16;\n  add.s64 %p, %out, %p;\n";
          for (unsigned j = 0; j < num; ++j) {
            body += "  st.global.b32 [%p+" + std::to_string(4 * j) + "], %r" + std::to_string(j) +
                    ";\n";
          }
          const auto out = run_as<std::uint32_t>(ptxt::kernel(body, kShared), 32 * 4,
                                                 rows_in_slots(num), {}, {32, 1, 1});
          for (unsigned i = 0; i < 32; ++i) {
            for (unsigned j = 0; j < num; ++j) {
              INFO("lane ", i, " register ", j);
              CHECK(out[4 * i + j] == expected(i, j, trans));
            }
          }
        }
      }
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.ldmatrix: stmatrix stores what ldmatrix would load") {
    for (const unsigned num : {1u, 2u, 4u}) {
      for (const bool trans : {false, true}) {
        const std::string insn = "stmatrix.sync.aligned.m8n8.x" + std::to_string(num) +
                                 (trans ? ".trans" : "") + ".shared::cta.b16";
        INFO(insn);
        // Each lane's registers (from `in`, 16 bytes a lane after the 512 of shared memory)
        // go to the row slots; then shared memory is copied out.
        std::string body = "  .reg .b32 %r<4>, %v<4>;\n  .reg .b64 %q;\n" + std::string(kPrologue);
        body += "  mul.wide.u32 %q, %tx, 16;\n  add.s64 %q, %in, %q;\n";
        body += "  ld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%q+512];\n";
        body += "  " + insn + " [%s], {" + mtx::reg_list('v', num) + "};\n  bar.sync 0;\n";
        body += "  ld.shared.v4.b32 {%r0, %r1, %r2, %r3}, [%w];\n";
        body += "  mul.wide.u32 %p, %tx, 16;\n  add.s64 %p, %out, %p;\n";
        body += "  st.global.v4.b32 [%p], {%r0, %r1, %r2, %r3};\n";
        std::vector<std::uint32_t> in(128 + 32 * 4, 0);  // shared memory starts zero
        for (unsigned i = 0; i < 32; ++i) {
          for (unsigned j = 0; j < num; ++j) in[128 + 4 * i + j] = expected(i, j, trans);
        }
        const auto out =
            run_as<std::uint16_t>(ptxt::kernel(body, kShared), 32 * 8, in, {}, {32, 1, 1});
        CHECK(out == rows_in_slots(num));
      }
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.ldmatrix: movmatrix transposes an 8x8 matrix across the warp") {
    const std::string body = R"(
  .reg .b32 %a, %d;
  .reg .b64 %p;
  mul.wide.u32 %p, %tx, 4;
  add.s64 %p, %in, %p;
  ld.global.b32 %a, [%p];
  movmatrix.sync.aligned.m8n8.trans.b16 %d, %a;
  mul.wide.u32 %p, %tx, 4;
  add.s64 %p, %out, %p;
  st.global.b32 [%p], %d;
)";
    std::vector<std::uint32_t> in(32);
    for (unsigned i = 0; i < 32; ++i) in[i] = expected(i, 2, false);
    const auto out = run_as<std::uint32_t>(ptxt::kernel(body), 32, in, {}, {32, 1, 1});
    for (unsigned i = 0; i < 32; ++i) {
      INFO("lane ", i);
      CHECK(out[i] == expected(i, 2, true));
    }
  }

  // The pattern of hand-written tensor-core kernels: a 16x16 A tile in shared memory, lane i
  // giving the address of row i % 16 at column 8 (i / 16); ldmatrix.x4 then holds exactly
  // mma.m16n8k16's A fragment (ISA: a0,a1 row g; a2,a3 row g+8; a4..a7 columns + 8), and
  // ldmatrix.x2.trans of a row-major 16x8 B tile its B fragment.
  TEST_CASE_FIXTURE(PtxTest, "ptx.ldmatrix: ldmatrix.x4 and .x2.trans feed mma.m16n8k16") {
    const std::string body = R"(
  .reg .b32 %s, %sb, %r<8>, %a<4>, %b<2>, %w;
  .reg .f32 %d<4>;
  .reg .b64 %p;
  mul.wide.u32 %p, %tx, 16;
  add.s64 %p, %in, %p;
  ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%p];
  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%p+512];
  mov.u32 %w, sa;
  mad.lo.u32 %w, %tx, 16, %w;
  st.shared.v4.b32 [%w], {%r0, %r1, %r2, %r3};
  mov.u32 %w, sbm;
  mad.lo.u32 %w, %tx, 16, %w;
  st.shared.v4.b32 [%w], {%r4, %r5, %r6, %r7};
  bar.sync 0;
  and.b32 %r0, %tx, 15;
  shr.u32 %r1, %tx, 4;
  mov.u32 %s, sa;
  mad.lo.u32 %s, %r0, 32, %s;
  mad.lo.u32 %s, %r1, 16, %s;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%a0, %a1, %a2, %a3}, [%s];
  mov.u32 %sb, sbm;
  mad.lo.u32 %sb, %r0, 16, %sb;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%b0, %b1}, [%sb];
  mov.f32 %d0, 0f00000000;
  mov.f32 %d1, 0f00000000;
  mov.f32 %d2, 0f00000000;
  mov.f32 %d3, 0f00000000;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3},
      {%b0, %b1}, {%d0, %d1, %d2, %d3};
  mul.wide.u32 %p, %tx, 16;
  add.s64 %p, %out, %p;
  st.global.v4.f32 [%p], {%d0, %d1, %d2, %d3};
)";
    // A (16x16) row-major in the first 512 bytes, B (16x8) row-major in the next 256.
    mtx::Lcg rng(7);
    std::vector<double> a(256), b(128);
    for (double& x : a) x = rng.next(-4, 4) / 2.0;
    for (double& x : b) x = rng.next(-4, 4) / 2.0;
    std::vector<std::uint16_t> in(256 + 256, 0);
    for (unsigned i = 0; i < 256; ++i) in[i] = mtx::half_bits(a[i]);
    for (unsigned i = 0; i < 128; ++i) in[256 + i] = mtx::half_bits(b[i]);
    const auto out = run_as<float>(
        ptxt::kernel(body, ".shared .align 16 .b8 sa[512];\n.shared .align 16 .b8 sbm[512];\n"),
        32 * 4, in, {}, {32, 1, 1});
    for (unsigned lane = 0; lane < 32; ++lane) {
      for (unsigned i = 0; i < 4; ++i) {
        // c_i: row g (+8 for i >= 2), column 2t + (i & 1)
        const unsigned r = lane / 4 + (i >= 2 ? 8 : 0), c = 2 * (lane % 4) + (i & 1);
        double want = 0;
        for (unsigned k = 0; k < 16; ++k) want += a[r * 16 + k] * b[k * 8 + c];
        INFO("D[", r, "][", c, "]");
        CHECK(out[lane * 4 + i] == want);
      }
    }
  }
}
