// Warp-level matrix instructions (exec_machine.hpp): mma, wmma.load/.mma/.store, ldmatrix,
// stmatrix and movmatrix. Like the warp collectives, the lanes meet at the instruction (a lane
// that arrives first waits there); then the warp's fragments are gathered from all 32 lanes'
// registers, computed with matrix.hpp, and scattered back. The ISA leaves these undefined unless
// every lane of the warp executes them together (.sync.aligned); the interpreter faults instead:
// a warp of fewer than 32 threads, a lane that has exited, a guard that differs between lanes,
// wmma lanes that give different addresses or strides.
#include <bit>
#include <string>
#include <vector>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"
#include "ptx/matrix.hpp"

namespace swcu::ptx::detail {
namespace {

constexpr std::uint32_t kWarp = 0xffffffffu;

std::string describe(const MatrixForm& f) {
  std::string s;
  switch (f.kind) {
    case MatrixForm::Kind::mma: s = "mma.sync"; break;
    case MatrixForm::Kind::wmma_load: s = std::string("wmma.load.") + f.matrix; break;
    case MatrixForm::Kind::wmma_store: s = "wmma.store.d"; break;
    case MatrixForm::Kind::wmma_mma: s = "wmma.mma"; break;
    case MatrixForm::Kind::ldmatrix: return "ldmatrix";
    case MatrixForm::Kind::stmatrix: return "stmatrix";
    case MatrixForm::Kind::movmatrix: return "movmatrix";
  }
  return s + " .m" + std::to_string(f.m) + "n" + std::to_string(f.n) + "k" + std::to_string(f.k);
}

std::string lane_list(std::uint32_t mask) {
  std::string s;
  for (std::uint32_t m = mask; m != 0; m &= m - 1) {
    if (!s.empty()) s += ",";
    s += std::to_string(std::countr_zero(m));
  }
  return s;
}

// The register slots of a fragment operand (a braced list, or one register).
std::uint32_t slot(const std::vector<std::uint32_t>& vec_regs, const Operand& o, unsigned e) {
  return o.kind == Operand::Kind::vec ? vec_regs[o.reg + e] : o.reg;
}

}  // namespace

void Machine::read_fragment(Thread& t, const Operand& o, unsigned regs, std::uint64_t* out) const {
  for (unsigned e = 0; e < regs; ++e) out[e] = t.rf[slot(p_.vec_regs, o, e)];
}

void Machine::write_fragment(Thread& t, const Operand& o, unsigned regs, Type elem,
                             const std::uint64_t* in) const {
  for (unsigned e = 0; e < regs; ++e) {
    t.rf[slot(p_.vec_regs, o, e)] = elem == Type::s32 ? normalize(Type::s32, in[e]) : in[e];
  }
}

Machine::Step Machine::matrix(Thread* lanes, std::uint32_t group, std::uint32_t active,
                              const Inst& in, std::uint32_t pc, std::uint32_t w) {
  const MatrixForm& f = p_.matrix_forms[in.form];
  const std::uint32_t n = lanes_of(w);
  if (active == 0) {  // a guard false in every lane here (waiting lanes included): a no-op
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      Thread& t = lanes[std::countr_zero(m)];
      t.state = TState::run;
      t.pc = pc + 1;
    }
    return Step::next;
  }
  cur_ = &lanes[std::countr_zero(group)];
  if (n < 32) {
    fault(Fault::illegal_instruction,
          describe(f) + " needs all 32 threads of a warp, and this warp has " + std::to_string(n) +
              " (the block's size is not a multiple of 32)");
  }
  std::uint32_t exited = 0;
  for (std::uint32_t i = 0; i < 32; ++i) {
    if (lanes[i].state == TState::exited) exited |= 1u << i;
  }
  if (exited != 0) {
    fault(Fault::illegal_instruction,
          describe(f) + " needs all 32 threads of the warp, and lanes " + lane_list(exited) +
              " have exited (.sync.aligned: undefined on a GPU)");
  }
  if (group != kWarp) {  // wait here for the rest of the warp
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      lanes[std::countr_zero(m)].state = TState::sync_wait;
    }
    return Step::rescan;
  }
  if (active != kWarp) {
    fault(Fault::illegal_instruction,
          describe(f) + " with a guard true only in lanes " + lane_list(active) +
              " (.aligned: every lane of the warp must execute it; undefined on a GPU)");
  }
  switch (f.kind) {
    case MatrixForm::Kind::mma:
    case MatrixForm::Kind::wmma_mma: multiply(lanes, in, f); break;
    case MatrixForm::Kind::wmma_load:
    case MatrixForm::Kind::wmma_store: wmma_memory(lanes, in, f); break;
    case MatrixForm::Kind::ldmatrix:
    case MatrixForm::Kind::stmatrix: matrix_rows(lanes, in, f); break;
    case MatrixForm::Kind::movmatrix: transpose(lanes, in); break;
  }
  for (std::uint32_t i = 0; i < 32; ++i) {
    lanes[i].state = TState::run;
    lanes[i].pc = pc + 1;
  }
  return Step::next;
}

