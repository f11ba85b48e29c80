// Integer and bit arithmetic (alu_internal.hpp): add/sub/mul/mad with their carry, .hi, .wide
// and .sat forms, 24-bit multiplies, division and remainder by the ISA's rules, shifts, bit
// fields (bfe, bfi, bmsk, szext), byte permutes (prmt), logic (lop3), dot products (dp4a,
// dp2a) and bit counts. Built with -frounding-math like the rest of the ALU.
#include <algorithm>
#include <bit>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx::detail {
namespace {

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

}  // namespace

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

}  // namespace swcu::ptx::detail
