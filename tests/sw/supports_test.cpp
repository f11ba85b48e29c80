// cuwrap::supports(feature) and cuwrap::profiler_range.
#include "cuwrap/supports.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <utility>

#include "call_checks.hpp"
#include "cuwrap/context.hpp"
#include "cuwrap/driver.hpp"
#include "cuwrap/profiler.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::feature;
using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::sw_fixture;

namespace {

constexpr feature kImplemented[] = {
    feature::memory_pools,   feature::virtual_memory, feature::libraries,
    feature::tensor_maps,    feature::multicast,      feature::conditional_graph_nodes,
    feature::context_events, feature::profiler,
};

}  // namespace

TEST_SUITE("supports") {
  TEST_CASE_FIXTURE(sw_fixture, "the software driver supports what cuwrap wraps of it") {
    REQUIRE(cuwrap::driver_version() >= 13000);
    for (const feature f : kImplemented) {
      INFO(cuwrap::to_string(f));
      CHECK(cuwrap::supports(f));
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "asking makes no driver call once the driver is loaded") {
    CHECK(calls_made_by([] { (void)cuwrap::supports(feature::context_events); }).empty());
  }

  TEST_CASE("every feature has a name and a minimum driver version") {
    CHECK(cuwrap::to_string(feature::green_contexts) == "green_contexts");
    CHECK(cuwrap::to_string(feature::profiler) == "profiler");
    CHECK(cuwrap::minimum_driver_version(feature::context_events) == 12050);
    CHECK(cuwrap::minimum_driver_version(feature::driver_logs) == 12090);
    CHECK(cuwrap::minimum_driver_version(feature::checkpoint) == 12080);
    CHECK(cuwrap::to_string(static_cast<feature>(1000)) == "unknown feature");
    CHECK(cuwrap::minimum_driver_version(static_cast<feature>(1000)) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "an unknown feature is not supported") {
    CHECK_FALSE(cuwrap::supports(static_cast<feature>(1000)));
  }
}

TEST_SUITE("profiler") {
  // cudaProfiler.h: cuProfilerStart "Enables profile collection by the active profiling tool
  // for the current context"; cuProfilerStop disables it.
  TEST_CASE_FIXTURE(sw_fixture, "a profiler range starts and stops collection in its context") {
    cuwrap::context ctx{cuwrap::device::get(0)};
    std::unique_ptr<cuwrap::profiler_range> range;
    check_calls({"cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuProfilerStart", "cuCtxPopCurrent_v2"},
                [&] { range = std::make_unique<cuwrap::profiler_range>(ctx); });
    CHECK_FALSE(cuwrap::current_context().has_value());
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "the range's destructor stops collection with its context current") {
    cuwrap::context ctx{cuwrap::device::get(0)};
    auto range = std::make_unique<cuwrap::profiler_range>(ctx);
    check_calls({"cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuProfilerStop", "cuCtxPopCurrent_v2"},
                [&] { range.reset(); });
    CHECK_FALSE(cuwrap::current_context().has_value());
  }

  TEST_CASE_FIXTURE(sw_fixture, "a profiler range of a moved-from context is a usage error") {
    cuwrap::context gone{cuwrap::device::get(0)};
    cuwrap::context keeper{std::move(gone)};
    CHECK_THROWS_AS(cuwrap::profiler_range{gone}, cuwrap::usage_error);  // NOLINT: moved from
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: a profiler range") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::context ctx{cuwrap::device::get(0)};
      cuwrap::profiler_range range{ctx};
    });
    CHECK(points >= 5);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE("with SWCUDA_DRIVER_VERSION=12040 newer features are not supported") {
    REQUIRE(cuwrap::driver_version() == 12040);
    CHECK_FALSE(cuwrap::supports(feature::context_events));     // 12.5
    CHECK_FALSE(cuwrap::supports(feature::checkpoint));         // 12.8
    CHECK_FALSE(cuwrap::supports(feature::driver_logs));        // 12.9
    CHECK(cuwrap::supports(feature::conditional_graph_nodes));  // 12.3
    CHECK(cuwrap::supports(feature::tensor_maps));
  }
}
