// PTX value semantics (alu.hpp). Built with -frounding-math: the directed rounding modes of
// f32/f64 arithmetic switch the host's rounding mode around one operation.
#include "ptx/alu.hpp"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace swcu::ptx {
namespace {

__extension__ using i128 = __int128;
__extension__ using u128 = unsigned __int128;

constexpr std::uint32_t kCanonicalNan32 = 0x7fffffffu;
constexpr std::uint64_t kCanonicalNan64 = 0x7fffffffffffffffull;
constexpr std::uint16_t kCanonicalNan16 = 0x7fffu;

float as_f32(std::uint64_t v) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v));
}
double as_f64(std::uint64_t v) noexcept { return std::bit_cast<double>(v); }
std::uint64_t bits(float f) noexcept { return std::bit_cast<std::uint32_t>(f); }
std::uint64_t bits(double d) noexcept { return std::bit_cast<std::uint64_t>(d); }

unsigned width(Type t) noexcept { return type_size(t) * 8; }

std::uint64_t mask_of(unsigned w) noexcept { return w >= 64 ? ~0ull : (1ull << w) - 1; }

std::int64_t sext(std::uint64_t v, unsigned w) noexcept {
  if (w >= 64) return static_cast<std::int64_t>(v);
  const std::uint64_t m = 1ull << (w - 1);
  v &= mask_of(w);
  return static_cast<std::int64_t>((v ^ m) - m);
}

// ---- rounding to narrow binary formats

