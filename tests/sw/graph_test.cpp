#include "cuwrap/graph.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::module mod =
      cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
  // scale(data, factor, n): data[i] *= factor, run from its PTX by the software driver
  cuwrap::typed_kernel<void(float*, float, int)> k = mod.kernel<void(float*, float, int)>("scale");
};

constexpr int n = 256;

std::vector<float> ones() { return std::vector<float>(n, 1.0f); }

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture,
                    "an explicitly built graph copies, launches and runs host work in order") {
    cuwrap::device_buffer<float> data{ctx, n};
    auto input = ones();
    std::vector<float> output(n);
    std::vector<int> order;
    cuwrap::graph g{ctx};
    const auto in = g.add_copy(data, input);
    const cuwrap::graph_node after_in[] = {in};
    const auto launch =
        g.add_kernel(k, cuwrap::launch_config::linear(n, 64), after_in, data.data(), 3.0f, n);
    const cuwrap::graph_node after_launch[] = {launch};
    const auto out = g.add_copy(output, data, after_launch);
    const cuwrap::graph_node after_out[] = {out};
    g.add_host([&order] { order.push_back(1); }, after_out);
    CHECK(g.nodes().size() == 4);
    CHECK(g.edges().size() == 3);
    CHECK(launch.kind() == cuwrap::node_kind::kernel);
    CHECK(in.kind() == cuwrap::node_kind::memcpy);

    auto exec = g.instantiate();
    exec.launch(s);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 3.0f));
    exec.launch(s);  // replay: the input is copied in again
    s.synchronize();
    CHECK(output == std::vector<float>(n, 3.0f));
    CHECK(order == std::vector{1, 1});
  }

  TEST_CASE_FIXTURE(fixture, "capturing a stream records copies, launches and host work") {
    cuwrap::device_buffer<float> data{ctx, n};
    auto input = ones();
    std::vector<float> output(n);
    int host_runs = 0;
    cuwrap::graph g = [&] {
      auto capture = s.begin_capture();
      CHECK(s.is_capturing());
      CHECK(cuwrap::capture_state(s).status == cuwrap::capture_status::active);
      cuwrap::copy(s, data, input);
      s.launch(k, cuwrap::launch_config::linear(n, 64), data.data(), 2.0f, n);
      cuwrap::copy(s, output, data);
      s.enqueue([&host_runs] { ++host_runs; });
      return capture.end();
    }();
    CHECK_FALSE(s.is_capturing());
    CHECK(host_runs == 0);  // captured, not run
    CHECK(g.nodes().size() == 4);
    auto exec = g.instantiate();
    exec.launch(s);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 2.0f));
    CHECK(host_runs == 1);
  }

  TEST_CASE_FIXTURE(fixture, "dependencies are one node or a braced list or a range of nodes") {
    cuwrap::graph g{ctx};
    const auto a = g.add_empty();
    const auto b = g.add_empty(a);
    const auto c = g.add_empty({a, b});
    const std::vector<cuwrap::graph_node> both{b, c};
    const auto d = g.add_empty(both);
    const auto edges = g.edges();
    const std::vector<cuwrap::graph_edge> expected{{a, b}, {a, c}, {b, c}, {b, d}, {c, d}};
    CHECK(edges.size() == expected.size());
    for (const auto& e : expected) {
      CHECK(std::find(edges.begin(), edges.end(), e) != edges.end());
    }
  }

  TEST_CASE_FIXTURE(fixture,
                    "captured host work runs on every launch and lives as long as the graph") {
    auto counter = std::make_shared<int>(0);
    std::weak_ptr<int> watch = counter;
    std::optional<cuwrap::graph_exec> exec;
    {
      auto capture = s.begin_capture();
      s.enqueue([counter = std::move(counter)] { ++*counter; });
      exec.emplace(capture.end().instantiate());
    }  // the captured graph is gone: the executable graph keeps the callable
    REQUIRE_FALSE(watch.expired());
    for (int i = 0; i < 3; ++i) {
      exec->launch(s);
    }
    s.synchronize();
    CHECK(*watch.lock() == 3);
    exec.reset();
    CHECK(watch.expired());
  }

  TEST_CASE_FIXTURE(fixture,
                    "an exception from captured host work is reported by the capturing stream") {
    cuwrap::graph g = [&] {
      auto capture = s.begin_capture();
      s.enqueue([] { throw std::runtime_error{"captured work failed"}; });
      return capture.end();
    }();
    auto exec = g.instantiate();
    exec.launch(s);
    CHECK_THROWS_WITH_AS(s.synchronize(), "captured work failed", std::runtime_error);
  }

  TEST_CASE_FIXTURE(fixture, "synchronizing a capturing stream is refused") {
    auto capture = s.begin_capture();
    CHECK_THROWS_WITH_AS(s.synchronize(),
                         doctest::Contains("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(
      fixture, "a capture guard left by an exception ends the capture and discards the graph") {
    try {
      auto capture = s.begin_capture();
      s.enqueue([] {});
      throw std::runtime_error{"abandoned"};
    } catch (const std::runtime_error&) {
    }
    CHECK_FALSE(s.is_capturing());
    CHECK(swcuda().live_handles(SWCU_GRAPH) == 0);
    s.synchronize();  // the stream works again
  }

  TEST_CASE_FIXTURE(fixture,
                    "a failed end() that left the capture going: the guard still ends it") {
    {
      auto capture = s.begin_capture();
      s.enqueue([] {});
      // An injected failure returns before the driver ends the capture (as a wrong-thread end
      // in relaxed mode would): the stream is still capturing after end() throws.
      REQUIRE(swcuda().add_fault_rule("cuStreamEndCapture:1:CUDA_ERROR_UNKNOWN") == 0);
      CHECK_THROWS_WITH_AS((void)capture.end(), doctest::Contains("cuStreamEndCapture"),
                           cuwrap::error);
      CHECK(s.is_capturing());
    }  // the guard ends it now
    CHECK_FALSE(s.is_capturing());
    CHECK(swcuda().live_handles(SWCU_GRAPH) == 0);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "end() after an invalidated capture leaves nothing for the guard") {
    auto capture = s.begin_capture();
    CHECK_THROWS((void)s.synchronize());  // invalidates the capture
    CHECK_THROWS_WITH_AS((void)capture.end(),
                         doctest::Contains("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"), cuwrap::error);
    CHECK_FALSE(s.is_capturing());
    CHECK_THROWS_WITH_AS((void)capture.end(), doctest::Contains("already ended"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(fixture,
                    "the host node's callable lives as long as an executable graph uses it") {
    auto counter = std::make_shared<int>(0);
    std::weak_ptr<int> watch = counter;
    std::optional<cuwrap::graph_exec> exec;
    {
      cuwrap::graph g{ctx};
      g.add_host([counter] { ++*counter; });
      exec = g.instantiate();
    }  // the graph is gone; the exec still holds the callable
    counter.reset();
    CHECK_FALSE(watch.expired());
    exec->launch(s);
    s.synchronize();
    CHECK(*watch.lock() == 1);
    exec.reset();
    CHECK(watch.expired());
  }

  TEST_CASE_FIXTURE(fixture, "graph launch is one driver call") {
    cuwrap::graph g{ctx};
    g.add_empty();
    auto exec = g.instantiate();
    const auto calls = calls_made_by([&] { exec.launch(s); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuGraphLaunch") == 1);
  }

  TEST_CASE_FIXTURE(fixture, "an executable graph takes new kernel arguments and new fills") {
    cuwrap::device_buffer<float> data{ctx, n};
    std::vector<float> output(n);
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 1.0f);
    const cuwrap::graph_node after_fill[] = {fill};
    const auto launch =
        g.add_kernel(k, cuwrap::launch_config::linear(n, 64), after_fill, data.data(), 2.0f, n);
    auto exec = g.instantiate();
    exec.set_kernel_params(launch, k, cuwrap::launch_config::linear(n, 64), data.data(), 5.0f, n);
    exec.set_fill_params(fill, data, 2.0f);
    exec.launch(s);
    cuwrap::copy(s, output, data);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 10.0f));
    exec.set_enabled(launch, false);
    CHECK_FALSE(exec.enabled(launch));
    exec.launch(s);
    cuwrap::copy(s, output, data);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 2.0f));
  }

  TEST_CASE_FIXTURE(
      fixture, "a whole-graph update works for the same topology and names the node otherwise") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph a{ctx};
    a.add_fill(data, 1.0f);
    auto exec = a.instantiate();
    cuwrap::graph same_shape{ctx};
    same_shape.add_fill(data, 4.0f);
    exec.update(same_shape);
    exec.launch(s);
    std::vector<float> output(n);
    cuwrap::copy(s, output, data);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 4.0f));

    cuwrap::graph other_kind{ctx};
    other_kind.add_empty();
    CHECK_THROWS_WITH_AS(exec.update(other_kind), doctest::Contains("node"), cuwrap::error);
    cuwrap::graph more_nodes{ctx};
    const auto f = more_nodes.add_fill(data, 1.0f);
    const cuwrap::graph_node after[] = {f};
    more_nodes.add_empty(after);
    CHECK_THROWS_WITH_AS(exec.update(more_nodes), doctest::Contains("topology"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "clones, child graphs, events, dependencies and DOT") {
    cuwrap::graph child{ctx};
    child.add_empty();
    cuwrap::graph g{ctx};
    cuwrap::event e{ctx};
    const auto a = g.add_child(child);
    const auto b = g.add_event_record(e);
    g.add_dependency(a, b);
    const cuwrap::graph_node after_b[] = {b};
    g.add_event_wait(e, after_b);
    CHECK(g.edges().size() == 2);
    const auto copy = g.clone();
    CHECK(copy.nodes().size() == 3);
    const auto dot = g.to_dot();
    CHECK(dot.find("digraph") != std::string::npos);
    auto exec = copy.instantiate();
    exec.launch(s);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "memory alloc and free nodes give memory valid between them") {
    cuwrap::graph g{ctx};
    const auto alloc = g.add_memory_alloc(n * sizeof(float));
    CHECK(alloc.address != 0);
    const cuwrap::graph_node after_alloc[] = {alloc.node};
    const auto span = cuwrap::device_span<float>::from_address(alloc.address, n);
    const auto fill = g.add_fill(span, 7.0f, after_alloc);
    std::vector<float> output(n);
    const cuwrap::graph_node after_fill[] = {fill};
    const auto out = g.add_copy(output, span, after_fill);
    const cuwrap::graph_node after_out[] = {out};
    g.add_memory_free(alloc.address, after_out);
    auto exec = g.instantiate();
    exec.launch(s);
    s.synchronize();
    CHECK(output == std::vector<float>(n, 7.0f));
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: building, instantiating and updating a graph") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      const auto mod =
          cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
      const auto k = mod.kernel<void(float*, float, int)>("scale");
      cuwrap::device_buffer<float> data{ctx, n};
      cuwrap::graph g{ctx};
      const auto fill = g.add_fill(data, 1.0f);
      const cuwrap::graph_node after[] = {fill};
      g.add_kernel(k, cuwrap::launch_config::linear(n, 64), after, data.data(), 2.0f, n);
      g.add_host([] {});
      auto exec = g.instantiate();
      exec.update(g);
      exec.launch(s);
      s.synchronize();
    });
    CHECK(points >= 8);
  }
}
