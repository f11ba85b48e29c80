#include "cuwrap/event.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <utility>

#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

static_assert(!std::is_copy_constructible_v<cuwrap::event>);
static_assert(std::is_nothrow_move_assignable_v<cuwrap::event>);
static_assert(std::is_convertible_v<cuwrap::event&, cuwrap::event_ref>);

TEST_SUITE("event") {
  TEST_CASE_FIXTURE(sw_fixture, "an event is created without timing unless asked") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event plain{ctx};
    cuwrap::event timed{ctx, cuwrap::event_flags::timing};
    CHECK(swcuda().live_handles(SWCU_EVENT) == 2);
    s.record(plain);
    s.record(timed);
    s.synchronize();
    CHECK_THROWS_WITH_AS((void)cuwrap::elapsed(plain, timed),
                         doctest::Contains("created with event_flags::timing"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "elapsed time between recorded events is measured") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event start{ctx, cuwrap::event_flags::timing};
    cuwrap::event stop{ctx, cuwrap::event_flags::timing};
    s.record(start);
    s.enqueue([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
    s.record(stop);
    stop.synchronize();
    const auto t = cuwrap::elapsed(start, stop);
    CHECK(t.count() >= 0.0f);
    CHECK(cuwrap::elapsed(stop, start).count() <= 0.0f);
  }

  TEST_CASE_FIXTURE(sw_fixture, "elapsed time of an event never recorded is a clear error") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::event start{ctx, cuwrap::event_flags::timing};
    cuwrap::event stop{ctx, cuwrap::event_flags::timing};
    CHECK_THROWS_WITH_AS((void)cuwrap::elapsed(start, stop), doctest::Contains("and recorded"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "timing with interprocess is refused before calling the driver") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_AS(
          cuwrap::event(ctx, cuwrap::event_flags::timing | cuwrap::event_flags::interprocess),
          cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "an unrecorded event is done") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::event e{ctx, cuwrap::event_flags::blocking_sync};
    CHECK(e.is_done());
    CHECK_NOTHROW(e.synchronize());
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "move assignment destroys the previous event and release and adopt work") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::event a{ctx};
    cuwrap::event b{ctx};
    a = std::move(b);
    CHECK(swcuda().live_handles(SWCU_EVENT) == 1);
    CUevent raw = a.release();
    CHECK(a.get() == nullptr);
    auto adopted = cuwrap::event::adopt(raw, ctx);
    CHECK(adopted.get() == raw);
    CHECK(swcuda().live_handles(SWCU_EVENT) == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "creating an event costs one call when the context is current") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    const auto calls = calls_made_by([&] { cuwrap::event e{ctx}; });
    CHECK(calls.count("cuEventCreate") == 1);
    CHECK(calls.count("cuCtxGetCurrent") == 1);
    CHECK(calls.count("cuEventDestroy_v2") == 1);
    CHECK(cuwrap::testing::total(calls) == 3);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: creating, recording and timing events") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::event start{ctx, cuwrap::event_flags::timing};
      cuwrap::event stop{ctx, cuwrap::event_flags::timing};
      s.record(start);
      s.record(stop);
      stop.synchronize();
      (void)cuwrap::elapsed(start, stop);
    });
    CHECK(points >= 8);
  }
}