// Rounds `x` (any double) to a binary format with `p` significand bits and `ebits` exponent
// bits, in mode `r`; returns the format's bits. `satfinite`: overflow gives the largest finite.
std::uint64_t round_binary(double x, int p, int ebits, Round r, bool satfinite = false) {
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

// Rounds to f32 bits in mode r.
std::uint64_t to_f32(double x, Round r) {
  if (std::isnan(x)) return kCanonicalNan32;
  if (r == Round::none || r == Round::rn) return bits(static_cast<float>(x));
  return round_binary(x, 24, 8, r);
}

// Runs `f` with the host rounding mode set for `r`.
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

bool subnormal32(float f) noexcept { return std::fpclassify(f) == FP_SUBNORMAL; }
float ftz32(float f) noexcept { return subnormal32(f) ? std::copysign(0.0f, f) : f; }
double ftz64(double d) noexcept {
  return std::fpclassify(d) == FP_SUBNORMAL ? std::copysign(0.0, d) : d;
}

// Final f32 result: canonical NaN, .ftz and .sat.
std::uint64_t finish32(float r, std::uint32_t flags) noexcept {
  if (std::isnan(r)) return (flags & kSat) ? 0 : kCanonicalNan32;
  if (flags & kFtz) r = ftz32(r);
  if (flags & kSat) r = r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
  if ((flags & kSat) && r == 0.0f) r = 0.0f;  // -0 saturates to +0
  return bits(r);
}

std::uint64_t finish64(double r, std::uint32_t flags, double a = 0, double b = 0,
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

FKind fkind(Type t) {
  switch (t) {
    case Type::f64: return FKind::f64;
    case Type::f16:
    case Type::f16x2: return FKind::f16;
    case Type::bf16:
    case Type::bf16x2: return FKind::bf16;
    default: return FKind::f32;
  }
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

// IEEE min/max with PTX's NaN and signed-zero rules.
double fminmax(bool is_max, double a, double b, bool nan_mode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan_mode || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<double>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) {  // -0 < +0
    const bool a_negative = std::signbit(a);
    return is_max ? (a_negative ? b : a) : (a_negative ? a : b);
  }
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

// a op b (op c) in T's own precision, with the host rounding mode set for `r`.
template <class T>
T arithmetic(Op op, Round r, bool approx, T a, T b, T c) {
  return with_round(r, [&] {
    volatile T x = 0;
    switch (op) {
      case Op::add: x = a + b; break;
      case Op::sub: x = a - b; break;
      case Op::mul: x = a * b; break;
      case Op::fma:
      case Op::mad: x = std::fma(a, b, c); break;
      case Op::div: x = approx ? a * (T{1} / b) : a / b; break;
      default: break;
    }
    return static_cast<T>(x);
  });
}

// f32 and f64 arithmetic computed in their own precision (directed rounding through the host).
std::uint64_t float_op(const Inst& in, FKind k, std::uint64_t sa, std::uint64_t sb,
                       std::uint64_t sc) {
  const bool approx = (in.flags & kApprox) != 0;
  if (k == FKind::f32) {
    const bool ftz = (in.flags & kFtz) != 0;
    const auto in32 = [ftz](std::uint64_t v) { return ftz ? ftz32(as_f32(v)) : as_f32(v); };
    return finish32(arithmetic(in.op, in.round, approx, in32(sa), in32(sb), in32(sc)), in.flags);
  }
  const double a = as_f64(sa), b = as_f64(sb), c = as_f64(sc);
  return finish64(arithmetic(in.op, in.round, approx, a, b, c), in.flags, a, b, c);
}

// One float lane of an instruction (f32, f64, or one half of a packed f16x2/bf16x2).
std::uint64_t float_lane(const Inst& in, FKind k, std::uint64_t sa, std::uint64_t sb,
                         std::uint64_t sc) {
  const bool ftz = (in.flags & kFtz) != 0;
  switch (in.op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::fma:
    case Op::mad:
    case Op::div:
      if (k == FKind::f32 || k == FKind::f64) return float_op(in, k, sa, sb, sc);
      {
        const double a = fdecode(k, sa, ftz), b = fdecode(k, sb, ftz), c = fdecode(k, sc, ftz);
        double res = 0;
        switch (in.op) {
          case Op::add: res = a + b; break;
          case Op::sub: res = a - b; break;
          case Op::mul: res = a * b; break;
          case Op::div: res = a / b; break;
          default: res = std::fma(a, b, c); break;
        }
        return fencode(k, res, in.round, in.flags);
      }
    case Op::abs:
    case Op::neg: {
      const unsigned w = k == FKind::f64 ? 64 : (k == FKind::f32 ? 32 : 16);
      const std::uint64_t sign = 1ull << (w - 1);
      std::uint64_t v = sa & mask_of(w);
      if (ftz && k == FKind::f32 && subnormal32(as_f32(v))) v &= sign;
      if (ftz && k == FKind::f16 && (v & 0x7c00) == 0) v &= sign;
      return in.op == Op::abs ? (v & ~sign) : (v ^ sign);
    }
    case Op::min:
    case Op::max: {
      const double a = fdecode(k, sa, ftz), b = fdecode(k, sb, ftz);
      double res = fminmax(in.op == Op::max, a, b, (in.flags & kNan) != 0);
      if (std::isnan(res)) {
        if (k == FKind::f32) return kCanonicalNan32;
        if (k == FKind::f64) return kCanonicalNan64;
        return kCanonicalNan16;
      }
      if (in.flags & kXorsign) {
        const bool s = std::signbit(a) != std::signbit(b);
        res = std::copysign(std::fabs(res), s ? -1.0 : 1.0);
      }
      return fencode(k, res, Round::rn, in.flags & (kFtz | kRelu));
    }
    case Op::rcp:
    case Op::sqrt:
    case Op::rsqrt:
    case Op::sin:
    case Op::cos:
    case Op::lg2:
    case Op::ex2:
    case Op::tanh: {
      double a = fdecode(k, sa, ftz);
      double res = 0;
      switch (in.op) {
        case Op::rcp: res = 1.0 / a; break;
        case Op::sqrt: res = std::sqrt(a); break;
        case Op::rsqrt: res = 1.0 / std::sqrt(a); break;
        case Op::sin: res = std::sin(a); break;
        case Op::cos: res = std::cos(a); break;
        case Op::lg2: res = std::log2(a); break;
        case Op::ex2: res = std::exp2(a); break;
        default: res = std::tanh(a); break;
      }
      if (k == FKind::f64 && !(in.flags & kApprox) && (in.op == Op::rcp || in.op == Op::sqrt)) {
        // correctly rounded in f64 in the requested mode
        const Round r = in.round;
        res = with_round(r, [&] {
          volatile double x = in.op == Op::rcp ? 1.0 / a : std::sqrt(a);
          return x;
        });
        return finish64(res, in.flags, a);
      }
      if (k == FKind::f32 && !(in.flags & kApprox) && (in.op == Op::rcp || in.op == Op::sqrt)) {
        const float fa = static_cast<float>(a);
        const float x = with_round(in.round, [&] {
          volatile float y = in.op == Op::rcp ? 1.0f / fa : std::sqrt(fa);
          return y;
        });
        return finish32(x, in.flags);
      }
      if (k == FKind::f64 && (in.flags & kApprox) && (in.flags & kFtz)) {
        // rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64: flush subnormal inputs and results
        if (std::fpclassify(a) == FP_SUBNORMAL) a = std::copysign(0.0, a);
        res = in.op == Op::rcp ? 1.0 / a : (in.op == Op::rsqrt ? 1.0 / std::sqrt(a) : res);
        return finish64(ftz64(res), in.flags & ~kFtz, a);
      }
      return fencode(k, res, Round::rn, in.flags);
    }
    default: return 0;
  }
}

// A float instruction on any float type, packed pairs lane by lane.
std::uint64_t float_compute(const Inst& in, const std::uint64_t* s) {
  const FKind k = fkind(in.type);
  if (in.type == Type::f16x2 || in.type == Type::bf16x2) {
    const std::uint64_t lo = float_lane(in, k, s[0] & 0xffff, s[1] & 0xffff, s[2] & 0xffff);
    const std::uint64_t hi =
        float_lane(in, k, (s[0] >> 16) & 0xffff, (s[1] >> 16) & 0xffff, (s[2] >> 16) & 0xffff);
    return (lo & 0xffff) | ((hi & 0xffff) << 16);
  }
  return float_lane(in, k, s[0], s[1], s[2]);
}

std::uint64_t bfe(Type t, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const unsigned w = width(t);
  const unsigned msb = w - 1;
  const unsigned pos = static_cast<unsigned>(b & 0xff);
  const unsigned len = static_cast<unsigned>(c & 0xff);
  bool sbit = false;
  if (is_signed(t) && len != 0) {
    const unsigned top = std::min(pos + len - 1, msb);
    sbit = (a >> top) & 1;
  }
  std::uint64_t d = 0;
  for (unsigned i = 0; i <= msb; ++i) {
    const bool bit = (i < len && pos + i <= msb) ? ((a >> (pos + i)) & 1) : sbit;
    if (bit) d |= 1ull << i;
  }
  return d;
}

std::uint64_t bfi(Type t, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d4) {
  const unsigned w = width(t);
  const unsigned pos = static_cast<unsigned>(c & 0xff);
  const unsigned len = static_cast<unsigned>(d4 & 0xff);
  std::uint64_t f = b;
  for (unsigned i = 0; i < len && pos + i < w; ++i) {
    const std::uint64_t bit = 1ull << (pos + i);
    f = ((a >> i) & 1) ? (f | bit) : (f & ~bit);
  }
  return f;
}

std::uint64_t prmt(Sub mode, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const std::uint64_t pool = (static_cast<std::uint64_t>(b) << 32) | a;
  const auto byte = [&](unsigned i) {
    return static_cast<std::uint32_t>((pool >> (8 * (i & 7))) & 0xff);
  };
  std::uint32_t d = 0;
  if (mode == Sub::none) {
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned sel = (c >> (4 * i)) & 0xf;
      std::uint32_t v = byte(sel & 7);
      if (sel & 8) v = (v & 0x80) ? 0xff : 0;
      d |= v << (8 * i);
    }
    return d;
  }
  const unsigned n = c & 3;
  unsigned sel[4] = {0, 1, 2, 3};
  switch (mode) {
    case Sub::p_f4e:
      for (unsigned i = 0; i < 4; ++i) sel[i] = (n + i) & 7;
      break;
    case Sub::p_b4e:
      for (unsigned i = 0; i < 4; ++i) sel[i] = (n + 8 - i) & 7;
      break;
    case Sub::p_rc8:
      for (unsigned i = 0; i < 4; ++i) sel[i] = n;
      break;
    case Sub::p_ecl: {
      const unsigned t[4][4] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}};
      for (unsigned i = 0; i < 4; ++i) sel[i] = t[n][i];
      break;
    }
    case Sub::p_ecr: {
      const unsigned t[4][4] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}};
      for (unsigned i = 0; i < 4; ++i) sel[i] = t[n][i];
      break;
    }
    case Sub::p_rc16: {
      const unsigned t[2][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}};
      for (unsigned i = 0; i < 4; ++i) sel[i] = t[n & 1][i];
      break;
    }
    default: break;
  }
  for (unsigned i = 0; i < 4; ++i) d |= byte(sel[i]) << (8 * i);
  return d;
}

