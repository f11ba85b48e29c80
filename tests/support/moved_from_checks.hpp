// Assertions for operations on moved-from owners and their views: cuwrap::usage_error with the
// expected message, and not one driver call (software driver only).
#pragma once

#include <doctest/doctest.h>

#include <cuwrap/context.hpp>
#include <cuwrap/device.hpp>
#include <cuwrap/error.hpp>
#include <string>
#include <utility>

#include "sw_fixture.hpp"
#include "swcuda.hpp"

namespace cuwrap::testing {

/// The moved-from tests' fixture: device 0's primary context, current for the test.
struct moved_from_fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

/// Checks that `operation` throws cuwrap::usage_error whose message is `expected` (followed by
/// " at <file>:<line>" when the operation takes a call site), and makes no driver call.
template <class F>
void check_moved_from(const std::string& expected, F&& operation) {
  bool thrown = false;
  const auto calls = calls_made_by([&] {
    try {
      std::forward<F>(operation)();
    } catch (const cuwrap::usage_error& e) {
      thrown = true;
      const std::string what = e.what();
      const bool with_location = what.starts_with(expected + " at ");
      CHECK_MESSAGE((what == expected || with_location), "got: ", what);
      if (with_location) {
        CHECK(e.where().line() != 0);
      }
    }
  });
  CHECK_MESSAGE(thrown, "no cuwrap::usage_error for: ", expected);
  CHECK_MESSAGE(total(calls) == 0, "driver calls were made for: ", expected);
}

/// "cuwrap::<type>::<operation>: this <type> was moved from (or released)".
inline std::string moved_from_message(const std::string& type, const std::string& operation) {
  return "cuwrap::" + type + "::" + operation + ": this " + type + " was moved from (or released)";
}

/// "cuwrap::<type>::<operation>: the <argument> was moved from (or released)".
inline std::string moved_from_argument_message(const std::string& type,
                                               const std::string& operation,
                                               const std::string& argument) {
  return "cuwrap::" + (type.empty() ? std::string{} : type + "::") + operation + ": the " +
         argument + " was moved from (or released)";
}

}  // namespace cuwrap::testing
