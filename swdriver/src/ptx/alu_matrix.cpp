// The warp-level matrix instructions' fragments and arithmetic (matrix.hpp). The mma layouts
// are the PTX ISA 9.0 tables "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"
// through "Matrix Fragments for mma.m16n8k32" (groupID = lane >> 2, threadID_in_group =
// lane % 4). Built with -frounding-math (.f64 mma's directed rounding).
#include <algorithm>
#include <cmath>

#include "ptx/alu_internal.hpp"
#include "ptx/matrix.hpp"

namespace swcu::ptx {
namespace {

using detail::as_f32;
using detail::as_f64;

unsigned bits_of(Type t) noexcept { return type_size(t) * 8; }

bool is_integer_mma(const MatrixForm& f) noexcept {
  return f.atype == Type::s8 || f.atype == Type::u8;
}

// The four 8x8x4 products of mma.m8n8k4.f16 (see coord()).
bool quad_pairs(const MatrixForm& f) noexcept {
  return f.kind == MatrixForm::Kind::mma && f.m == 8 && f.k == 4 && f.atype == Type::f16;
}

Type role_type(const MatrixForm& f, MatrixRole role) noexcept {
  switch (role) {
    case MatrixRole::a: return f.atype;
    case MatrixRole::b: return f.btype;
    case MatrixRole::c: return f.ctype;
    case MatrixRole::d: return f.dtype;
  }
  return Type::none;
}

// The ISA's mma layouts (not m8n8k4.f16). g = groupID, t = threadID_in_group.
Coord mma_coord(const MatrixForm& f, MatrixRole role, unsigned lane, unsigned i) noexcept {
  const unsigned g = lane >> 2, t = lane & 3;
  const Type at = f.atype;
  const bool wide = at == Type::tf32 || at == Type::f64;  // one element per register
  if (role == MatrixRole::c || role == MatrixRole::d) {
    if (f.m == 8) return {g, 2 * t + i};  // m8n8k4.f64, m8n8k16
    return {g + 8 * (i >= 2 ? 1u : 0u), 2 * t + (i & 1)};
  }
  if (role == MatrixRole::a) {
    switch (f.k) {
      case 4:
        if (f.m == 8) return {g, t};  // m8n8k4.f64
        return {g + 8 * i, t};        // m16n8k4
      case 8:
        if (wide) return {g + 8 * (i & 1), t + 4 * (i >> 1)};
        return {g + 8 * (i >> 1), 2 * t + (i & 1)};
      case 16:
        if (f.m == 8) return {g, 4 * t + i};  // m8n8k16
        if (at == Type::f64) return {g + 8 * (i & 1), 4 * (i >> 1) + t};
        if (is_integer_mma(f)) return {g + 8 * (i >> 2), 4 * t + (i & 3)};
        return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
      default:  // 32
        return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
    }
  }
  switch (f.k) {  // B
    case 4: return {t, g};
    case 8:
      if (wide) return {t + 4 * i, g};
      return {2 * t + i, g};
    case 16:
      if (f.m == 8 || is_integer_mma(f)) return {4 * t + i, g};
      if (at == Type::f64) return {t + 4 * i, g};
      return {2 * t + (i & 1) + 8 * (i >> 1), g};
    default:  // 32
      return {4 * t + (i & 3) + 16 * (i >> 2), g};
  }
}

// mma.m8n8k4 with .f16: quad-pair q computes rows 8q.. of C from rows 8q.. of A and columns
// 8q.. of B; within it the ISA's tables ("low" lanes 0-15, "high" lanes 16-31).
Coord quad_pair_coord(const MatrixForm& f, MatrixRole role, unsigned lane, unsigned i) noexcept {
  const unsigned q = (lane >> 2) & 3, r = lane & 3, hi = lane >= 16 ? 4 : 0, base = 8 * q;
  switch (role) {
    case MatrixRole::a: return f.a_row ? Coord{base + r + hi, i} : Coord{base + i + hi, r};
    case MatrixRole::b: return f.b_row ? Coord{r, base + i + hi} : Coord{i, base + r + hi};
    default: {
      const Type t = role == MatrixRole::c ? f.ctype : f.dtype;
      if (t == Type::f16) return {base + r + hi, base + i};
      return {base + (lane & 1) + (i & 2) + hi, base + (i & 4) + (lane & 2) + (i & 1)};
    }
  }
}

}  // namespace

Fragment fragment(const MatrixForm& f, MatrixRole role) noexcept {
  Fragment fr;
  if (f.kind == MatrixForm::Kind::wmma_load || f.kind == MatrixForm::Kind::wmma_store) {
    role = f.matrix == 'a'   ? MatrixRole::a
           : f.matrix == 'b' ? MatrixRole::b
           : f.matrix == 'c' ? MatrixRole::c
                             : MatrixRole::d;
  }
  fr.elem = role_type(f, role);
  fr.bits = bits_of(fr.elem);
  if (fr.bits == 0) return fr;
  fr.per_reg = fr.bits >= 32 ? 1 : 32 / fr.bits;
  switch (role) {
    case MatrixRole::a:
      fr.rows = f.m;
      fr.cols = f.k;
      break;
    case MatrixRole::b:
      fr.rows = f.k;
      fr.cols = f.n;
      break;
    default:
      fr.rows = f.m;
      fr.cols = f.n;
      break;
  }
  if (quad_pairs(f)) {
    // 4 elements of A and B, 8 of C and D per lane, over four 8x8x4 products
    fr.distinct = role == MatrixRole::a || role == MatrixRole::b ? 4 : 8;
    if (role == MatrixRole::a) fr.rows = 32;
    if (role == MatrixRole::b) fr.cols = 32;
    if (role == MatrixRole::c || role == MatrixRole::d) fr.rows = fr.cols = 32;
  } else {
    fr.distinct = fr.rows * fr.cols / 32;
  }
  fr.elems = fr.distinct;
  const bool wmma = f.kind != MatrixForm::Kind::mma;
  if (wmma && fr.elem == Type::f16 && (role == MatrixRole::a || role == MatrixRole::b)) {
    fr.elems = 16;  // "a vector expression of eight .f16x2 registers" for every shape
  }
  fr.regs = fr.elems / fr.per_reg;
  return fr;
}

Coord coord(const MatrixForm& f, MatrixRole role, unsigned lane, unsigned i) noexcept {
  if (f.kind == MatrixForm::Kind::mma) {
    return quad_pairs(f) ? quad_pair_coord(f, role, lane, i) : mma_coord(f, role, lane, i);
  }
  const Fragment fr = fragment(f, role);
  const unsigned index = lane * fr.distinct + i % fr.distinct;
  return {index / fr.cols, index % fr.cols};
}

std::uint64_t get_element(const Fragment& fr, const std::uint64_t* regs, unsigned i) noexcept {
  const std::uint64_t r = regs[i / fr.per_reg];
  if (fr.bits >= 32) return fr.bits == 64 ? r : r & 0xffffffffu;
  const unsigned shift = (i % fr.per_reg) * fr.bits;
  return (r >> shift) & detail::mask_of(fr.bits);
}

void set_element(const Fragment& fr, std::uint64_t* regs, unsigned i, std::uint64_t bits) noexcept {
  std::uint64_t& r = regs[i / fr.per_reg];
  if (fr.bits >= 32) {
    r = fr.bits == 64 ? bits : bits & 0xffffffffu;
    return;
  }
  const unsigned shift = (i % fr.per_reg) * fr.bits;
  const std::uint64_t m = detail::mask_of(fr.bits) << shift;
  r = ((r & ~m) | ((bits << shift) & m)) & 0xffffffffu;
}

double element_value(Type t, std::uint64_t bits) noexcept {
  switch (t) {
    case Type::f16: return detail::fdecode(detail::FKind::f16, bits, false);
    case Type::bf16: return detail::fdecode(detail::FKind::bf16, bits, false);
    case Type::tf32: {
      const float v = as_f32(bits);
      if (std::isnan(v)) return v;
      return as_f32(bits & 0xffffe000u);  // 1 sign, 8 exponent and 10 mantissa bits
    }
    case Type::f32: return as_f32(bits);
    case Type::f64: return as_f64(bits);
    case Type::s8: return static_cast<std::int8_t>(bits);
    case Type::u8: return static_cast<double>(bits & 0xff);
    case Type::s32: return static_cast<std::int32_t>(bits);
    default: return 0;
  }
}

std::uint64_t multiply_accumulate(const MatrixForm& f, const double* a, const double* b, unsigned k,
                                  double c) noexcept {
  if (is_integer_mma(f)) {
    double sum = c;  // exact: |products| <= 2^16, at most 32 of them, c a 32-bit integer
    for (unsigned j = 0; j < k; ++j) sum += a[j] * b[j];
    auto v = static_cast<std::int64_t>(sum);
    if (f.satfinite) {
      v = std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX);
    }
    return normalize(Type::s32, static_cast<std::uint64_t>(v));
  }
  if (f.atype == Type::f64) {
    const double r = detail::with_round(f.round, [&] {
      double acc = c;
      for (unsigned j = 0; j < k; ++j) acc = std::fma(a[j], b[j], acc);
      return acc;
    });
    return std::isnan(r) ? detail::kCanonicalNan64 : detail::bits(r);
  }
  // .f16, .bf16, .tf32: each product is exact in f32; the sum is rounded at every addition.
  auto acc = static_cast<float>(c);
  for (unsigned j = 0; j < k; ++j) {
    const float p = static_cast<float>(a[j]) * static_cast<float>(b[j]);
    acc = acc + p;
  }
  if (f.dtype == Type::f16) return detail::fencode(detail::FKind::f16, acc, Round::rn, 0);
  return std::isnan(acc) ? detail::kCanonicalNan32 : detail::bits(acc);
}

}  // namespace swcu::ptx