std::uint64_t integer_compute(const Inst& in, const std::uint64_t* s, bool& carry);

// .u16x2/.s16x2 (min, max, add, sub): each 16-bit half on its own.
std::uint64_t packed16_compute(const Inst& in, const std::uint64_t* s, bool& carry) {
  Inst half = in;
  half.type = in.type == Type::s16x2 ? Type::s16 : Type::u16;
  std::uint64_t d = 0;
  for (unsigned k = 0; k < 2; ++k) {
    const std::uint64_t h[5] = {(s[0] >> (16 * k)) & 0xffff, (s[1] >> (16 * k)) & 0xffff, 0, 0, 0};
    d |= (integer_compute(half, h, carry) & 0xffff) << (16 * k);
  }
  return d;
}

// vadd4, vabsdiff2, ...: each byte (or half) of a and b, with .sat clamping to d's type and
// .add summing the lanes into c (PTX ISA "SIMD video instructions"; every lane selected).
std::uint64_t video_compute(const Inst& in, const std::uint64_t* s) {
  const unsigned lanes = in.vec, bitsz = 32 / lanes;
  const bool as = is_signed(in.type2), bs = is_signed(in.type3), ds = is_signed(in.type);
  const std::int64_t lo = ds ? -(std::int64_t{1} << (bitsz - 1)) : 0;
  const std::int64_t hi =
      ds ? (std::int64_t{1} << (bitsz - 1)) - 1 : (std::int64_t{1} << bitsz) - 1;
  std::int64_t sum = 0;
  std::uint64_t d = 0;
  for (unsigned i = 0; i < lanes; ++i) {
    const std::uint64_t xa = (s[0] >> (bitsz * i)) & mask_of(bitsz);
    const std::uint64_t xb = (s[1] >> (bitsz * i)) & mask_of(bitsz);
    const std::int64_t x = as ? sext(xa, bitsz) : static_cast<std::int64_t>(xa);
    const std::int64_t y = bs ? sext(xb, bitsz) : static_cast<std::int64_t>(xb);
    std::int64_t r = 0;
    switch (in.sub) {
      case Sub::a_add: r = x + y; break;
      case Sub::v_sub: r = x - y; break;
      case Sub::v_avrg: r = (x + y + 1) >> 1; break;
      case Sub::a_min: r = std::min(x, y); break;
      case Sub::a_max: r = std::max(x, y); break;
      default: r = x > y ? x - y : y - x; break;
    }
    if (in.flags & kSat) r = std::clamp(r, lo, hi);
    sum += r;
    d |= (static_cast<std::uint64_t>(r) & mask_of(bitsz)) << (bitsz * i);
  }
  if (in.flags & kVideoAdd)
    return static_cast<std::uint64_t>(sum + static_cast<std::int32_t>(s[2])) & 0xffffffffu;
  return d;
}

