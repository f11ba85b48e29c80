// Shared by the ALU's files (alu.cpp, alu_float_formats.cpp, alu_float.cpp, alu_integer.cpp,
// alu_simd.cpp, alu_convert.cpp), not part of the interpreter's interface: register bits as
// values, the float formats' decoding and rounding, and each family's compute function. Every
// file that includes it is built with -frounding-math (with_round switches the host's mode).
#pragma once

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>

#include "ptx/alu.hpp"

namespace swcu::ptx::detail {

__extension__ using i128 = __int128;
__extension__ using u128 = unsigned __int128;

inline constexpr std::uint32_t kCanonicalNan32 = 0x7fffffffu;
inline constexpr std::uint64_t kCanonicalNan64 = 0x7fffffffffffffffull;
inline constexpr std::uint16_t kCanonicalNan16 = 0x7fffu;

inline float as_f32(std::uint64_t v) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}
inline double as_f64(std::uint64_t v) noexcept { return std::bit_cast<double>(v); }
inline std::uint64_t bits(float f) noexcept { return std::bit_cast<std::uint32_t>(f); }
inline std::uint64_t bits(double d) noexcept { return std::bit_cast<std::uint64_t>(d); }

inline unsigned width(Type t) noexcept { return type_size(t) * 8; }

inline std::uint64_t mask_of(unsigned w) noexcept { return w >= 64 ? ~0ull : (1ull << w) - 1; }

inline std::int64_t sext(std::uint64_t v, unsigned w) noexcept {
  if (w >= 64) return static_cast<std::int64_t>(v);
  const std::uint64_t m = 1ull << (w - 1);
  v &= mask_of(w);
  return static_cast<std::int64_t>((v ^ m) - m);
}

// ---- rounding to narrow binary formats (alu_float_formats.cpp)

/// Rounds `x` (any double) to a binary format with `p` significand bits and `ebits` exponent
/// bits, in mode `r`; returns the format's bits. `satfinite`: overflow gives the largest finite.
std::uint64_t round_binary(double x, int p, int ebits, Round r, bool satfinite = false);

/// Rounds to f32 bits in mode r.
std::uint64_t to_f32(double x, Round r);

/// Runs `f` with the host rounding mode set for `r`.
template <class F>
auto with_round(Round r, F f) {
  int mode = FE_TONEAREST;
  switch (r) {
    case Round::rz:
    case Round::rzi: mode = FE_TOWARDZERO; break;
    case Round::rm:
    case Round::rmi: mode = FE_DOWNWARD; break;
    case Round::rp:
    case Round::rpi: mode = FE_UPWARD; break;
    default: return f();
  }
  const int old = std::fegetround();
  std::fesetround(mode);
  const auto v = f();
  std::fesetround(old);
  return v;
}

inline bool subnormal32(float f) noexcept { return std::fpclassify(f) == FP_SUBNORMAL; }
inline float ftz32(float f) noexcept { return subnormal32(f) ? std::copysign(0.0f, f) : f; }
inline double ftz64(double d) noexcept {
  return std::fpclassify(d) == FP_SUBNORMAL ? std::copysign(0.0, d) : d;
}

/// Final f32 result: canonical NaN, .ftz and .sat.
inline std::uint64_t finish32(float r, std::uint32_t flags) noexcept {
  if (std::isnan(r)) return (flags & kSat) ? 0 : kCanonicalNan32;
  if (flags & kFtz) r = ftz32(r);
  if (flags & kSat) r = r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
  if ((flags & kSat) && r == 0.0f) r = 0.0f;  // -0 saturates to +0
  return bits(r);
}

inline std::uint64_t finish64(double r, std::uint32_t flags, double a = 0, double b = 0,
                              double c = 0) noexcept {
  if (std::isnan(r)) {
    if (flags & kSat) return 0;
    for (double in : {a, b, c}) {
      if (std::isnan(in)) return bits(in) | 0x0008000000000000ull;  // quiet the input NaN
    }
    return kCanonicalNan64;
  }
  if (flags & kSat) r = r < 0.0 ? 0.0 : (r > 1.0 ? 1.0 : r);
  if ((flags & kSat) && r == 0.0) r = 0.0;
  return bits(r);
}

// ---- f32, f64, f16, bf16 arithmetic through one path: decode to double, compute, round.

enum class FKind { f32, f64, f16, bf16 };

inline FKind fkind(Type t) {
  switch (t) {
    case Type::f64: return FKind::f64;
    case Type::f16:
    case Type::f16x2: return FKind::f16;
    case Type::bf16:
    case Type::bf16x2: return FKind::bf16;
    default: return FKind::f32;
  }
}

/// The value of float bits `v` of kind `k` (.ftz: subnormal f32/f16 inputs as zero).
double fdecode(FKind k, std::uint64_t v, bool ftz);

/// `d` rounded to kind `k` in mode `r`, with .relu, .sat, .satfinite and .ftz from `flags`.
std::uint64_t fencode(FKind k, double d, Round r, std::uint32_t flags);

// ---- the families of compute(): each file's entry point

/// One float lane of an instruction (f32, f64, or one half of a packed f16x2/bf16x2)
/// (alu_float.cpp).
std::uint64_t float_lane(const Inst& in, FKind k, std::uint64_t sa, std::uint64_t sb,
                         std::uint64_t sc);

/// A float instruction on any float type, packed pairs lane by lane (inline: compute()'s hot
/// path).
inline std::uint64_t float_compute(const Inst& in, const std::uint64_t* s) {
  const FKind k = fkind(in.type);
  if (in.type == Type::f16x2 || in.type == Type::bf16x2) {
    const std::uint64_t lo = float_lane(in, k, s[0] & 0xffff, s[1] & 0xffff, s[2] & 0xffff);
    const std::uint64_t hi =
        float_lane(in, k, (s[0] >> 16) & 0xffff, (s[1] >> 16) & 0xffff, (s[2] >> 16) & 0xffff);
    return (lo & 0xffff) | ((hi & 0xffff) << 16);
  }
  return float_lane(in, k, s[0], s[1], s[2]);
}

/// An integer or bit instruction (alu_integer.cpp).
std::uint64_t integer_compute(const Inst& in, const std::uint64_t* s, bool& carry);

/// .u16x2/.s16x2 (min, max, add, sub): each 16-bit half on its own (alu_simd.cpp).
std::uint64_t packed16_compute(const Inst& in, const std::uint64_t* s, bool& carry);

/// vadd4, vabsdiff2, ...: the SIMD video instructions (alu_simd.cpp).
std::uint64_t video_compute(const Inst& in, const std::uint64_t* s);

}  // namespace swcu::ptx::detail
