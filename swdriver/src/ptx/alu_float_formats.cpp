// The float formats' bits and values (alu_internal.hpp): f16, bf16, tf32 and f32 rounded from
// a double in any PTX rounding mode, decoded back to a double, and the final encoding of a
// float result (.relu, .sat, .satfinite, .ftz). Built with -frounding-math.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx::detail {
namespace {

double from_binary(std::uint64_t b, int p, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const bool neg = (b >> (p - 1 + ebits)) & 1;
  const auto e = static_cast<int>((b >> (p - 1)) & mask_of(static_cast<unsigned>(ebits)));
  const std::uint64_t m = b & mask_of(static_cast<unsigned>(p - 1));
  double v;
  if (e == (1 << ebits) - 1) {
    v = m != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - (p - 1));
  } else {
    v = std::ldexp(static_cast<double>(m | (1ull << (p - 1))), e - bias - (p - 1));
  }
  return neg ? -v : v;
}

double half_to_double(std::uint64_t b) { return from_binary(b & 0xffff, 11, 5); }
double bf16_to_double(std::uint64_t b) { return from_binary(b & 0xffff, 8, 8); }
std::uint64_t to_half(double x, Round r) {
  if (std::isnan(x)) return kCanonicalNan16;
  return round_binary(x, 11, 5, r);
}
std::uint64_t to_bf16(double x, Round r) {
  if (std::isnan(x)) return kCanonicalNan16;
  return round_binary(x, 8, 8, r);
}

}  // namespace

std::uint64_t round_binary(double x, int p, int ebits, Round r, bool satfinite) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias;
  const int emax = bias;
  const std::uint64_t sign = std::signbit(x) ? 1ull << (p - 1 + ebits) : 0;
  const std::uint64_t exp_all = static_cast<std::uint64_t>((1 << ebits) - 1) << (p - 1);
  if (std::isnan(x)) return exp_all | (mask_of(static_cast<unsigned>(p - 1)));
  const std::uint64_t max_finite = (static_cast<std::uint64_t>((1 << ebits) - 2) << (p - 1)) |
                                   mask_of(static_cast<unsigned>(p - 1));
  const bool neg = sign != 0;
  if (std::isinf(x)) return sign | (satfinite ? max_finite : exp_all);
  const double a = std::fabs(x);
  if (a == 0) return sign;
  int e = std::ilogb(a);
  if (e < emin) e = emin;
  const double quantum = std::ldexp(1.0, e - (p - 1));
  const double q = a / quantum;  // exact: a power-of-two scaling
  double qi = std::floor(q);
  const double frac = q - qi;
  bool up = false;
  switch (r) {
    case Round::rz:
    case Round::rzi: break;
    case Round::rm:
    case Round::rmi: up = neg && frac > 0; break;
    case Round::rp:
    case Round::rpi: up = !neg && frac > 0; break;
    case Round::rna: up = frac >= 0.5; break;
    default:  // rn
      up = frac > 0.5 || (frac == 0.5 && std::fmod(qi, 2.0) != 0);
      break;
  }
  if (up) qi += 1;
  const double result = qi * quantum;
  if (result >= std::ldexp(1.0, emax + 1)) {
    const bool to_inf = !satfinite && (r == Round::none || r == Round::rn || r == Round::rna ||
                                       (r == Round::rp && !neg) || (r == Round::rm && neg));
    return sign | (to_inf ? exp_all : max_finite);
  }
  if (result < std::ldexp(1.0, emin)) {
    return sign | static_cast<std::uint64_t>(qi);  // subnormal (or zero)
  }
  const int e2 = std::ilogb(result);
  const auto mant = static_cast<std::uint64_t>(std::ldexp(result, (p - 1) - e2)) &
                    mask_of(static_cast<unsigned>(p - 1));
  return sign | (static_cast<std::uint64_t>(e2 + bias) << (p - 1)) | mant;
}

// Rounds to f32 bits in mode r.
std::uint64_t to_f32(double x, Round r) {
  if (std::isnan(x)) return kCanonicalNan32;
  if (r == Round::none || r == Round::rn) return bits(static_cast<float>(x));
  return round_binary(x, 24, 8, r);
}

double fdecode(FKind k, std::uint64_t v, bool ftz) {
  switch (k) {
    case FKind::f64: return as_f64(v);
    case FKind::f16: {
      double d = half_to_double(v);
      if (ftz && std::fabs(d) < std::ldexp(1.0, -14)) d = std::copysign(0.0, d);
      return d;
    }
    case FKind::bf16: return bf16_to_double(v);
    case FKind::f32: {
      float f = as_f32(v);
      if (ftz) f = ftz32(f);
      return f;
    }
  }
  return 0;
}

std::uint64_t fencode(FKind k, double d, Round r, std::uint32_t flags) {
  if (flags & kRelu) d = (std::isnan(d) ? d : (d < 0 ? 0.0 : d));
  switch (k) {
    case FKind::f64: return finish64(d, flags);
    case FKind::f16: {
      if (flags & kSat) d = std::isnan(d) ? 0.0 : std::clamp(d, 0.0, 1.0);
      if ((flags & kSatFinite) && !std::isnan(d)) return round_binary(d, 11, 5, r, true);
      std::uint64_t h = to_half(d, r);
      if ((flags & kFtz) && (h & 0x7c00) == 0) h &= 0x8000;
      return h;
    }
    case FKind::bf16: {
      if (flags & kSat) d = std::isnan(d) ? 0.0 : std::clamp(d, 0.0, 1.0);
      if ((flags & kSatFinite) && !std::isnan(d)) return round_binary(d, 8, 8, r, true);
      return to_bf16(d, r);
    }
    case FKind::f32: {
      if (std::isnan(d)) return (flags & kSat) ? 0 : kCanonicalNan32;
      const std::uint64_t b = to_f32(d, r);
      return finish32(as_f32(b), flags);
    }
  }
  return 0;
}

}  // namespace swcu::ptx::detail
