#include "cuwrap/context.hpp"

#include <doctest/doctest.h>

#include <utility>

#include "cuwrap/driver.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

TEST_SUITE("context") {
  TEST_CASE_FIXTURE(sw_fixture, "a primary context is retained for the object's life") {
    const auto dev = cuwrap::device::get(0);
    {
      cuwrap::primary_context ctx{dev};
      CHECK(swcuda().live_handles(SWCU_PRIMARY_CONTEXT) == 1);
      CHECK(ctx.get() != nullptr);
      CHECK(ctx.device() == dev);
      CHECK(cuwrap::primary_context::is_active(dev));
      cuwrap::primary_context second{dev};
      CHECK(second.get() == ctx.get());  // one primary context per device
    }
    CHECK(swcuda().live_handles(SWCU_PRIMARY_CONTEXT) == 0);
    CHECK_FALSE(cuwrap::primary_context::is_active(dev));
  }

  TEST_CASE_FIXTURE(sw_fixture, "a moved-from primary context is empty and releases nothing") {
    cuwrap::primary_context a{cuwrap::device::get(0)};
    const auto handle = a.get();
    cuwrap::primary_context b{std::move(a)};
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    CHECK(a.get() == nullptr);
    CHECK(b.get() == handle);
    CHECK(swcuda().live_handles(SWCU_PRIMARY_CONTEXT) == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "primary context flags can be set and read back") {
    const auto dev = cuwrap::device::get(0);
    const auto before = cuwrap::primary_context::flags(dev);
    cuwrap::primary_context::set_flags(dev, cuwrap::context_flags::sched_blocking_sync);
    CHECK(cuwrap::primary_context::flags(dev) == cuwrap::context_flags::sched_blocking_sync);
    cuwrap::primary_context::set_flags(dev, before);
  }

  TEST_CASE_FIXTURE(sw_fixture, "creating a context leaves the current context unchanged") {
    CHECK_FALSE(cuwrap::current_context().has_value());
    cuwrap::context ctx{cuwrap::device::get(0), cuwrap::context_flags::sched_spin};
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
    CHECK_FALSE(cuwrap::current_context().has_value());
    CHECK(ctx.flags() == cuwrap::context_flags::sched_spin);
    CHECK_FALSE(cuwrap::current_context().has_value());  // the query restored the stack
  }

  TEST_CASE_FIXTURE(sw_fixture, "the scoped guard pushes only when needed and restores") {
    cuwrap::context a{cuwrap::device::get(0)};
    cuwrap::context b{cuwrap::device::get(0)};
    {
      cuwrap::scoped_current_context guard_a{a};
      CHECK(cuwrap::current_context() == a);
      CHECK(swcuda().context_stack_depth() == 1);
      const auto calls = calls_made_by([&] { cuwrap::scoped_current_context again{a}; });
      CHECK(cuwrap::testing::total(calls) == 1);  // one cuCtxGetCurrent, no push or pop
      {
        cuwrap::scoped_current_context guard_b{b};
        CHECK(cuwrap::current_context() == b);
        CHECK(swcuda().context_stack_depth() == 2);
      }
      CHECK(cuwrap::current_context() == a);
    }
    CHECK(swcuda().context_stack_depth() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "context queries: device, limits, priorities, cache config, id") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::context ctx{dev};
    const cuwrap::context_ref ref = ctx;
    CHECK(ref.device() == dev);
    ctx.set_limit(cuwrap::context_limit::stack_size, 4096);
    CHECK(ctx.limit(cuwrap::context_limit::stack_size) == 4096);
    const auto range = ctx.stream_priorities();
    CHECK(range.greatest < range.least);
    ctx.set_cache_config(cuwrap::cache_config::prefer_shared);
    CHECK(ctx.cache_config() == cuwrap::cache_config::prefer_shared);
    cuwrap::context other{dev};
    CHECK(ctx.id() != other.id());
    CHECK_NOTHROW(ctx.synchronize());
    CHECK(swcuda().context_stack_depth() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "move assignment destroys the previous context") {
    cuwrap::context a{cuwrap::device::get(0)};
    cuwrap::context b{cuwrap::device::get(0)};
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 2);
    a = std::move(b);
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a child's lifetime token keeps the context alive") {
    std::shared_ptr<const cuwrap::detail::context_owner> token;
    {
      cuwrap::context ctx{cuwrap::device::get(0)};
      token = ctx.lifetime();
    }
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
    token.reset();
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: creating and using a context") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::context ctx{cuwrap::device::get(0)};
      ctx.set_limit(cuwrap::context_limit::stack_size, 2048);
    });
    CHECK(points >= 5);  // cuDeviceGet, cuCtxCreate, cuCtxPopCurrent, get/push for the limit
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: retaining a primary context") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      (void)ctx.stream_priorities();
    });
    CHECK(points >= 3);
  }

  TEST_CASE_FIXTURE(sw_fixture, "with no current context, current_context() is empty") {
    CHECK_FALSE(cuwrap::current_context().has_value());
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE("with SWCUDA_DRIVER_VERSION=12040 cuCtxCreate names both versions") {
    CHECK(cuwrap::driver_version() == 12040);
    CHECK_THROWS_WITH_AS(cuwrap::context{cuwrap::device::get(0)},
                         doctest::Contains("cuCtxCreate(needs a driver for CUDA 12.5 (12050); the "
                                           "loaded driver is CUDA 12.4 (12040))"),
                         cuwrap::error);
    cuwrap::primary_context still_works{cuwrap::device::get(0)};
    CHECK(still_works.get() != nullptr);
  }
}