// mma and wmma.mma: D = A * B + C over the warp's fragments.
void Machine::multiply(Thread* lanes, const Inst& in, const MatrixForm& f) {
  const Fragment fa = fragment(f, MatrixRole::a), fb = fragment(f, MatrixRole::b);
  const Fragment fc = fragment(f, MatrixRole::c), fd = fragment(f, MatrixRole::d);
  const unsigned k = fa.cols;
  // At most 32x16 (wmma .m32n8k16 A), 16x32 (B) and 32x32 (mma.m8n8k4.f16's four C blocks).
  double a[512], bt[512], c[1024];
  std::uint64_t regs[16];
  for (unsigned lane = 0; lane < 32; ++lane) {
    read_fragment(lanes[lane], in.ops[1], fa.regs, regs);
    for (unsigned i = 0; i < fa.distinct; ++i) {
      const Coord x = coord(f, MatrixRole::a, lane, i);
      a[x.row * k + x.col] = element_value(fa.elem, get_element(fa, regs, i));
    }
    read_fragment(lanes[lane], in.ops[2], fb.regs, regs);
    for (unsigned i = 0; i < fb.distinct; ++i) {
      const Coord x = coord(f, MatrixRole::b, lane, i);
      bt[x.col * k + x.row] = element_value(fb.elem, get_element(fb, regs, i));
    }
    read_fragment(lanes[lane], in.ops[3], fc.regs, regs);
    for (unsigned i = 0; i < fc.distinct; ++i) {
      const Coord x = coord(f, MatrixRole::c, lane, i);
      c[x.row * fc.cols + x.col] = element_value(fc.elem, get_element(fc, regs, i));
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane) {  // D may be A, B or C: written after every read
    std::uint64_t out[16] = {};
    for (unsigned i = 0; i < fd.elems; ++i) {
      const Coord x = coord(f, MatrixRole::d, lane, i);
      set_element(
          fd, out, i,
          multiply_accumulate(f, &a[x.row * k], &bt[x.col * k], k, c[x.row * fc.cols + x.col]));
    }
    write_fragment(lanes[lane], in.ops[0], fd.regs, fd.elem, out);
  }
}

// wmma.load and wmma.store: the fragment's elements from or to memory, row- or column-major,
// with the stride (default: the leading dimension) that every lane gives.
void Machine::wmma_memory(Thread* lanes, const Inst& in, const MatrixForm& f) {
  const bool load = f.kind == MatrixForm::Kind::wmma_load;
  const Fragment fr = fragment(f, MatrixRole::a);  // f.matrix's
  const Operand& ao = in.ops[load ? 1 : 0];
  const Operand& ro = in.ops[load ? 0 : 1];
  const unsigned lead = f.row ? fr.cols : fr.rows;  // elements in a row (column) of the matrix
  const auto base_of = [&](Thread& t) { return address(t, ao); };
  const auto stride_of = [&](Thread& t) {
    return in.nops > 2 ? read(t, in.ops[2]) & 0xffffffffu : std::uint64_t{lead};
  };
  const std::uint64_t base = base_of(lanes[0]);
  const std::uint64_t stride = stride_of(lanes[0]);
  for (unsigned lane = 1; lane < 32; ++lane) {
    if (base_of(lanes[lane]) != base || stride_of(lanes[lane]) != stride) {
      cur_ = &lanes[lane];
      fault(Fault::illegal_instruction,
            describe(f) + ": lane " + std::to_string(lane) + " gives address " +
                hex(base_of(lanes[lane])) + " and stride " +
                std::to_string(stride_of(lanes[lane])) + ", lane 0 " + hex(base) + " and " +
                std::to_string(stride) + " (every lane must give the same p and stride)");
    }
  }
  const unsigned bytes = fr.bits / 8;
  cur_ = &lanes[0];
  if (stride < lead) {
    fault(Fault::illegal_instruction, describe(f) + ": stride " + std::to_string(stride) +
                                          " is less than the matrix's leading dimension " +
                                          std::to_string(lead));
  }
  // Each row (column) starts aligned to the fragment's size in bytes (PTX ISA "Matrix Storage
  // for WMMA"), at most 16: CUDA C++ allows an ldm of 8 halves with .f16's 32-byte fragments.
  const std::uint64_t align =
      std::min<std::uint64_t>(16, std::uint64_t{fr.regs} * (fr.bits == 64 ? 8 : 4));
  const unsigned lines = f.row ? fr.rows : fr.cols;
  for (unsigned r = 0; r < lines; ++r) {
    const std::uint64_t start = base + r * stride * bytes;
    if (start % align != 0) {
      fault(Fault::misaligned,
            describe(f) + ": " + (f.row ? "row " : "column ") + std::to_string(r) + " starts at " +
                hex(start) + ", which is not a multiple of " + std::to_string(align) + " bytes");
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    Thread& t = lanes[lane];
    cur_ = &t;
    std::uint64_t regs[16] = {};
    if (!load) read_fragment(t, ro, fr.regs, regs);
    for (unsigned i = 0; i < (load ? fr.elems : fr.distinct); ++i) {
      const Coord x = coord(f, MatrixRole::a, lane, i);
      const std::uint64_t offset = f.row ? x.row * stride + x.col : x.col * stride + x.row;
      unsigned char* p = resolve(t, in.space, base + offset * bytes, bytes, !load);
      if (load) {
        set_element(fr, regs, i, load_bits(p, bytes));
      } else {
        store_bits(p, bytes, get_element(fr, regs, i));
      }
    }
    if (load) write_fragment(t, ro, fr.regs, fr.elem, regs);
  }
}

// ldmatrix and stmatrix: .num 8x8 matrices of 16-bit elements whose rows are at the addresses
// lanes 0-7 (matrix 0), 8-15, 16-23, 24-31 give; lane i's register j holds row i / 4, columns
// 2 (i % 4) and 2 (i % 4) + 1 of matrix j (.trans: those of its transpose), low half first.
void Machine::matrix_rows(Thread* lanes, const Inst& in, const MatrixForm& f) {
  const bool load = f.kind == MatrixForm::Kind::ldmatrix;
  const Operand& ao = in.ops[load ? 1 : 0];
  const Operand& ro = in.ops[load ? 0 : 1];
  std::uint16_t m[4][8][8] = {};
  unsigned char* rows[4][8] = {};
  for (unsigned j = 0; j < f.num; ++j) {
    for (unsigned r = 0; r < 8; ++r) {
      Thread& t = lanes[8 * j + r];
      cur_ = &t;
      const std::uint64_t a = address(t, ao);
      if (in.space == Space::generic && (a < kSharedWindow || a >= kSharedWindow + kWindowSize)) {
        fault(Fault::illegal_address, describe(f) + ": row address " + hex(a) +
                                          " is not in shared memory (" + describe(f) +
                                          " reads and writes .shared only)");
      }
      rows[j][r] = resolve(t, in.space, a, 16, !load);
      if (load) std::memcpy(m[j][r], rows[j][r], 16);
    }
  }
  for (unsigned i = 0; i < 32; ++i) {
    std::uint64_t regs[4] = {};
    if (!load) read_fragment(lanes[i], ro, f.num, regs);
    const unsigned r = i / 4, c = 2 * (i % 4);
    for (unsigned j = 0; j < f.num; ++j) {
      std::uint16_t* lo = f.trans ? &m[j][c][r] : &m[j][r][c];
      std::uint16_t* hi = f.trans ? &m[j][c + 1][r] : &m[j][r][c + 1];
      if (load) {
        regs[j] = *lo | (std::uint64_t{*hi} << 16);
      } else {
        *lo = static_cast<std::uint16_t>(regs[j]);
        *hi = static_cast<std::uint16_t>(regs[j] >> 16);
      }
    }
    if (load) write_fragment(lanes[i], ro, f.num, Type::b32, regs);
  }
  if (!load) {
    for (unsigned j = 0; j < f.num; ++j) {
      for (unsigned r = 0; r < 8; ++r) std::memcpy(rows[j][r], m[j][r], 16);
    }
  }
}

// movmatrix.sync.aligned.m8n8.trans.b16: the 8x8 matrix whose row i / 4, columns 2 (i % 4) and
// 2 (i % 4) + 1 lane i holds in a, transposed into d in the same layout.
void Machine::transpose(Thread* lanes, const Inst& in) {
  std::uint16_t m[8][8];
  for (unsigned i = 0; i < 32; ++i) {
    const auto v = static_cast<std::uint32_t>(read(lanes[i], in.ops[1]));
    m[i / 4][2 * (i % 4)] = static_cast<std::uint16_t>(v);
    m[i / 4][2 * (i % 4) + 1] = static_cast<std::uint16_t>(v >> 16);
  }
  for (unsigned i = 0; i < 32; ++i) {
    const unsigned r = i / 4, c = 2 * (i % 4);
    write(lanes[i], in.ops[0], m[c][r] | (std::uint64_t{m[c + 1][r]} << 16));
  }
}

}  // namespace swcu::ptx::detail
