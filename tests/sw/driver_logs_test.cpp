// cuwrap's driver logs: reading them, subscribing, and attaching them to errors (opt-in).
#include "cuwrap/driver_logs.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/supports.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

namespace {

constexpr const char* kEntry =
    "cuTensorMapReplaceAddress: tensorMap is NULL or not 64-byte aligned";

// A driver call the software driver refuses with a log entry, checked like any cuwrap call.
void refused_call(const cuwrap::owning_context& ctx) {
  const cuwrap::scoped_current_context current{ctx};
  cuwrap::check(cuwrap::detail::driver().cuTensorMapReplaceAddress(nullptr, nullptr),
                "cuTensorMapReplaceAddress");
}

std::string message_of(const cuwrap::owning_context& ctx) {
  try {
    refused_call(ctx);
  } catch (const cuwrap::error& e) {
    return e.what();
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_SUITE("driver logs") {
  TEST_CASE_FIXTURE(sw_fixture, "errors carry the driver's log entries only when asked") {
    REQUIRE(cuwrap::supports(cuwrap::feature::driver_logs));
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    CHECK(message_of(ctx).find("driver log:") == std::string::npos);  // off by default
    CHECK(cuwrap::attach_driver_logs_to_errors(true));
    const std::string with = message_of(ctx);
    CHECK(with.find(std::string{"driver log: "} + kEntry) != std::string::npos);
    // Only the entries made since the previous error.
    const std::string again = message_of(ctx);
    CHECK(again.find(kEntry) == again.rfind(kEntry));
    CHECK(cuwrap::attach_driver_logs_to_errors(false));
    CHECK(message_of(ctx).find("driver log:") == std::string::npos);
    CHECK(cuwrap::driver_logs().find(kEntry) != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a subscription receives entries for its life") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    std::vector<std::pair<cuwrap::log_level, std::string>> received;
    {
      const cuwrap::log_subscription sub{[&received](cuwrap::log_level level, std::string_view m) {
        received.emplace_back(level, std::string{m});
      }};
      CHECK_THROWS_AS(refused_call(ctx), cuwrap::error);
    }
    CHECK_THROWS_AS(refused_call(ctx), cuwrap::error);
    REQUIRE(received.size() == 1);
    CHECK(received[0].first == cuwrap::log_level::error);
    CHECK(received[0].second == kEntry);
  }
}
