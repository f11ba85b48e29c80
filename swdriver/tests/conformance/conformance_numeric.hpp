// Host references for PTX numeric semantics: saturating float-to-integer conversion, rounding
// to binary16/bfloat16 in a given direction, and directed rounding of float results.
#pragma once

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance_support.hpp"

namespace conf {

/// PTX float-to-integer conversion: `r` (an integer-valued double, or NaN or an infinity)
/// clamped to the range of I; NaN gives 0.
template <class I>
I saturate(double r) {
  if (std::isnan(r)) return 0;
  constexpr int digits = std::numeric_limits<I>::digits;  // 31 / 32 / 63 / 64
  if (r >= std::ldexp(1.0, digits)) return std::numeric_limits<I>::max();
  if (r < static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(r);
}

/// To nearest, ties to even (the default mode).
inline double rn(double v) { return std::nearbyint(v); }

enum class Round { nearest, zero, down, up };

/// Rounds a double to a binary format with p significant bits and exponents [emin, emax], in
/// the given direction, with IEEE overflow (to infinity or the largest finite value).
inline double round_to_format(double v, int p, int emin, int emax, Round mode) {
  if (!std::isfinite(v) || v == 0.0) return v;
  const int e = std::max(std::ilogb(v), emin);
  const double q = std::ldexp(1.0, e - p + 1);
  const double s = v / q;
  double i = 0.0;
  switch (mode) {
    case Round::nearest: i = rn(s); break;
    case Round::zero: i = std::trunc(s); break;
    case Round::down: i = std::floor(s); break;
    case Round::up: i = std::ceil(s); break;
  }
  const double r = i * q;
  if (std::fabs(r) >= std::ldexp(1.0, emax + 1)) {
    const double max_finite = (2.0 - std::ldexp(1.0, 1 - p)) * std::ldexp(1.0, emax);
    const bool to_infinity =
        mode == Round::nearest || (mode == Round::up && v > 0) || (mode == Round::down && v < 0);
    return std::copysign(to_infinity ? HUGE_VAL : max_finite, v);
  }
  return r == 0.0 ? std::copysign(0.0, v) : r;
}

/// The bits of a value representable in a binary format with p significant bits and ebits
/// exponent bits.
inline std::uint64_t encode(double r, int p, int ebits) {
  using u64 = std::uint64_t;
  const int mbits = p - 1;
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias;
  const u64 sign = std::signbit(r) ? u64{1} << (mbits + ebits) : 0;
  const u64 all_ones = (u64{1} << ebits) - 1;
  if (std::isnan(r)) return sign | (all_ones << mbits) | (u64{1} << (mbits - 1));
  const double a = std::fabs(r);
  if (std::isinf(a)) return sign | (all_ones << mbits);
  if (a == 0.0) return sign;
  const int e = std::ilogb(a);
  if (e < emin) return sign | static_cast<u64>(a / std::ldexp(1.0, emin - mbits));
  const auto mant = static_cast<u64>((a / std::ldexp(1.0, e) - 1.0) * std::ldexp(1.0, mbits));
  return sign | (static_cast<u64>(e + bias) << mbits) | mant;
}

inline double to_half(double v, Round mode = Round::nearest) {
  return round_to_format(v, 11, -14, 15, mode);
}
inline double to_bf16(double v, Round mode = Round::nearest) {
  return round_to_format(v, 8, -126, 127, mode);
}
inline std::uint64_t half_bits(double r) { return encode(r, 11, 5); }
inline std::uint64_t bf16_bits(double r) { return encode(r, 8, 8); }

/// Whether 16-bit patterns are NaNs of binary16 (p 11) or bfloat16 (p 8).
inline bool is_nan16(std::uint64_t bits, bool bf16) {
  const int mbits = bf16 ? 7 : 10;
  const std::uint64_t exp_mask = bf16 ? 0xffu : 0x1fu;
  return ((bits >> mbits) & exp_mask) == exp_mask && (bits & ((1u << mbits) - 1)) != 0;
}

/// Two 16-bit lanes equal, or both NaN.
inline bool lanes16_match(std::uint64_t got, std::uint64_t want, bool bf16, int lanes = 2) {
  for (int l = 0; l < lanes; ++l) {
    const std::uint64_t g = (got >> (16 * l)) & 0xffffu;
    const std::uint64_t w = (want >> (16 * l)) & 0xffffu;
    if (is_nan16(w, bf16) ? !is_nan16(g, bf16) : g != w) return false;
  }
  return (got >> (16 * lanes)) == (want >> (16 * lanes));
}

/// A float result of the (exact) double value p, rounded toward zero, up or down.
enum class Dir { zero, up, down };
inline float directed(double p, Dir dir) {
  float f = static_cast<float>(p);
  if (std::isnan(p) || std::isinf(p)) return f;
  const double df = static_cast<double>(f);
  if (dir == Dir::zero && std::fabs(df) > std::fabs(p)) f = std::nextafter(f, 0.0f);
  if (dir == Dir::up && df < p) f = std::nextafter(f, HUGE_VALF);
  if (dir == Dir::down && df > p) f = std::nextafter(f, -HUGE_VALF);
  return f;
}

/// Runs f() with the host's rounding mode set to `mode` (FE_*); f must read its operands
/// through volatile variables so that nothing is evaluated outside the mode.
template <class F>
auto in_rounding_mode(int mode, F f) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  const auto r = f();
  std::fesetround(saved);
  return r;
}

}  // namespace conf
