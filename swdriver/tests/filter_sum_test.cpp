// FilterSum (src/ptx/filter_sum.hpp): the exact weighted sum behind texture filtering, rounded
// once to float with ties away from zero, as an H200's texture unit rounds.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "ptx/filter_sum.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

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

}  // namespace