std::uint64_t integer_compute(const Inst& in, const std::uint64_t* s, bool& carry) {
  const Type t = in.type;
  if (in.op == Op::video) return video_compute(in, s);
  if (t == Type::u16x2 || t == Type::s16x2) return packed16_compute(in, s, carry);
  const unsigned w = width(t);
  const std::uint64_t m = mask_of(w);
  const bool sgn = is_signed(t);
  const std::uint64_t a = s[0] & m, b = s[1] & m, c = s[2];
  const std::int64_t sa = sext(a, w), sb = sext(b, w);
  switch (in.op) {
    case Op::add:
    case Op::addc: {
      const std::uint64_t cin = in.op == Op::addc && carry ? 1 : 0;
      if ((in.flags & kSat) && t == Type::s32) {
        const std::int64_t r = std::clamp<std::int64_t>(sa + sb, INT32_MIN, INT32_MAX);
        return static_cast<std::uint64_t>(r);
      }
      const u128 full = static_cast<u128>(a) + b + cin;
      if (in.flags & kCc) carry = ((full >> w) & 1) != 0;
      return static_cast<std::uint64_t>(full);
    }
    case Op::sub:
    case Op::subc: {
      if ((in.flags & kSat) && t == Type::s32) {
        const std::int64_t r = std::clamp<std::int64_t>(sa - sb, INT32_MIN, INT32_MAX);
        return static_cast<std::uint64_t>(r);
      }
      // One carry flag for the whole chain, as the hardware keeps it: sub.cc computes
      // a + ~b + 1 and subc a + ~b + CF; CF is the carry out (1: no borrow).
      const std::uint64_t cin = in.op == Op::subc ? (carry ? 1 : 0) : 1;
      const u128 full = static_cast<u128>(a) + (~b & m) + cin;
      if (in.flags & kCc) carry = ((full >> w) & 1) != 0;
      return static_cast<std::uint64_t>(full);
    }
    case Op::mul:
    case Op::mad:
    case Op::madc: {
      i128 p;
      if (sgn) {
        p = static_cast<i128>(sa) * sb;
      } else {
        p = static_cast<i128>(static_cast<u128>(a) * b);
      }
      std::uint64_t r;
      unsigned rw = w;
      if (in.flags & kWide) {
        rw = 2 * w;
      }
      if (in.flags & kHi) {
        r = static_cast<std::uint64_t>(static_cast<u128>(p) >> w);
      } else {
        r = static_cast<std::uint64_t>(p);
      }
      if (in.op == Op::mul) return r;
      // mad: + c (with carry forms)
      const std::uint64_t rm = mask_of(rw);
      if ((in.flags & kSat) && t == Type::s32 && (in.flags & kHi)) {
        const std::int64_t v =
            std::clamp<std::int64_t>(sext(r, 32) + sext(c, 32), INT32_MIN, INT32_MAX);
        return static_cast<std::uint64_t>(v);
      }
      const std::uint64_t cin = in.op == Op::madc && carry ? 1 : 0;
      const u128 full = static_cast<u128>(r & rm) + (c & rm) + cin;
      if (in.flags & kCc) carry = ((full >> rw) & 1) != 0;
      return static_cast<std::uint64_t>(full);
    }
    case Op::mul24:
    case Op::mad24: {
      const std::int64_t x = sgn ? sext(a, 24) : static_cast<std::int64_t>(a & 0xffffff);
      const std::int64_t y = sgn ? sext(b, 24) : static_cast<std::int64_t>(b & 0xffffff);
      const std::int64_t p = x * y;  // 48 bits
      std::uint64_t r =
          (in.flags & kHi) ? static_cast<std::uint64_t>(p) >> 16 : static_cast<std::uint64_t>(p);
      if (in.op == Op::mad24) r += c;
      return r;
    }
    case Op::sad: {
      const std::uint64_t d =
          sgn ? static_cast<std::uint64_t>(sa > sb ? sa - sb : sb - sa) : (a > b ? a - b : b - a);
      return d + c;
    }
    case Op::div:
      if (b == 0) return ~0ull;
      if (sgn) {
        if (w == 64 && sa == INT64_MIN && sb == -1) return a;
        return static_cast<std::uint64_t>(sa / sb);
      }
      return a / b;
    case Op::rem:
      if (b == 0) return a;
      if (sgn) {
        if (sb == -1) return 0;
        return static_cast<std::uint64_t>(sa % sb);
      }
      return a % b;
    case Op::abs:
      return sgn ? static_cast<std::uint64_t>(sa < 0 ? -static_cast<std::uint64_t>(sa) : sa) : a;
    case Op::neg: return ~a + 1;
    case Op::min:
      if (in.flags & kRelu)
        return static_cast<std::uint64_t>(std::max<std::int64_t>(std::min(sa, sb), 0));
      return sgn ? static_cast<std::uint64_t>(std::min(sa, sb)) : std::min(a, b);
    case Op::max:
      if (in.flags & kRelu)
        return static_cast<std::uint64_t>(std::max<std::int64_t>(std::max(sa, sb), 0));
      return sgn ? static_cast<std::uint64_t>(std::max(sa, sb)) : std::max(a, b);
    case Op::popc: return static_cast<std::uint64_t>(std::popcount(a));
    case Op::clz:
      return w == 64 ? static_cast<std::uint64_t>(std::countl_zero(a))
                     : static_cast<std::uint64_t>(std::countl_zero(a) - (64 - static_cast<int>(w)));
    case Op::bfind: {
      std::uint64_t v = a;
      if (sgn && sa < 0) v = ~a & m;
      if (v == 0) return 0xffffffffu;
      const unsigned pos = 63 - static_cast<unsigned>(std::countl_zero(v));
      return (in.flags & kReverse) ? (w - 1 - pos) : pos;
    }
    case Op::brev: {
      std::uint64_t r = 0;
      for (unsigned i = 0; i < w; ++i) {
        if ((a >> i) & 1) r |= 1ull << (w - 1 - i);
      }
      return r;
    }
    case Op::bfe: return bfe(t, a, s[1], s[2]);
    case Op::bfi: return bfi(t, s[0], s[1], s[2], s[3]);
    case Op::prmt:
      return prmt(in.sub, static_cast<std::uint32_t>(s[0]), static_cast<std::uint32_t>(s[1]),
                  static_cast<std::uint32_t>(s[2]));
    case Op::shf: {
      const std::uint32_t lo = static_cast<std::uint32_t>(s[0]),
                          hi = static_cast<std::uint32_t>(s[1]);
      std::uint32_t n = static_cast<std::uint32_t>(s[2]);
      n = (in.flags & kClamp) ? std::min(n, 32u) : (n & 31);
      const std::uint64_t pair = (static_cast<std::uint64_t>(hi) << 32) | lo;
      if (in.flags & kShiftLeft) return static_cast<std::uint32_t>((pair << n) >> 32);
      return static_cast<std::uint32_t>(pair >> n);
    }
    case Op::shl: {
      const std::uint64_t n = s[1] & 0xffffffffu;
      return n >= w ? 0 : a << n;
    }
    case Op::shr: {
      const std::uint64_t n = s[1] & 0xffffffffu;
      if (sgn) return static_cast<std::uint64_t>(sa >> std::min<std::uint64_t>(n, w - 1));
      return n >= w ? 0 : a >> n;
    }
    case Op::and_: return t == Type::pred ? ((s[0] & 1) & (s[1] & 1)) : (s[0] & s[1]);
    case Op::or_: return t == Type::pred ? ((s[0] | s[1]) & 1) : (s[0] | s[1]);
    case Op::xor_: return t == Type::pred ? ((s[0] ^ s[1]) & 1) : (s[0] ^ s[1]);
    case Op::not_: return t == Type::pred ? (~s[0] & 1) : ~s[0];
    case Op::cnot: return a == 0 ? 1 : 0;
    case Op::lop3: {
      const std::uint64_t lut = s[3] & 0xff;
      std::uint64_t r = 0;
      for (unsigned i = 0; i < w; ++i) {
        const unsigned idx =
            (((s[0] >> i) & 1) << 2) | (((s[1] >> i) & 1) << 1) | ((s[2] >> i) & 1);
        r |= ((lut >> idx) & 1) << i;
      }
      return r;
    }
    case Op::dp4a: {
      const bool as = is_signed(in.type), bs = is_signed(in.type2);
      std::int64_t acc = static_cast<std::int32_t>(c);
      if (!as && !bs) acc = static_cast<std::uint32_t>(c);
      for (unsigned i = 0; i < 4; ++i) {
        const std::int64_t x =
            as ? sext(s[0] >> (8 * i), 8) : static_cast<std::int64_t>((s[0] >> (8 * i)) & 0xff);
        const std::int64_t y =
            bs ? sext(s[1] >> (8 * i), 8) : static_cast<std::int64_t>((s[1] >> (8 * i)) & 0xff);
        acc += x * y;
      }
      return static_cast<std::uint64_t>(acc);
    }
    case Op::dp2a: {
      const bool as = is_signed(in.type), bs = is_signed(in.type2);
      std::int64_t acc = (!as && !bs) ? static_cast<std::int64_t>(static_cast<std::uint32_t>(c))
                                      : static_cast<std::int64_t>(static_cast<std::int32_t>(c));
      const unsigned base = (in.flags & kHi) ? 2 : 0;
      for (unsigned i = 0; i < 2; ++i) {
        const std::int64_t x = as ? sext(s[0] >> (16 * i), 16)
                                  : static_cast<std::int64_t>((s[0] >> (16 * i)) & 0xffff);
        const std::int64_t y = bs ? sext(s[1] >> (8 * (base + i)), 8)
                                  : static_cast<std::int64_t>((s[1] >> (8 * (base + i))) & 0xff);
        acc += x * y;
      }
      return static_cast<std::uint64_t>(acc);
    }
    case Op::bmsk: {
      const unsigned pos = static_cast<unsigned>(s[0]), len = static_cast<unsigned>(s[1]);
      const unsigned p = (in.flags & kClamp) ? std::min(pos, 32u) : (pos & 31);
      const unsigned l = (in.flags & kClamp) ? std::min(len, 32u) : (len & 31);
      const unsigned top = std::min(p + l, 32u);
      return static_cast<std::uint32_t>(mask_of(top) & ~mask_of(p));
    }
    case Op::szext: {
      const unsigned n = (in.flags & kClamp) ? std::min(static_cast<unsigned>(s[1]), 32u)
                                             : (static_cast<unsigned>(s[1]) & 31);
      if (n == 0) return 0;
      return sgn ? static_cast<std::uint64_t>(sext(s[0], n)) & 0xffffffffu : (s[0] & mask_of(n));
    }
    default: return 0;
  }
}

}  // namespace

