// FilterSum (filter_sum.hpp): two unsigned 320-bit fixed-point accumulators, one for positive
// and one for negative terms, subtracted once at the end.
#include "ptx/filter_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace swcu::ptx {
namespace {

__extension__ using u128 = unsigned __int128;
constexpr int kLimbs = 5;
using Wide = std::uint64_t[kLimbs];

// w += value << shift (value below 2^64, shift below 256).
void add_shifted(Wide& w, std::uint64_t value, unsigned shift) noexcept {
  const unsigned limb = shift / 64, offset = shift % 64;
  const u128 v = static_cast<u128>(value) << offset;
  u128 carry = 0;
  for (unsigned i = limb; i < kLimbs; ++i) {
    u128 part = carry;
    if (i == limb) part += static_cast<std::uint64_t>(v);
    if (i == limb + 1) part += static_cast<std::uint64_t>(v >> 64);
    part += w[i];
    w[i] = static_cast<std::uint64_t>(part);
    carry = part >> 64;
    if (carry == 0 && i > limb) break;
  }
}

// a < b.
bool less(const Wide& a, const Wide& b) noexcept {
  for (int i = kLimbs - 1; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

// out = a - b (a >= b).
void subtract(const Wide& a, const Wide& b, Wide& out) noexcept {
  std::uint64_t borrow = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const std::uint64_t d = a[i] - b[i];
    const std::uint64_t next = (a[i] < b[i]) || (d < borrow) ? 1 : 0;
    out[i] = d - borrow;
    borrow = next;
  }
}

// The index of the highest set bit, or -1 for zero.
int top_bit(const Wide& w) noexcept {
  for (int i = kLimbs - 1; i >= 0; --i) {
    if (w[i] != 0) return i * 64 + 63 - std::countl_zero(w[i]);
  }
  return -1;
}

bool bit(const Wide& w, int index) noexcept { return ((w[index / 64] >> (index % 64)) & 1) != 0; }

// Bits [from, from + count) of w (count at most 64).
std::uint64_t bits(const Wide& w, int from, int count) noexcept {
  const int limb = from / 64, offset = from % 64;
  u128 v = w[limb];
  if (limb + 1 < kLimbs) v |= static_cast<u128>(w[limb + 1]) << 64;
  const auto out = static_cast<std::uint64_t>(v >> offset);
  return count >= 64 ? out : out & ((std::uint64_t{1} << count) - 1);
}

}  // namespace

void FilterSum::add(float value, std::uint32_t weight) noexcept {
  if (weight == 0) return;
  if (std::isnan(value)) {
    nan_ = true;
    return;
  }
  if (std::isinf(value)) {
    (value > 0 ? plus_infinity_ : minus_infinity_) = true;
    return;
  }
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t exponent = (bits >> 23) & 0xff;
  std::uint64_t significand = bits & 0x7fffff;
  unsigned shift = 0;  // value = significand * 2^(shift - 149)
  if (exponent != 0) {
    significand |= 0x800000;
    shift = exponent - 1;
  }
  add_shifted((bits >> 31) != 0 ? negative_ : positive_, significand * weight, shift);
}

float FilterSum::result(unsigned shift) const noexcept {
  if (nan_ || (plus_infinity_ && minus_infinity_)) return std::numeric_limits<float>::quiet_NaN();
  if (plus_infinity_) return std::numeric_limits<float>::infinity();
  if (minus_infinity_) return -std::numeric_limits<float>::infinity();
  const bool minus = less(positive_, negative_);
  Wide magnitude{};
  if (minus) {
    subtract(negative_, positive_, magnitude);
  } else {
    subtract(positive_, negative_, magnitude);
  }
  const int top = top_bit(magnitude);
  if (top < 0) return 0.0f;
  // The result's last significand bit: 24 bits below the top, or 2^-149 for a subnormal.
  const int lsb = std::max(top - 23, static_cast<int>(shift));
  std::uint64_t q = lsb <= top ? bits(magnitude, lsb, top - lsb + 1) : 0;
  if (lsb > 0 && lsb - 1 <= top && bit(magnitude, lsb - 1)) ++q;  // ties away from zero
  const float r = std::ldexp(static_cast<float>(q), lsb - 149 - static_cast<int>(shift));
  return minus ? -r : r;
}

}  // namespace swcu::ptx
