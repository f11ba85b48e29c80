// Per-node updates of executable graphs: host callables (and how long the old and new ones
// live), event record and wait nodes, child graphs.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/graph.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

namespace {

constexpr int n = 64;

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
};

// A callable that counts its runs in *runs and owns a token: the token expires when the
// callable (every copy of it) is destroyed.
auto counting(std::shared_ptr<int> token, int& runs) {
  return [token = std::move(token), &runs] { ++runs; };
}

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(
      fixture, "a replaced host callable runs from the next launch and both live while needed") {
    int a_runs = 0, b_runs = 0, c_runs = 0;
    auto a = std::make_shared<int>(0), b = std::make_shared<int>(0), c = std::make_shared<int>(0);
    const std::weak_ptr<int> watch_a = a, watch_b = b, watch_c = c;
    std::optional<cuwrap::graph> g{std::in_place, ctx};
    const auto node = g->add_host(counting(std::move(a), a_runs));
    std::optional<cuwrap::graph_exec> exec{g->instantiate()};

    exec->set_host(node, counting(std::move(b), b_runs));
    exec->launch(s);
    s.synchronize();
    CHECK(a_runs == 0);
    CHECK(b_runs == 1);
    // The replaced callable still belongs to the graph and the executable graph (user objects).
    CHECK_FALSE(watch_a.expired());

    exec->set_host(node, counting(std::move(c), c_runs));
    exec->launch(s);
    exec->launch(s);
    s.synchronize();
    CHECK(b_runs == 1);
    CHECK(c_runs == 2);
    g.reset();  // the node's graph is gone: the executable graph keeps all three
    CHECK_FALSE(watch_a.expired());
    CHECK_FALSE(watch_b.expired());  // kept until the executable graph goes
    CHECK_FALSE(watch_c.expired());
    exec->launch(s);
    s.synchronize();
    CHECK(c_runs == 3);

    exec.reset();
    CHECK(watch_a.expired());
    CHECK(watch_b.expired());
    CHECK(watch_c.expired());
  }

  TEST_CASE_FIXTURE(fixture, "event nodes record and wait for the events they are given") {
    cuwrap::event first{ctx, cuwrap::event_flags::timing};
    cuwrap::event second{ctx, cuwrap::event_flags::timing};
    cuwrap::event start{ctx, cuwrap::event_flags::timing};
    cuwrap::graph g{ctx};
    const auto record = g.add_event_record(first);
    const auto wait = g.add_event_wait(first, record);
    auto exec = g.instantiate();
    exec.set_event_record(record, second);
    exec.set_event_wait(wait, second);
    s.record(start);
    exec.launch(s);
    s.synchronize();
    // `second` was recorded by the launch: timing from `start` works; `first` never was.
    CHECK(cuwrap::elapsed(start, second).count() >= 0.0f);
    CHECK_THROWS_AS((void)cuwrap::elapsed(start, first), cuwrap::error);
    // A record node takes no wait's event kind of update, and the reverse.
    CHECK_THROWS_WITH_AS(exec.set_event_wait(record, first),
                         doctest::Contains("cuGraphExecEventWaitNodeSetEvent"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "a child graph node takes the parameters of a child of its shape") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph child{ctx};
    (void)child.add_fill(data, 1.0f);
    cuwrap::graph g{ctx};
    const auto node = g.add_child(child);
    auto exec = g.instantiate();
    cuwrap::graph other{ctx};
    (void)other.add_fill(data, 9.0f);
    exec.set_child(node, other);
    exec.launch(s);
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out == std::vector<float>(n, 9.0f));
    // cuGraphExecChildGraphNodeSetParams: "the topology ... must match".
    cuwrap::graph bigger{ctx};
    const auto f = bigger.add_fill(data, 2.0f);
    (void)bigger.add_empty(f);
    CHECK_THROWS_WITH_AS(exec.set_child(node, bigger),
                         doctest::Contains("cuGraphExecChildGraphNodeSetParams"), cuwrap::error);
  }
}