bool is_alu(Op op) noexcept {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::mad:
    case Op::mul24:
    case Op::mad24:
    case Op::sad:
    case Op::div:
    case Op::rem:
    case Op::abs:
    case Op::neg:
    case Op::min:
    case Op::max:
    case Op::popc:
    case Op::clz:
    case Op::bfind:
    case Op::brev:
    case Op::bfe:
    case Op::bfi:
    case Op::prmt:
    case Op::shf:
    case Op::shl:
    case Op::shr:
    case Op::and_:
    case Op::or_:
    case Op::xor_:
    case Op::not_:
    case Op::cnot:
    case Op::lop3:
    case Op::dp4a:
    case Op::dp2a:
    case Op::addc:
    case Op::subc:
    case Op::madc:
    case Op::bmsk:
    case Op::szext:
    case Op::fma:
    case Op::rcp:
    case Op::sqrt:
    case Op::rsqrt:
    case Op::sin:
    case Op::cos:
    case Op::lg2:
    case Op::ex2:
    case Op::tanh:
    case Op::copysign:
    case Op::testp:
    case Op::setp:
    case Op::set:
    case Op::selp:
    case Op::slct:
    case Op::cvt:
    case Op::video: return true;
    default: return false;
  }
}

bool compare(Cmp cmp, Type t, std::uint64_t sa, std::uint64_t sb, bool ftz) noexcept {
  if (!is_float(t)) {
    const unsigned w = width(t);
    const std::uint64_t a = sa & mask_of(w), b = sb & mask_of(w);
    const std::int64_t x = sext(a, w), y = sext(b, w);
    const bool sgn = is_signed(t);
    switch (cmp) {
      case Cmp::eq: return a == b;
      case Cmp::ne: return a != b;
      case Cmp::lt: return sgn ? x < y : a < b;
      case Cmp::le: return sgn ? x <= y : a <= b;
      case Cmp::gt: return sgn ? x > y : a > b;
      case Cmp::ge: return sgn ? x >= y : a >= b;
      case Cmp::lo: return a < b;
      case Cmp::ls: return a <= b;
      case Cmp::hi: return a > b;
      case Cmp::hs: return a >= b;
      default: return false;
    }
  }
  const FKind k = fkind(t);
  const double a = fdecode(k, sa, ftz), b = fdecode(k, sb, ftz);
  const bool un = std::isnan(a) || std::isnan(b);
  switch (cmp) {
    case Cmp::eq: return !un && a == b;
    case Cmp::ne: return !un && a != b;
    case Cmp::lt: return !un && a < b;
    case Cmp::le: return !un && a <= b;
    case Cmp::gt: return !un && a > b;
    case Cmp::ge: return !un && a >= b;
    case Cmp::equ: return un || a == b;
    case Cmp::neu: return un || a != b;
    case Cmp::ltu: return un || a < b;
    case Cmp::leu: return un || a <= b;
    case Cmp::gtu: return un || a > b;
    case Cmp::geu: return un || a >= b;
    case Cmp::num: return !un;
    case Cmp::nan: return un;
    default: return false;
  }
}

