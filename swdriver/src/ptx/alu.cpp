// PTX value semantics (alu.hpp): which instructions are ALU instructions, comparisons, and
// compute(), which handles comparison and selection (setp, set, selp, slct, testp, copysign)
// itself and hands the rest to its families: float (alu_float.cpp), integer and bit
// (alu_integer.cpp), SIMD (alu_simd.cpp), conversions (alu_convert.cpp). Every alu_*.cpp is
// built with -frounding-math: the directed rounding modes of f32/f64 arithmetic switch the
// host's rounding mode around one operation.
#include "ptx/alu.hpp"

#include <cmath>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx {

using namespace detail;

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
