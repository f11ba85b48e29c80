// FilterSum (src/ptx/filter_sum.hpp): the exact weighted sum behind texture filtering, rounded
// once to float with ties away from zero, as an H200's texture unit rounds.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "ptx/filter_sum.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace {

using swcu::ptx::FilterSum;

float sum_of(std::initializer_list<std::pair<float, std::uint32_t>> terms, unsigned shift) {
  FilterSum s;
  for (const auto& [value, weight] : terms) s.add(value, weight);
  return s.result(shift);
}

TEST_CASE("filter_sum: weights that sum to the divisor give back an equal value exactly") {
  for (const float v : {1.0f / 9.0f, -3.5f, 1e-40f, std::numeric_limits<float>::max(), 0.1f}) {
    CHECK(sum_of({{v, 100}, {v, 156}}, 8) == v);
    CHECK(sum_of({{v, 3}, {v, 60}, {v, 31}, {v, 162}}, 8) == v);
  }
}

TEST_CASE("filter_sum: a tie rounds away from zero, not to even") {
  // 2^24 + 1 lies halfway between 2^24 and 2^24 + 2: round-to-even would give 2^24.
  CHECK(sum_of({{16777216.0f, 1}, {1.0f, 1}}, 0) == 16777218.0f);
  CHECK(sum_of({{-16777216.0f, 1}, {-1.0f, 1}}, 0) == -16777218.0f);
  // What an H200 returned for (T0 + T1) / 2 with T0 = 0.125 and T1 = 1/9 (a tie in float).
  CHECK(std::bit_cast<std::uint32_t>(sum_of({{0.125f, 128}, {1.0f / 9.0f, 128}}, 8)) ==
        0x3df1c71du);
  // Half the smallest subnormal rounds up to it.
  CHECK(sum_of({{std::numeric_limits<float>::denorm_min(), 1}}, 1) ==
        std::numeric_limits<float>::denorm_min());
  // Below half a unit rounds down.
  CHECK(sum_of({{16777216.0f, 4}, {1.0f, 1}}, 2) == 16777216.0f);
}

TEST_CASE("filter_sum: the sum is exact before the one rounding") {
  // Float arithmetic in this order loses the small term; the exact sum keeps it.
  CHECK(sum_of({{1e30f, 1}, {-1e30f, 1}, {1e-30f, 1}}, 0) == 1e-30f);
  CHECK(sum_of({{1.0f, 255}, {std::ldexp(1.0f, -60), 1}, {-1.0f, 255}}, 0) ==
        std::ldexp(1.0f, -60));
  // 0.2 * 56 + (1/6) * 200 over 256: the correctly rounded sum (an H200's result).
  CHECK(std::bit_cast<std::uint32_t>(sum_of({{0.2f, 56}, {1.0f / 6.0f, 200}}, 8)) == 0x3e322222u);
  CHECK(sum_of({{std::numeric_limits<float>::min(), 1}}, 8) == std::ldexp(1.0f, -134));
}

TEST_CASE("filter_sum: zero, infinities, NaN and overflow") {
  CHECK(sum_of({}, 8) == 0.0f);
  CHECK(!std::signbit(sum_of({{2.0f, 3}, {-2.0f, 3}}, 8)));
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(sum_of({{inf, 1}, {1.0f, 255}}, 8) == inf);
  CHECK(sum_of({{-inf, 1}, {1.0f, 255}}, 8) == -inf);
  CHECK(std::isnan(sum_of({{inf, 1}, {-inf, 1}}, 8)));
  CHECK(std::isnan(sum_of({{nan, 1}, {1.0f, 255}}, 8)));
  CHECK(sum_of({{nan, 0}, {1.0f, 256}}, 8) == 1.0f);  // a zero weight reads nothing
  const float big = std::numeric_limits<float>::max();
  CHECK(sum_of({{big, 256}, {big, 256}}, 8) == inf);
  FilterSum many;
  for (int i = 0; i < 4096; ++i) many.add(big, (1u << 20) - 1);
  CHECK(many.result(0) == inf);
  FilterSum cancel;
  for (int i = 0; i < 2048; ++i) {
    cancel.add(big, (1u << 20) - 1);
    cancel.add(-big, (1u << 20) - 1);
  }
  cancel.add(0.5f, 2);
  CHECK(cancel.result(0) == 1.0f);
}

// x rounded to float, ties away from zero, by comparing with the neighbours (x exact).
float round_away(long double x) {
  const float nearest = static_cast<float>(x);
  const float other =
      std::nextafter(nearest, x > static_cast<long double>(nearest) ? INFINITY : -INFINITY);
  const long double middle =
      (static_cast<long double>(nearest) + static_cast<long double>(other)) / 2;
  if (x != middle) return nearest;
  return std::fabs(other) > std::fabs(nearest) ? other : nearest;
}

TEST_CASE("filter_sum: random sums agree with an exact long double reference") {
  // Values k 2^e with |k| <= 2^16 and -20 <= e <= 0, weights below 2^16: a sum of 8 terms spans
  // at most 2^-20..2^35, exact in a long double's 64-bit significand, so rounding it once is the
  // right answer.
  std::mt19937 rng{20261127};
  std::uniform_int_distribution<int> integer{-65536, 65536};
  std::uniform_int_distribution<int> exponent{-20, 0};
  std::uniform_int_distribution<std::uint32_t> weight{0, 65535};
  int ties = 0;
  for (int round = 0; round < 20000; ++round) {
    FilterSum sum;
    long double exact = 0;
    const bool small = round % 3 == 0;  // weights of 1..3: ties become likely
    for (int k = 0; k < 8; ++k) {
      const float v = std::ldexp(static_cast<float>(integer(rng)), exponent(rng));
      const std::uint32_t w = small ? weight(rng) % 3 + 1 : weight(rng);
      sum.add(v, w);
      exact += static_cast<long double>(v) * w;
    }
    const long double divided = exact / 65536;
    const float want = round_away(divided);
    if (want != static_cast<float>(divided)) ++ties;  // round-to-even goes the other way
    REQUIRE(std::bit_cast<std::uint32_t>(sum.result(16)) == std::bit_cast<std::uint32_t>(want));
  }
  CHECK(ties > 0);
}

}  // namespace