std::uint64_t convert(const Inst& in, Type to, Type from, std::uint64_t v) noexcept {
  const bool ftz = (in.flags & kFtz) != 0;
  const bool sat = (in.flags & kSat) != 0;
  const Round r = in.round;
  if (!is_float(from) && !is_float(to)) {
    // integer to integer: extend by the source type, then truncate (or saturate) to the
    // destination.
    const unsigned fw = width(from), tw = width(to);
    const std::uint64_t src = normalize(from, v);
    if (!sat) return normalize(to, src);
    const bool fs = is_signed(from), ts = is_signed(to);
    // the value as a 128-bit signed integer
    const i128 val = fs ? static_cast<i128>(static_cast<std::int64_t>(src))
                        : static_cast<i128>(src & mask_of(fw));
    i128 lo, hi;
    if (ts) {
      lo = -(static_cast<i128>(1) << (tw - 1));
      hi = (static_cast<i128>(1) << (tw - 1)) - 1;
    } else {
      lo = 0;
      hi = (static_cast<i128>(1) << tw) - 1;
    }
    const i128 c = val < lo ? lo : (val > hi ? hi : val);
    return normalize(to, static_cast<std::uint64_t>(c));
  }
  if (to == Type::tf32) {
    // cvt.rna{.satfinite}.tf32.f32: f32 rounded to 10 mantissa bits, kept in f32 layout
    const double d = as_f32(v);
    if (std::isnan(d)) return kCanonicalNan32;
    const std::uint64_t t =
        round_binary(d, 11, 8, r == Round::none ? Round::rna : r, (in.flags & kSatFinite) != 0);
    return t << 13;
  }
  if (is_float(from) && is_float(to)) {
    const FKind fk = fkind(from), tk = fkind(to);
    double d = fdecode(fk, v, ftz && fk == FKind::f32);
    const bool integral = r == Round::rni || r == Round::rzi || r == Round::rmi || r == Round::rpi;
    if (integral && std::isfinite(d)) {
      switch (r) {
        case Round::rni: d = std::nearbyint(d); break;  // host mode is round-to-nearest-even
        case Round::rzi: d = std::trunc(d); break;
        case Round::rmi: d = std::floor(d); break;
        default: d = std::ceil(d); break;
      }
    }
    if (std::isnan(d)) {
      if (sat) return 0;
      if (tk == FKind::f64) {
        if (fk == FKind::f32) {
          // f32 NaN widened: payload kept, quieted
          const std::uint64_t b = static_cast<std::uint32_t>(v);
          const std::uint64_t sign = (b >> 31) & 1;
          return (sign << 63) | 0x7ff8000000000000ull | ((b & 0x3fffff) << 29);
        }
        return fk == FKind::f64 ? (v | 0x0008000000000000ull) : kCanonicalNan64;
      }
      if (tk == FKind::f32) {
        if (fk == FKind::f64) return kCanonicalNan32;
        if (fk == FKind::f32) return (v & 0xffffffffu) | 0x400000u;
        return kCanonicalNan32;
      }
      return kCanonicalNan16;
    }
    const Round rr = integral || r == Round::none ? Round::rn : r;
    switch (tk) {
      case FKind::f64: return finish64(d, in.flags & kSat);
      case FKind::f32: {
        const std::uint64_t b = to_f32(d, rr);
        return finish32(as_f32(b), in.flags & (kFtz | kSat));
      }
      case FKind::f16: return fencode(FKind::f16, d, rr, in.flags & (kSat | kSatFinite | kRelu));
      case FKind::bf16: return fencode(FKind::bf16, d, rr, in.flags & (kSat | kSatFinite | kRelu));
    }
    return 0;
  }
  if (is_float(from)) {
    // float to integer: round by the integer rounding mode, saturate (NaN gives 0).
    const FKind fk = fkind(from);
    double d = fdecode(fk, v, ftz && fk == FKind::f32);
    if (std::isnan(d)) return 0;
    switch (r) {
      case Round::rni:
      case Round::rn: d = std::nearbyint(d); break;
      case Round::rmi:
      case Round::rm: d = std::floor(d); break;
      case Round::rpi:
      case Round::rp: d = std::ceil(d); break;
      default: d = std::trunc(d); break;
    }
    const unsigned tw = width(to);
    if (is_signed(to)) {
      const double lo = -std::ldexp(1.0, static_cast<int>(tw) - 1);
      const double hi = std::ldexp(1.0, static_cast<int>(tw) - 1);
      if (d < lo) return normalize(to, static_cast<std::uint64_t>(1) << (tw - 1));
      if (d >= hi) return normalize(to, mask_of(tw - 1));
      return normalize(to, static_cast<std::uint64_t>(static_cast<std::int64_t>(d)));
    }
    if (d <= 0) return 0;
    if (d >= std::ldexp(1.0, static_cast<int>(tw))) return mask_of(tw);
    return static_cast<std::uint64_t>(d);
  }
  // integer to float
  const std::uint64_t src = normalize(from, v);
  const bool fs = is_signed(from);
  const FKind tk = fkind(to);
  const Round rr = r == Round::none ? Round::rn : r;
  if (tk == FKind::f64 || tk == FKind::f32) {
    if (tk == FKind::f64) {
      const double d = with_round(rr, [&] {
        volatile double x =
            fs ? static_cast<double>(static_cast<std::int64_t>(src)) : static_cast<double>(src);
        return x;
      });
      return bits(d);
    }
    const float f = with_round(rr, [&] {
      volatile float x =
          fs ? static_cast<float>(static_cast<std::int64_t>(src)) : static_cast<float>(src);
      return x;
    });
    return finish32(f, in.flags & kSat);
  }
  // to f16/bf16: via double (exact for 32-bit sources)
  const double d =
      fs ? static_cast<double>(static_cast<std::int64_t>(src)) : static_cast<double>(src);
  return fencode(tk, d, rr, in.flags & kSat);
}

