// SIMD within a register (alu_internal.hpp): the packed 16-bit pairs (.u16x2, .s16x2) and the
// video instructions (vadd4, vabsdiff2, ...). Built with -frounding-math like the rest of the
// ALU.
#include <algorithm>

#include "ptx/alu_internal.hpp"

namespace swcu::ptx::detail {

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

}  // namespace swcu::ptx::detail
