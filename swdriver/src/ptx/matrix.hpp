// The value semantics of the warp-level matrix instructions (mma, wmma; program.hpp's
// MatrixForm), free of the machine that gathers the lanes: which element of which matrix each
// register of each lane's fragment holds, how elements are packed into registers, and the
// multiply-accumulate arithmetic. exec_matrix.cpp moves the values between registers, memory
// and these functions.
//
// mma fragments follow the PTX ISA's "Matrix Fragments for mma.mMnNkK" tables. wmma fragments
// are unspecified by the ISA (only load, mma and store must agree): here element i of lane l of
// a fragment of an R x C matrix holds the element at row-major index l * N + (i mod N), where
// N = R * C / 32; the .f16 multiplicand fragments of 16 elements hold their N elements twice
// (wmma.mma reads the first N).
//
// Numerics: .f16, .bf16 and .tf32 products are exact in f32 and are added to C's element in
// order k = 0, 1, ..., each addition rounded to the nearest f32; an .f16 D is that sum rounded
// to the nearest .f16. A .tf32 operand is truncated to its 10 mantissa bits (the low 13 bits of
// the register are ignored). .f64 is a chain of fused multiply-adds in the instruction's
// rounding mode. Integers are summed exactly, then wrap to 32 bits or, with .satfinite, clamp.
#pragma once

#include <cstdint>

#include "ptx/program.hpp"

namespace swcu::ptx {

/// The operands of mma and wmma.mma, and the matrix a wmma.load or wmma.store moves.
enum class MatrixRole : std::uint8_t { a, b, c, d };

/// What one lane holds of a matrix operand.
struct Fragment {
  unsigned rows = 0, cols = 0;  ///< the operand's matrix (mma.m8n8k4.f16: its four, see coord)
  Type elem = Type::none;       ///< element type
  unsigned bits = 0;            ///< element width: 8, 16, 32 or 64
  unsigned per_reg = 1;         ///< elements packed in one register (low bits first)
  unsigned regs = 0;            ///< registers per lane; 0: the form has no such operand
  unsigned elems = 0;           ///< elements per lane (regs * per_reg)
  unsigned distinct = 0;        ///< of which the first `distinct` are read by an mma
};

/// The fragment of `role` in an mma or wmma form (for wmma.load/wmma.store: `f.matrix`'s).
[[nodiscard]] Fragment fragment(const MatrixForm& f, MatrixRole role) noexcept;

/// A matrix element's position.
struct Coord {
  unsigned row = 0, col = 0;
};

/// Where element `i` of lane `lane`'s fragment of `role` lies in its matrix. mma.m8n8k4 with
/// .f16 runs four independent 8x8x4 products, one per quad-pair q (lanes 4q..4q+3 and
/// 4q+16..4q+19): their A matrices are stacked into a 32x4 A, their B matrices side by side in
/// a 4x32 B, and their C and D on the diagonal of a 32x32 C.
[[nodiscard]] Coord coord(const MatrixForm& f, MatrixRole role, unsigned lane, unsigned i) noexcept;

/// Element `i`'s bits in a fragment's registers.
[[nodiscard]] std::uint64_t get_element(const Fragment& fr, const std::uint64_t* regs,
                                        unsigned i) noexcept;
/// Sets element `i`'s bits in a fragment's registers.
void set_element(const Fragment& fr, std::uint64_t* regs, unsigned i, std::uint64_t bits) noexcept;

/// The value of an element of type `t` (.f16, .bf16, .tf32 truncated, .f32, .f64, .s8, .u8,
/// .s32); integers are exact in a double.
[[nodiscard]] double element_value(Type t, std::uint64_t bits) noexcept;

/// One element of D = A * B + C: `c` plus the sum over `k` of `a[j] * b[j]` with the
/// precision of `f`'s types (see the top of this file); the bits of an element of f.dtype.
[[nodiscard]] std::uint64_t multiply_accumulate(const MatrixForm& f, const double* a,
                                                const double* b, unsigned k, double c) noexcept;

}  // namespace swcu::ptx
