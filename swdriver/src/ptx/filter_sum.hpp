// The texture unit's filter arithmetic (texture_sampler.cpp): texels times integer weights,
// summed exactly, divided by a power of two and rounded once to float, to nearest with ties away
// from zero. That is what an H200 returned for bilinear filtering (2026-11-27): every result
// compared was the exact weighted sum so rounded, where float arithmetic in any order differs.
#pragma once

#include <cstdint>

namespace swcu::ptx {

/// An exact sum of float values times integer weights (each below 2^20, at most 4096 terms).
class FilterSum {
 public:
  /// Adds value x weight. A zero weight adds nothing, whatever the value (NaN included).
  void add(float value, std::uint32_t weight) noexcept;

  /// The sum divided by 2^shift, rounded once to float: to nearest, ties away from zero; NaN if
  /// a NaN or both infinities were added, an infinity if one was; +0 for an exact zero.
  [[nodiscard]] float result(unsigned shift) const noexcept;

 private:
  // Fixed point with its least significant bit at 2^-149 (the smallest float): a float's
  // significand (24 bits) times a weight (20) lands in bits 0..297, and the carries of 4096
  // terms need 12 more.
  static constexpr int kLimbs = 5;
  std::uint64_t positive_[kLimbs] = {};
  std::uint64_t negative_[kLimbs] = {};
  bool nan_ = false, plus_infinity_ = false, minus_infinity_ = false;
};

}  // namespace swcu::ptx
