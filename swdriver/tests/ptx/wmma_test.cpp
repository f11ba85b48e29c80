// wmma.load, wmma.mma and wmma.store in the shapes and types nvcc emits for nvcuda::wmma
// (PTX ISA 9.0 "Warp Level Matrix Multiply-Accumulate Instructions"): each kernel loads A, B
// and C from memory in a given layout and stride, multiplies, stores D, and D must equal a host
// GEMM. The ISA leaves the fragments' contents unspecified; the layout the software driver
// documents (docs/software-driver.md, src/ptx/matrix.hpp) has its own test.
#include <cstdint>
#include <string>
#include <vector>

#include "matrix_support.hpp"

namespace {

using mtx::E;
using mtx::Matrix;
using ptxt::PtxTest;

struct WmmaCase {
  unsigned m, n, k;
  E a, b, c, d;
  bool a_row, b_row, c_row, d_row;
  const char* mma_types;  // the type suffixes of wmma.mma
};

// Registers per lane of a wmma fragment (PTX ISA "Matrix Fragments for WMMA").
unsigned frag_regs(E e, unsigned rows, unsigned cols, bool multiplicand) {
  if (e == E::f16 && multiplicand) return 8;
  const unsigned per_lane = rows * cols / 32;
  return mtx::bits(e) >= 32 ? per_lane : per_lane * mtx::bits(e) / 32;
}

std::string shape(const WmmaCase& c) {
  return ".m" + std::to_string(c.m) + "n" + std::to_string(c.n) + "k" + std::to_string(c.k);
}

unsigned bytes(E e) { return mtx::bits(e) / 8; }

// Extra elements between rows (columns): keeps every row 16-byte aligned.
unsigned pad(E e) { return 16 / bytes(e); }

struct Placed {
  unsigned rows, cols;
  E type;
  bool row;
  unsigned offset;  // in bytes
  [[nodiscard]] unsigned lead() const { return row ? cols : rows; }
  [[nodiscard]] unsigned stride() const { return lead() + pad(type); }
  [[nodiscard]] unsigned size() const { return (row ? rows : cols) * stride() * bytes(type); }
  [[nodiscard]] std::size_t index(unsigned r, unsigned c) const {
    return offset / bytes(type) +
           (row ? std::size_t{r} * stride() + c : std::size_t{c} * stride() + r);
  }
};

// Stores a matrix into a byte buffer at its place.
void put(std::vector<unsigned char>& buf, const Placed& p, const Matrix& m) {
  for (unsigned r = 0; r < p.rows; ++r) {
    for (unsigned c = 0; c < p.cols; ++c) {
      const std::uint64_t b = mtx::encode(p.type, m.at(r, c));
      std::memcpy(&buf[p.index(r, c) * bytes(p.type)], &b, bytes(p.type));
    }
  }
}

Matrix get(const std::vector<unsigned char>& buf, const Placed& p) {
  Matrix m(p.rows, p.cols);
  for (unsigned r = 0; r < p.rows; ++r) {
    for (unsigned c = 0; c < p.cols; ++c) {
      std::uint64_t b = 0;
      std::memcpy(&b, &buf[p.index(r, c) * bytes(p.type)], bytes(p.type));
      m.at(r, c) = mtx::decode(p.type, b);
    }
  }
  return m;
}

unsigned align32(unsigned v) { return (v + 31) / 32 * 32; }

std::string mem_layout(bool row) { return row ? ".row" : ".col"; }

std::string reg_decl(char x, E e, unsigned n) {
  return "  .reg " +
         std::string(mtx::bits(e) == 64 ? ".f64"
                     : e == E::f32      ? ".f32"
                                        : ".b32") +
         " %" + x + "<" + std::to_string(n) + ">;\n";
}

struct WmmaTest : PtxTest {
  void check_case(const WmmaCase& c, std::uint64_t seed) {
    const Placed pa{c.m, c.k, c.a, c.a_row, 0};
    const Placed pb{c.k, c.n, c.b, c.b_row, align32(pa.size())};
    const Placed pc{c.m, c.n, c.c, c.c_row, align32(pb.offset + pb.size())};
    const Placed pd{c.m, c.n, c.d, c.d_row, 0};
    const unsigned ra = frag_regs(c.a, c.m, c.k, true), rb = frag_regs(c.b, c.k, c.n, true);
    const unsigned rc = frag_regs(c.c, c.m, c.n, false), rd = frag_regs(c.d, c.m, c.n, false);
    const std::string s = shape(c);
    // A's stride from a register, B's and C's as numbers (fragment_dump: the default stride).
    std::string body = reg_decl('a', c.a, ra) + reg_decl('b', c.b, rb) + reg_decl('c', c.c, rc) +
                       reg_decl('d', c.d, rd) + "  .reg .b32 %sa;\n  .reg .b64 %pb, %pc;\n";
    body += "  mov.u32 %sa, " + std::to_string(pa.stride()) + ";\n";
    body += "  add.s64 %pb, %in, " + std::to_string(pb.offset) + ";\n";
    body += "  add.s64 %pc, %in, " + std::to_string(pc.offset) + ";\n";
    body += "  wmma.load.a.sync.aligned" + mem_layout(c.a_row) + s + ".global" + mtx::suffix(c.a) +
            " {" + mtx::reg_list('a', ra) + "}, [%in], %sa;\n";
    body += "  wmma.load.b.sync.aligned" + mem_layout(c.b_row) + s + ".global" + mtx::suffix(c.b) +
            " {" + mtx::reg_list('b', rb) + "}, [%pb], " + std::to_string(pb.stride()) + ";\n";
    body += "  wmma.load.c.sync.aligned" + mem_layout(c.c_row) + s + mtx::suffix(c.c) + " {" +
            mtx::reg_list('c', rc) + "}, [%pc], " + std::to_string(pc.stride()) + ";\n";
    body += "  wmma.mma.sync.aligned" + mem_layout(c.a_row) + mem_layout(c.b_row) + s +
            c.mma_types + " {" + mtx::reg_list('d', rd) + "}, {" + mtx::reg_list('a', ra) + "}, {" +
            mtx::reg_list('b', rb) + "}, {" + mtx::reg_list('c', rc) + "};\n";
    body += "  wmma.store.d.sync.aligned" + mem_layout(c.d_row) + s + ".global" + mtx::suffix(c.d) +
            " [%out], {" + mtx::reg_list('d', rd) + "}, " + std::to_string(pd.stride()) + ";\n";
    mtx::Lcg rng(seed);
    const auto fill = [&](Matrix& m, E e) {
      for (double& x : m.v) {
        x = e == E::s8    ? rng.next(-128, 127)
            : e == E::u8  ? rng.next(0, 255)
            : e == E::s32 ? rng.next(-1000000, 1000000)
                          : rng.next(-4, 4) / 2.0;
      }
    };
    Matrix a(c.m, c.k), b(c.k, c.n), cm(c.m, c.n);
    fill(a, c.a);
    fill(b, c.b);
    fill(cm, c.c);
    std::vector<unsigned char> in(pc.offset + pc.size());
    put(in, pa, a);
    put(in, pb, b);
    put(in, pc, cm);
    const std::vector<unsigned char> out = run(ptxt::kernel(body), pd.size(), in, {}, {32, 1, 1});
    const Matrix d = get(out, pd);
    for (unsigned i = 0; i < c.m; ++i) {
      for (unsigned j = 0; j < c.n; ++j) {
        double want = cm.at(i, j);
        for (unsigned kk = 0; kk < c.k; ++kk) want += a.at(i, kk) * b.at(kk, j);
        INFO("D[", i, "][", j, "]");
        CHECK(d.at(i, j) == want);
      }
    }
  }
};

// A kernel of one wmma.load (with `load`'s text) whose fragment each lane stores, 8 bytes per
// register, to `out`.
std::string fragment_dump(const std::string& load, unsigned regs) {
  std::string body = "  .reg .b32 %f<" + std::to_string(regs) + ">;\n  .reg .b64 %ob;\n" +
                     "  mul.wide.u32 %ob, %tx, " + std::to_string(8 * regs) +
                     ";\n  add.s64 %ob, %out, %ob;\n  " + load + " {" + mtx::reg_list('f', regs) +
                     "}, [%in];\n";
  for (unsigned i = 0; i < regs; ++i) {
    body += "  st.global.b32 [%ob+" + std::to_string(8 * i) + "], %f" + std::to_string(i) + ";\n";
  }
  return ptxt::kernel(body);
}

}  // namespace

