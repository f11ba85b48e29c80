// cvt (alu.hpp convert()): integer to integer with saturation, float to float in any rounding
// mode (integral .rni/.rzi/.rmi/.rpi included, NaN payloads as the hardware keeps them), float
// to integer, integer to float, and f32 to tf32. Built with -frounding-math: integer to f32/f64
// conversions round in the host's mode.
#include <cmath>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx {

using namespace detail;

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

}  // namespace swcu::ptx
