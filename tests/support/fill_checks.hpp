// A check shared by the tests of synchronous fills with and without a current context.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace cuwrap::testing {

/// Fills 1-, 2- and 4-byte buffers of `ctx` with fill() and part of one with zero(), all
/// synchronous, and checks what copy() reads back.
inline void check_fill_patterns(const cuwrap::owning_context& ctx) {
  cuwrap::device_buffer<std::uint8_t> bytes{ctx, 5};
  cuwrap::device_buffer<std::int16_t> shorts{ctx, 5};
  cuwrap::device_buffer<float> floats{ctx, 5};
  cuwrap::fill(bytes, std::uint8_t{0xab});
  cuwrap::fill(shorts, std::int16_t{-2});
  cuwrap::fill(floats, 1.5f);
  std::vector<std::uint8_t> b(5);
  std::vector<std::int16_t> s(5);
  std::vector<float> f(5);
  cuwrap::copy(b, bytes);
  cuwrap::copy(s, shorts);
  cuwrap::copy(f, floats);
  CHECK(b == std::vector<std::uint8_t>(5, 0xab));
  CHECK(s == std::vector<std::int16_t>(5, -2));
  CHECK(f == std::vector<float>(5, 1.5f));
  cuwrap::zero(floats.span().subspan(1, 2));
  cuwrap::copy(f, floats);
  CHECK(f == std::vector<float>{1.5f, 0.0f, 0.0f, 1.5f, 1.5f});
}

}  // namespace cuwrap::testing
