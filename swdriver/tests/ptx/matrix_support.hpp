// Support for the warp-level matrix instruction tests (mma_test.cpp, wmma_test.cpp,
// ldmatrix_test.cpp): element encodings on the host (.f16, .bf16, .tf32, .f32, .f64, .s8, .u8,
// .s32), host matrices, and packing of fragment registers by a layout given as a function.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ptx_support.hpp"

namespace mtx {

/// Element types of matrix fragments.
enum class E { f16, bf16, tf32, f32, f64, s8, u8, s32 };

/// Width in bits.
[[nodiscard]] inline unsigned bits(E e) {
  switch (e) {
    case E::f16:
    case E::bf16: return 16;
    case E::s8:
    case E::u8: return 8;
    case E::f64: return 64;
    default: return 32;
  }
}

/// The PTX suffix (".f16").
[[nodiscard]] inline std::string suffix(E e) {
  switch (e) {
    case E::f16: return ".f16";
    case E::bf16: return ".bf16";
    case E::tf32: return ".tf32";
    case E::f32: return ".f32";
    case E::f64: return ".f64";
    case E::s8: return ".s8";
    case E::u8: return ".u8";
    case E::s32: return ".s32";
  }
  return "";
}

/// IEEE binary16 bits of `v`, rounded to nearest even (normal, subnormal, zero, infinity).
[[nodiscard]] inline std::uint16_t half_bits(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7fff;
  if (a >= 65520.0) return sign | 0x7c00;
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exp = e - 1;    // a = 1.m * 2^exp
  if (exp < -14) exp = -14;
  const double q = std::nearbyint(std::ldexp(a, 10 - exp));  // significand in units of 2^(exp-10)
  auto sig = static_cast<std::uint32_t>(q);
  if (sig >= 2048) {
    sig >>= 1;
    ++exp;
  }
  if (sig < 1024) return static_cast<std::uint16_t>(sign | sig);  // subnormal or zero
  if (exp > 15) return sign | 0x7c00;
  return static_cast<std::uint16_t>(sign | ((exp + 15) << 10) | (sig - 1024));
}

/// The value of binary16 bits.
[[nodiscard]] inline double half_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const double m = h & 0x3ff;
  double v = e == 0    ? std::ldexp(m, -24)
             : e == 31 ? (m != 0 ? NAN : INFINITY)
                       : std::ldexp(m + 1024, e - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

/// The bits of `v` (exactly representable in the type) as an element of type `e`.
[[nodiscard]] inline std::uint64_t encode(E e, double v) {
  switch (e) {
    case E::f16: return half_bits(v);
    case E::bf16: return std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16;
    case E::tf32:
    case E::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case E::f64: return std::bit_cast<std::uint64_t>(v);
    case E::s8: return static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
    case E::u8: return static_cast<std::uint8_t>(v);
    case E::s32: return static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
  }
  return 0;
}

/// The value of element bits of type `e`.
[[nodiscard]] inline double decode(E e, std::uint64_t b) {
  switch (e) {
    case E::f16: return half_value(static_cast<std::uint16_t>(b));
    case E::bf16: return std::bit_cast<float>(static_cast<std::uint32_t>(b << 16));
    case E::tf32:
    case E::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(b));
    case E::f64: return std::bit_cast<double>(b);
    case E::s8: return static_cast<std::int8_t>(b);
    case E::u8: return static_cast<double>(b & 0xff);
    case E::s32: return static_cast<std::int32_t>(b);
  }
  return 0;
}

/// A dense host matrix of values.
struct Matrix {
  unsigned rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(unsigned r, unsigned c) : rows(r), cols(c), v(std::size_t{r} * c) {}
  double& at(unsigned r, unsigned c) { return v[std::size_t{r} * cols + c]; }
  [[nodiscard]] double at(unsigned r, unsigned c) const { return v[std::size_t{r} * cols + c]; }
};

/// Deterministic pseudo-random integers in [lo, hi].
struct Lcg {
  std::uint64_t s;
  explicit Lcg(std::uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  int next(int lo, int hi) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<int>((s >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

/// Where element i of a lane's fragment lies: which of the warp's independent products (0 but
/// for mma.m8n8k4 .f16), its row and its column.
struct At {
  unsigned group = 0, row = 0, col = 0;
};
using Layout = std::function<At(unsigned lane, unsigned i)>;

/// A fragment operand: element type, elements per lane and their layout.
struct Frag {
  E type = E::f32;
  unsigned elems = 0;
  Layout at;
  /// Registers per lane (elements packed low bits first).
  [[nodiscard]] unsigned regs() const { return bits(type) >= 32 ? elems : elems * bits(type) / 32; }
  [[nodiscard]] unsigned per_reg() const { return bits(type) >= 32 ? 1 : 32 / bits(type); }
};

/// Packs lane `lane`'s fragment of `m[group]` into register values.
[[nodiscard]] inline std::vector<std::uint64_t> pack(const Frag& f, const std::vector<Matrix>& m,
                                                     unsigned lane) {
  std::vector<std::uint64_t> regs(f.regs(), 0);
  const unsigned w = bits(f.type);
  for (unsigned i = 0; i < f.elems; ++i) {
    const At a = f.at(lane, i);
    const std::uint64_t b = encode(f.type, m[a.group].at(a.row, a.col));
    const unsigned shift = (i % f.per_reg()) * w;
    regs[i / f.per_reg()] |= (w == 64 ? b : b & ((std::uint64_t{1} << w) - 1)) << shift;
  }
  return regs;
}

/// Element i of lane `lane`'s fragment from its register values.
[[nodiscard]] inline std::uint64_t element(const Frag& f, const std::uint64_t* regs, unsigned i) {
  const unsigned w = bits(f.type);
  const std::uint64_t r = regs[i / f.per_reg()];
  if (w == 64) return r;
  return (r >> ((i % f.per_reg()) * w)) & ((std::uint64_t{1} << w) - 1);
}

/// "%x0, %x1, ..., %x<n-1>".
[[nodiscard]] inline std::string reg_list(char x, unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i) s += (i ? ", %" : "%") + std::string(1, x) + std::to_string(i);
  return s;
}

}  // namespace mtx