TEST_SUITE("ptx.wmma") {
  TEST_CASE_FIXTURE(WmmaTest,
                    "ptx.wmma: load, mma and store give a host GEMM in every shape and type") {
    const WmmaCase cases[] = {
        // .f16 multiplicands, .f32 / .f16 accumulators, every layout
        {16, 16, 16, E::f16, E::f16, E::f32, E::f32, true, false, true, true, ".f32.f32"},
        {16, 16, 16, E::f16, E::f16, E::f32, E::f32, false, true, false, false, ".f32.f32"},
        {16, 16, 16, E::f16, E::f16, E::f16, E::f16, true, true, true, false, ".f16.f16"},
        {16, 16, 16, E::f16, E::f16, E::f16, E::f32, true, false, false, true, ".f32.f16"},
        {16, 16, 16, E::f16, E::f16, E::f32, E::f16, false, false, true, true, ".f16.f32"},
        {32, 8, 16, E::f16, E::f16, E::f32, E::f32, true, false, true, true, ".f32.f32"},
        {32, 8, 16, E::f16, E::f16, E::f16, E::f16, false, true, true, false, ".f16.f16"},
        {8, 32, 16, E::f16, E::f16, E::f32, E::f32, true, true, false, true, ".f32.f32"},
        {8, 32, 16, E::f16, E::f16, E::f16, E::f16, false, false, true, true, ".f16.f16"},
        // .bf16
        {16, 16, 16, E::bf16, E::bf16, E::f32, E::f32, true, false, true, true,
         ".f32.bf16.bf16.f32"},
        {32, 8, 16, E::bf16, E::bf16, E::f32, E::f32, false, true, true, false,
         ".f32.bf16.bf16.f32"},
        {8, 32, 16, E::bf16, E::bf16, E::f32, E::f32, true, true, true, true, ".f32.bf16.bf16.f32"},
        // .tf32
        {16, 16, 8, E::tf32, E::tf32, E::f32, E::f32, true, false, true, true,
         ".f32.tf32.tf32.f32"},
        {16, 16, 8, E::tf32, E::tf32, E::f32, E::f32, false, true, false, false,
         ".f32.tf32.tf32.f32"},
        // .s8 / .u8
        {16, 16, 16, E::s8, E::s8, E::s32, E::s32, true, false, true, true, ".s32.s8.s8.s32"},
        {32, 8, 16, E::u8, E::u8, E::s32, E::s32, true, false, false, true, ".s32.u8.u8.s32"},
        {8, 32, 16, E::s8, E::s8, E::s32, E::s32, false, true, true, false,
         ".s32.s8.s8.s32.satfinite"},
        {16, 16, 16, E::u8, E::u8, E::s32, E::s32, false, false, true, true, ".s32.u8.u8.s32"},
        // .f64
        {8, 8, 4, E::f64, E::f64, E::f64, E::f64, true, false, true, true, ".f64.f64.f64.f64"},
        {8, 8, 4, E::f64, E::f64, E::f64, E::f64, false, true, false, true, ".f64.f64.f64.f64.rn"},
    };
    std::uint64_t seed = 100;
    for (const WmmaCase& c : cases) {
      INFO("wmma", shape(c), " ", c.mma_types, " a", mem_layout(c.a_row), " b", mem_layout(c.b_row),
           " c", mem_layout(c.c_row), " d", mem_layout(c.d_row));
      check_case(c, seed++);
    }
  }

  // The layout the software driver documents (the ISA leaves it unspecified): element i of lane
  // l holds row-major element 8 l + i of a 16x16 accumulator, whatever the memory layout; the
  // .f16 A fragment's 16 halves hold its 8 elements twice.
  TEST_CASE_FIXTURE(WmmaTest, "ptx.wmma: fragments hold consecutive row-major elements per lane") {
    std::vector<float> c(256);
    for (unsigned i = 0; i < 256; ++i) c[i] = static_cast<float>(i);
    for (const bool row : {true, false}) {
      std::vector<float> stored(256);
      for (unsigned r = 0; r < 16; ++r) {
        for (unsigned col = 0; col < 16; ++col)
          stored[row ? r * 16 + col : col * 16 + r] = c[r * 16 + col];
      }
      const auto out =
          run_as<std::uint64_t>(fragment_dump(std::string("wmma.load.c.sync.aligned") +
                                                  (row ? ".row" : ".col") + ".m16n16k16.global.f32",
                                              8),
                                32 * 8, stored, {}, {32, 1, 1});
      for (unsigned lane = 0; lane < 32; ++lane) {
        for (unsigned i = 0; i < 8; ++i) {
          INFO("lane ", lane, " element ", i, row ? " row-major" : " column-major");
          CHECK(ptxt::as_f32(static_cast<std::uint32_t>(out[lane * 8 + i])) ==
                static_cast<float>(8 * lane + i));
        }
      }
    }
    std::vector<std::uint16_t> halves(256);
    for (unsigned i = 0; i < 256; ++i) halves[i] = mtx::half_bits(i);
    const auto out =
        run_as<std::uint64_t>(fragment_dump("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", 8),
                              32 * 8, halves, {}, {32, 1, 1});
    for (unsigned lane = 0; lane < 32; ++lane) {
      for (unsigned i = 0; i < 16; ++i) {
        const auto reg = static_cast<std::uint32_t>(out[lane * 8 + i / 2]);
        const auto h = static_cast<std::uint16_t>(reg >> (16 * (i % 2)));
        INFO("lane ", lane, " element ", i);
        CHECK(mtx::half_value(h) == 8.0 * lane + i % 8);
      }
    }
  }
}
