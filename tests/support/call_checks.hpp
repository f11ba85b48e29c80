// Assertions on the driver calls an operation makes (software driver only).
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "swcuda.hpp"

namespace cuwrap::testing {

/// Checks that `operation` makes exactly the calls in `expected`, one call to each.
template <class F>
void check_calls(std::initializer_list<const char*> expected, F&& operation) {
  call_counts wanted;
  for (const char* name : expected) {
    wanted[name] = 1;
  }
  CHECK(calls_made_by(std::forward<F>(operation)) == wanted);
}

/// Checks that `operation` makes exactly one driver call, and that it is `name`.
template <class F>
void check_one_call(const char* name, F&& operation) {
  check_calls({name}, std::forward<F>(operation));
}

}  // namespace cuwrap::testing
