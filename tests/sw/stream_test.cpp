#include "cuwrap/stream.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/event.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

static_assert(!std::is_copy_constructible_v<cuwrap::stream>);
static_assert(!std::is_copy_assignable_v<cuwrap::stream>);
static_assert(std::is_nothrow_move_assignable_v<cuwrap::stream>);
static_assert(std::is_convertible_v<cuwrap::stream&, cuwrap::stream_ref>);
static_assert(!std::is_constructible_v<cuwrap::stream_ref, int>);
static_assert(std::is_same_v<cuwrap::stream_ref::native_handle_type, CUstream>);

TEST_SUITE("stream") {
  TEST_CASE_FIXTURE(sw_fixture, "a stream is non-blocking by default and belongs to its context") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    CHECK(swcuda().live_handles(SWCU_STREAM) == 1);
    CHECK(s.flags() == cuwrap::stream_flags::non_blocking);
    CHECK(s.priority() == 0);
    CHECK(s.context() == ctx);
    cuwrap::stream blocking{ctx, {.flags = cuwrap::stream_flags::blocking}};
    CHECK(blocking.flags() == cuwrap::stream_flags::blocking);
    CHECK(s.id() != blocking.id());
    CHECK(swcuda().context_stack_depth() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "priorities at both ends of the range are kept") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto range = ctx.stream_priorities();
    cuwrap::stream high{ctx, {.priority = range.greatest}};
    cuwrap::stream low{ctx, {.priority = range.least}};
    CHECK(high.priority() == range.greatest);
    CHECK(low.priority() == range.least);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a priority outside the range throws naming the range, before creating") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto range = ctx.stream_priorities();
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(cuwrap::stream(ctx, {.priority = range.greatest - 1}),
                           doctest::Contains("outside the context's range"), cuwrap::error);
    });
    CHECK(calls.count("cuStreamCreateWithPriority") == 0);
    CHECK(swcuda().live_handles(SWCU_STREAM) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "creating a stream costs one call when the context is current") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    std::unique_ptr<cuwrap::stream> s;
    const auto calls = calls_made_by([&] { s = std::make_unique<cuwrap::stream>(ctx); });
    CHECK(cuwrap::testing::total(calls) == 2);  // cuCtxGetCurrent + cuStreamCreate
    CHECK(calls.count("cuStreamCreate") == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "hot paths make exactly one driver call") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    check_one_call("cuEventRecord", [&] { s.record(e); });
    check_one_call("cuEventRecord", [&] { e.record(s); });
    check_one_call("cuStreamWaitEvent", [&] { s.wait(e); });
    check_one_call("cuStreamSynchronize", [&] { s.synchronize(); });
    check_one_call("cuStreamQuery", [&] { CHECK(s.is_done()); });
    check_one_call("cuEventQuery", [&] { CHECK(e.is_done()); });
    check_one_call("cuEventSynchronize", [&] { e.synchronize(); });
    check_calls({"cuStreamGetCaptureInfo_v3", "cuLaunchHostFunc"}, [&] { s.enqueue([] {}); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "host work runs in stream order and owns its callable") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    auto order = std::make_shared<std::vector<int>>();
    for (int i = 0; i < 4; ++i) {
      auto payload = std::make_unique<int>(i);  // move-only: the stream must own the copy
      s.enqueue([order, payload = std::move(payload)] { order->push_back(*payload); });
    }
    s.synchronize();
    CHECK(*order == std::vector{0, 1, 2, 3});
    CHECK(order.use_count() == 1);  // every callable was destroyed after running
  }

  TEST_CASE_FIXTURE(sw_fixture, "an exception from host work is rethrown by the next synchronize") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::stream other{ctx};
    s.enqueue([] { throw std::runtime_error{"host work failed"}; });
    other.synchronize();  // another stream's error is not reported here
    CHECK_THROWS_WITH_AS(s.synchronize(), "host work failed", std::runtime_error);
    CHECK_NOTHROW(s.synchronize());  // reported once
  }

  TEST_CASE_FIXTURE(sw_fixture, "calling the driver from host work is not permitted") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    s.enqueue([&s] { (void)s.is_done(); });
    try {
      s.synchronize();
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::not_permitted);
    }
  }

  TEST_CASE_FIXTURE(
      sw_fixture, "a moved-from stream is empty and move assignment destroys the previous stream") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream a{ctx};
    cuwrap::stream b{ctx};
    const auto handle_b = b.get();
    CHECK(swcuda().live_handles(SWCU_STREAM) == 2);
    a = std::move(b);
    CHECK(swcuda().live_handles(SWCU_STREAM) == 1);
    CHECK(a.get() == handle_b);
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move): empty, not the NULL default stream
    cuwrap::stream c{std::move(a)};
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(c.get() == handle_b);
  }

  TEST_CASE_FIXTURE(sw_fixture, "release() and adopt() hand the native handle over") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    CUstream raw = s.release();
    CHECK(s.empty());
    CHECK(swcuda().live_handles(SWCU_STREAM) == 1);
    {
      auto adopted = cuwrap::stream::adopt(raw, ctx);
      CHECK(adopted.get() == raw);
    }
    CHECK(swcuda().live_handles(SWCU_STREAM) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a stream keeps its context alive") {
    std::unique_ptr<cuwrap::stream> s;
    {
      cuwrap::context ctx{cuwrap::device::get(0)};
      s = std::make_unique<cuwrap::stream>(ctx);
    }
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
    s->synchronize();
    s.reset();
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "the legacy and per-thread default streams can be used") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    int ran = 0;
    cuwrap::stream_ref::legacy().enqueue([&ran] { ++ran; });
    cuwrap::stream_ref::per_thread().enqueue([&ran] { ++ran; });
    cuwrap::stream_ref::legacy().synchronize();
    cuwrap::stream_ref::per_thread().synchronize();
    CHECK(ran == 2);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a destroyed stream's handle is rejected") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    CUstream stale{};
    {
      cuwrap::stream s{ctx};
      stale = s.get();
    }
    CHECK_THROWS_WITH_AS(cuwrap::stream_ref{stale}.synchronize(),
                         doctest::Contains("CUDA_ERROR_INVALID_HANDLE"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "waiting on an event orders two streams") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream producer{ctx};
    cuwrap::stream consumer{ctx};
    cuwrap::event ready{ctx};
    std::vector<int> order;
    producer.enqueue([&order] { order.push_back(1); });
    producer.record(ready);
    consumer.wait(ready);
    consumer.enqueue([&order] { order.push_back(2); });
    consumer.synchronize();
    CHECK(order == std::vector{1, 2});
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: creating streams and using them") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::stream high{ctx, {.priority = ctx.stream_priorities().greatest}};
      s.enqueue([] {});
      s.synchronize();
    });
    CHECK(points >= 8);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture, "in deferred mode a stream is not done until it is synchronized") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    int ran = 0;
    s.enqueue([&ran] { ++ran; });
    CHECK_FALSE(s.is_done());
    CHECK(ran == 0);
    s.synchronize();
    CHECK(ran == 1);
    CHECK(s.is_done());
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "in deferred mode an event is done once its stream is synchronized") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    s.enqueue([] {});
    s.record(e);
    CHECK_FALSE(e.is_done());
    e.synchronize();
    CHECK(e.is_done());
    CHECK(s.is_done());
  }
}
