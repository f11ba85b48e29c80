// Floating-point arithmetic (alu_internal.hpp): add, sub, mul, fma/mad, div, abs, neg, min,
// max and the special functions on f32, f64, f16, bf16 and the packed pairs. f32 and f64 are
// computed in their own precision with the host's rounding mode set for directed rounding
// (built with -frounding-math); halves through a double, rounded once.
#include <cmath>
#include <limits>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx::detail {
namespace {

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

}  // namespace

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

}  // namespace swcu::ptx::detail