std::uint64_t compute(const Inst& in, const std::uint64_t* s, bool& carry,
                      bool& pred_out) noexcept {
  switch (in.op) {
    case Op::setp: {
      bool v = compare(in.cmp, in.type, s[0], s[1], (in.flags & kFtz) != 0);
      bool q = !v;
      if (in.combine != Sub::none) {
        const bool c = (s[2] & 1) != 0;
        switch (in.combine) {
          case Sub::b_and:
            v = v && c;
            q = q && c;
            break;
          case Sub::b_or:
            v = v || c;
            q = q || c;
            break;
          default:
            v = v != c;
            q = q != c;
            break;
        }
      }
      pred_out = q;
      return v ? 1 : 0;
    }
    case Op::set: {
      bool v = compare(in.cmp, in.type2, s[0], s[1], (in.flags & kFtz) != 0);
      if (in.combine != Sub::none) {
        const bool c = (s[2] & 1) != 0;
        switch (in.combine) {
          case Sub::b_and: v = v && c; break;
          case Sub::b_or: v = v || c; break;
          default: v = v != c; break;
        }
      }
      if (in.type == Type::f32) return v ? bits(1.0f) : 0;
      return v ? mask_of(width(in.type)) : 0;
    }
    case Op::selp: return (s[2] & 1) ? s[0] : s[1];
    case Op::slct: {
      bool ge;
      if (in.type2 == Type::f32) {
        float c = as_f32(s[2]);
        if (in.flags & kFtz) c = ftz32(c);
        ge = c >= 0.0f;  // NaN: false, picks b
      } else {
        ge = static_cast<std::int32_t>(s[2]) >= 0;
      }
      return ge ? s[0] : s[1];
    }
    case Op::cvt:
      if ((in.type == Type::f16x2 || in.type == Type::bf16x2) && is_float(in.type2) &&
          in.type2 != in.type) {
        // cvt.rn.f16x2.f32 d, a, b: a in the upper half, b in the lower
        Inst half = in;
        const Type ht = in.type == Type::f16x2 ? Type::f16 : Type::bf16;
        return (convert(half, ht, in.type2, s[0]) << 16) | convert(half, ht, in.type2, s[1]);
      }
      return convert(in, in.type, in.type2, s[0]);
    case Op::lop3: {
      const std::uint64_t d = integer_compute(in, s, carry);
      if (in.sub == Sub::a_and || in.sub == Sub::a_or) {
        const bool nz = (d & 0xffffffffu) != 0, q = (s[4] & 1) != 0;
        pred_out = in.sub == Sub::a_and ? (nz && q) : (nz || q);
      }
      return d;
    }
    case Op::copysign: {
      if (in.type == Type::f64) {
        return (s[1] & 0x7fffffffffffffffull) | (s[0] & 0x8000000000000000ull);
      }
      return (s[1] & 0x7fffffffu) | (s[0] & 0x80000000u);
    }
    case Op::testp: {
      const double d = fdecode(fkind(in.type), s[0], false);
      switch (in.sub) {
        case Sub::t_finite: return std::isfinite(d);
        case Sub::t_infinite: return std::isinf(d);
        case Sub::t_number: return !std::isnan(d);
        case Sub::t_notanumber: return std::isnan(d);
        case Sub::t_normal:
          return in.type == Type::f32 ? std::isnormal(as_f32(s[0])) : std::isnormal(d);
        case Sub::t_subnormal:
          return in.type == Type::f32 ? subnormal32(as_f32(s[0]))
                                      : std::fpclassify(d) == FP_SUBNORMAL;
        default: return 0;
      }
    }
    default: break;
  }
  if (is_float(in.type) &&
      !(in.op == Op::mul24 || in.op == Op::and_ || in.op == Op::or_ || in.op == Op::xor_)) {
    return float_compute(in, s);
  }
  return integer_compute(in, s, carry);
}

}  // namespace swcu::ptx
