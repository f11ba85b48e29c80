// Context-wide events (cuCtxRecordEvent, cuCtxWaitEvent), context flags, creation options
// (CUctxCreateParams) and records with flags (cuEventRecordWithFlags).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/capture.hpp"
#include "cuwrap/context.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/graph.hpp"
#include "cuwrap/stream.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

TEST_SUITE("context") {
  TEST_CASE_FIXTURE(sw_fixture, "record_event captures the work of every stream of a context") {
    cuwrap::context ctx{cuwrap::device::get(0)};
    cuwrap::stream a{ctx};
    cuwrap::stream b{ctx};
    cuwrap::event e{ctx};
    std::vector<int> order;
    a.enqueue([&order] { order.push_back(1); });
    b.enqueue([&order] { order.push_back(2); });
    check_one_call("cuCtxRecordEvent", [&] { ctx.record_event(e); });
    e.synchronize();
    CHECK(order == std::vector<int>{1, 2});
    CHECK(e.is_done());
  }

  TEST_CASE_FIXTURE(sw_fixture, "wait_event makes the context's later work wait for an event") {
    cuwrap::context producer{cuwrap::device::get(0)};
    cuwrap::context consumer{cuwrap::device::get(0)};
    cuwrap::stream upstream{producer};
    cuwrap::stream downstream{consumer};
    cuwrap::event e{producer};
    std::vector<int> order;
    upstream.enqueue([&order] { order.push_back(1); });
    producer.record_event(e);
    check_one_call("cuCtxWaitEvent", [&] { consumer.wait_event(e); });  // another context's
    downstream.enqueue([&order] { order.push_back(2); });
    consumer.synchronize();
    CHECK(order == std::vector<int>{1, 2});
  }

  TEST_CASE_FIXTURE(sw_fixture, "record_event refuses an event of another context, naming it") {
    cuwrap::context first{cuwrap::device::get(0)};
    cuwrap::context second{cuwrap::device::get(0)};
    cuwrap::event e{first};
    CHECK_THROWS_WITH_AS(
        second.record_event(e),
        doctest::Contains("cuCtxRecordEvent: invalid handle (CUDA_ERROR_INVALID_HANDLE)"),
        cuwrap::error);
    cuwrap::event moved{first};
    cuwrap::event taken{std::move(moved)};
    CHECK_THROWS_AS(first.record_event(moved), cuwrap::usage_error);  // NOLINT: moved from
    CHECK_THROWS_AS(first.wait_event(moved), cuwrap::usage_error);    // NOLINT: moved from
    cuwrap::context gone{cuwrap::device::get(0)};
    cuwrap::context keeper{std::move(gone)};
    CHECK_THROWS_AS(gone.record_event(e), cuwrap::usage_error);  // NOLINT: moved from
    CHECK_THROWS_AS(gone.wait_event(e), cuwrap::usage_error);    // NOLINT: moved from
  }

  TEST_CASE_FIXTURE(sw_fixture, "set_flags replaces the flags of a context that is not current") {
    cuwrap::context ctx{cuwrap::device::get(0), cuwrap::context_flags::sched_spin};
    ctx.set_flags(cuwrap::context_flags::sched_blocking_sync | cuwrap::context_flags::sync_memops);
    CHECK(ctx.flags() ==
          (cuwrap::context_flags::sched_blocking_sync | cuwrap::context_flags::sync_memops));
    CHECK_FALSE(cuwrap::current_context().has_value());  // the guard restored the stack
    CHECK_THROWS_WITH_AS(ctx.set_flags(static_cast<cuwrap::context_flags>(0x1000)),
                         doctest::Contains("cuCtxSetFlags(flags 4096): invalid value"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(ctx.set_flags(static_cast<cuwrap::context_flags>(0x1000)),
                         doctest::Contains("flags 4096"), cuwrap::error);
  }

  // Execution affinity needs MPS and CIG a graphics client: the software driver has neither
  // and refuses them as a real driver without them does.
  TEST_CASE_FIXTURE(sw_fixture, "creation options the driver cannot honour are named in errors") {
    const cuwrap::device dev = cuwrap::device::get(0);
    CHECK_THROWS_WITH_AS((cuwrap::context{dev, cuwrap::context_flags::sched_auto, {.sm_count = 4}}),
                         doctest::Contains("CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"), cuwrap::error);
    CHECK_THROWS_WITH_AS((cuwrap::context{dev, cuwrap::context_flags::sched_auto, {.sm_count = 4}}),
                         doctest::Contains("execution affinity of 4 SMs"), cuwrap::error);
    int queue = 0;
    CHECK_THROWS_WITH_AS(
        (cuwrap::context{dev,
                         cuwrap::context_flags::sched_auto,
                         {.cig = cuwrap::cig_params{cuwrap::cig_data_type::nv_blob, &queue}}}),
        doctest::Contains("CUDA_ERROR_NOT_SUPPORTED"), cuwrap::error);
    CHECK_THROWS_WITH_AS(
        (cuwrap::context{
            dev, cuwrap::context_flags::sched_auto, {.sm_count = 2, .cig = cuwrap::cig_params{}}}),
        doctest::Contains("(CUDA_ERROR_INVALID_VALUE)"), cuwrap::error);
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 0);
    cuwrap::context plain{dev, cuwrap::context_flags::sched_yield, cuwrap::context_options{}};
    CHECK(plain.flags() == cuwrap::context_flags::sched_yield);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: context events and flags") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::context ctx{cuwrap::device::get(0), cuwrap::context_flags::sched_auto,
                          cuwrap::context_options{}};
      cuwrap::event e{ctx};
      ctx.record_event(e);
      ctx.wait_event(e);
      ctx.set_flags(cuwrap::context_flags::sched_spin);
    });
    CHECK(points >= 8);
  }
}

TEST_SUITE("event") {
  // CU_EVENT_RECORD_EXTERNAL: "Event is captured in the graph as an external event node when
  // performing stream capture"; outside capture the driver refuses the flag.
  TEST_CASE_FIXTURE(sw_fixture, "an external record in a capture becomes an event record node") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    auto capture = s.begin_capture();
    check_one_call("cuEventRecordWithFlags",
                   [&] { e.record(s, cuwrap::event_record_flags::external); });
    const cuwrap::graph g = capture.end();
    const std::vector<cuwrap::graph_node> nodes = g.nodes();
    REQUIRE(nodes.size() == 1);
    CHECK(nodes[0].kind() == cuwrap::node_kind::event_record);
    // An ordinary record with flags works anywhere.
    e.record(s, cuwrap::event_record_flags::none);
    e.synchronize();
    CHECK_THROWS_WITH_AS(e.record(s, cuwrap::event_record_flags::external),
                         doctest::Contains("valid only in a capturing stream"), cuwrap::error);
    cuwrap::event moved{ctx};
    cuwrap::event taken{std::move(moved)};
    CHECK_THROWS_AS(moved.record(s, cuwrap::event_record_flags::none),  // NOLINT: moved from
                    cuwrap::usage_error);
  }
}
