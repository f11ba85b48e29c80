// Assertions for operations on moved-from owners and their views: cuwrap::usage_error with the
// expected message, and not one driver call (software driver only).
#pragma once

#include <doctest/doctest.h>

#include <cuwrap/context.hpp>
#include <cuwrap/device.hpp>
#include <cuwrap/error.hpp>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>

#include "sw_fixture.hpp"
#include "swcuda.hpp"

namespace cuwrap::testing {

/// The moved-from tests' fixture: device 0's primary context, current for the test.
struct moved_from_fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

/// What a message says after " at ": the file's name without its directories.
inline std::string file_name_only(const std::source_location& where) {
  const std::string_view path = where.file_name();
  return std::string{path.substr(path.rfind('/') + 1)};
}

/// The usage_error `operation` throws (a failed check, and a default-made error, if none),
/// with the driver calls it made.
template <class F>
std::pair<std::optional<cuwrap::usage_error>, call_counts> usage_error_and_calls(F&& operation) {
  std::optional<cuwrap::usage_error> error;
  const auto calls = calls_made_by([&] {
    try {
      std::forward<F>(operation)();
    } catch (const cuwrap::usage_error& e) {
      error = e;
    }
  });
  return {error, calls};
}

/// Checks that `operation`, which takes a call site, throws cuwrap::usage_error whose message
/// is `expected` followed by " at <file>:<line>" naming the line of the test that called it
/// (this file, within a few lines of the check_moved_from call: where() must be the caller's
/// line, never a line in cuwrap or none), and that it makes no driver call.
template <class F>
void check_moved_from(const std::string& expected, F&& operation,
                      std::source_location test = std::source_location::current()) {
  const auto [error, calls] = usage_error_and_calls(std::forward<F>(operation));
  CHECK_MESSAGE(error.has_value(), "no cuwrap::usage_error for: ", expected);
  CHECK_MESSAGE(total(calls) == 0, "driver calls were made for: ", expected);
  if (!error) {
    return;
  }
  const std::string what = error->what();
  const std::string site = " at " + file_name_only(test) + ":";
  CHECK_MESSAGE(what.starts_with(expected + site), "got: ", what, "; expected: ", expected, site,
                "<line>");
  const auto& where = error->where();
  CHECK_MESSAGE(std::string_view{where.file_name()} == test.file_name(), "where() is in '",
                where.file_name(), "', not the test's file, for: ", expected);
  // The operation's lambda starts on the check's line; clang-format may wrap it.
  CHECK_MESSAGE((where.line() >= test.line() && where.line() <= test.line() + 4),
                "where() is line ", where.line(), ", not the test's line ", test.line(),
                ", for: ", expected);
}

/// Checks that `operation`, an operator or a conversion (which cannot take a call site),
/// throws cuwrap::usage_error whose message is exactly `expected`, with no location
/// (where().line() == 0), and makes no driver call.
template <class F>
void check_moved_from_without_call_site(const std::string& expected, F&& operation) {
  const auto [error, calls] = usage_error_and_calls(std::forward<F>(operation));
  CHECK_MESSAGE(error.has_value(), "no cuwrap::usage_error for: ", expected);
  CHECK_MESSAGE(total(calls) == 0, "driver calls were made for: ", expected);
  if (error) {
    CHECK(std::string{error->what()} == expected);
    CHECK(error->where().line() == 0);
  }
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
