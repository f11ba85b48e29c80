// Instantiating graphs (cuGraphInstantiateWithParams: flags, upload, the result and error node
// in errors), node labels (the call site of each add_*, in errors and in to_labelled_dot), and
// capturing a stream into a graph that exists (cuStreamBeginCaptureToGraph,
// cuStreamUpdateCaptureDependencies).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuwrap/capture.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/detail/graph_labels.hpp"
#include "cuwrap/graph.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;

namespace {

constexpr int n = 64;

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::module mod =
      cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
  // scale(data, factor, n): data[i] *= factor
  cuwrap::typed_kernel<void(float*, float, int)> scale =
      mod.kernel<void(float*, float, int)>("scale");
};

// "graph_instantiate_test.cpp:<line>"
std::string here(int line) { return "graph_instantiate_test.cpp:" + std::to_string(line); }

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "instantiating is one driver call, with or without an upload") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    (void)g.add_fill(data, 2.0f);
    {
      const cuwrap::scoped_current_context current{ctx};
      const auto calls = calls_made_by([&] { (void)g.instantiate(); });
      CHECK(cuwrap::testing::total(calls) == 2);  // instantiate, and destroy the result
      CHECK(calls.count("cuGraphInstantiateWithParams") == 1);
    }
    // With no context current the driver refuses it (CUDA_ERROR_INVALID_CONTEXT, as NVIDIA's
    // does): it is made again in the graph's context, which is current only meanwhile.
    REQUIRE_FALSE(cuwrap::current_context().has_value());
    const auto again = calls_made_by([&] { (void)g.instantiate(); });
    CHECK(again.count("cuGraphInstantiateWithParams") >= 1);
    CHECK(again.count("cuCtxPushCurrent_v2") == 1);
    CHECK_FALSE(cuwrap::current_context().has_value());
    // CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD with hUploadStream: uploaded while instantiating.
    auto exec = g.instantiate(s);
    exec.launch(s);
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out == std::vector<float>(n, 2.0f));
  }

  TEST_CASE_FIXTURE(fixture, "a device-launch instantiation refusing a node names its call site") {
    // cuGraphInstantiateWithParams: a graph for device launch holds only kernel, memcpy and
    // memset nodes (and child graphs of them); another node fails the instantiation with
    // CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED and that node as hErrNode_out.
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 1.0f);
    const int host_line = __LINE__ + 1;
    const auto host = g.add_host([] {}, fill);
    CHECK(host.label().ends_with(here(host_line)));
    CHECK_THROWS_WITH_AS((void)g.instantiate(cuwrap::instantiate_flags::device_launch),
                         doctest::Contains("not supported for device launch"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)g.instantiate(cuwrap::instantiate_flags::device_launch),
                         doctest::Contains("host node added at"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)g.instantiate(cuwrap::instantiate_flags::device_launch),
                         doctest::Contains(here(host_line).c_str()), cuwrap::error);
    // "CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH ... cannot be used in conjunction with
    // CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH" (cuda.h): the flags are named.
    cuwrap::graph kernels_only{ctx};
    (void)kernels_only.add_fill(data, 1.0f);
    CHECK_THROWS_WITH_AS(
        (void)kernels_only.instantiate(cuwrap::instantiate_flags::device_launch |
                                       cuwrap::instantiate_flags::auto_free_on_launch),
        doctest::Contains("auto_free_on_launch|device_launch"), cuwrap::error);
    // Without the host node, the graph instantiates for device launch.
    (void)kernels_only.instantiate(cuwrap::instantiate_flags::device_launch);
  }

  TEST_CASE_FIXTURE(fixture,
                    "labels name each node's call site, in DOT too, and go with the graph") {
    const std::size_t before = cuwrap::detail::labelled_nodes();
    {
      cuwrap::device_buffer<float> data{ctx, n};
      cuwrap::graph g{ctx};
      const int line = __LINE__ + 1;
      const auto fill = g.add_fill(data, 1.0f);
      const auto kernel =
          g.add_kernel(scale, cuwrap::launch_config::linear(n, 32), fill, data.data(), 3.0f, n);
      const auto cond = g.make_condition();
      const auto branch = g.add_conditional(cond, cuwrap::conditional::if_then, kernel);
      const auto inner = branch.body().add_empty();
      CHECK(fill.label().ends_with(here(line)));
      // A kernel node's call site is where its config argument is (on the call's second line).
      CHECK(kernel.label().ends_with(here(line + 2)));
      CHECK(branch.node.label().ends_with(here(line + 4)));
      CHECK(inner.label().ends_with(here(line + 5)));
      CHECK(cuwrap::detail::labelled_nodes() == before + 4);

      const std::string dot = g.to_labelled_dot();
      CHECK(dot.starts_with("digraph"));
      CHECK(dot.find("memset\\n") != std::string::npos);
      CHECK(dot.find(here(line + 2)) != std::string::npos);
      CHECK(dot.find("n0 -> n1;") != std::string::npos);
      CHECK(dot.find("n1 -> n2;") != std::string::npos);

      // A captured node was not added through cuwrap's add_*: no label.
      cuwrap::graph captured = [&] {
        auto capture = s.begin_capture();
        cuwrap::zero(s, data);
        return capture.end();
      }();
      REQUIRE(captured.nodes().size() == 1);
      CHECK(captured.nodes()[0].label().empty());
    }
    CHECK(cuwrap::detail::labelled_nodes() == before);  // destroyed with their graph
  }

  TEST_CASE_FIXTURE(fixture, "a stream captures into a graph that exists, after given nodes") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 1.0f);
    {
      auto capture = cuwrap::capture_into(s, g, fill);
      s.launch(scale, cuwrap::launch_config::linear(n, 32), data.data(), 4.0f, n);
      // The next work depends on nothing captured so far: a new root.
      cuwrap::update_capture_dependencies(s, {}, cuwrap::capture_dependencies::set);
      cuwrap::zero(s, data);
      capture.end();
    }
    CHECK_FALSE(s.is_capturing());
    const auto nodes = g.nodes();
    REQUIRE(nodes.size() == 3);
    const auto edges = g.edges();
    REQUIRE(edges.size() == 1);
    CHECK(edges[0].from == fill);
    CHECK(edges[0].to.kind() == cuwrap::node_kind::kernel);
    const auto root_memsets = std::count_if(nodes.begin(), nodes.end(), [&](cuwrap::graph_node x) {
      return x.kind() == cuwrap::node_kind::memset &&
             std::none_of(edges.begin(), edges.end(),
                          [x](const cuwrap::graph_edge& e) { return e.to == x || e.from == x; });
    });
    CHECK(root_memsets == 1);  // the zero, depending on nothing

    // The fill and the kernel run in order (the zero may run before or after them: remove it).
    cuwrap::graph ordered{ctx};
    const auto f = ordered.add_fill(data, 2.0f);
    {
      auto capture = cuwrap::capture_into(s, ordered, f);
      s.launch(scale, cuwrap::launch_config::linear(n, 32), data.data(), 4.0f, n);
      capture.end();
    }
    auto exec = ordered.instantiate();
    exec.launch(s);
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out == std::vector<float>(n, 8.0f));
  }

  TEST_CASE_FIXTURE(fixture, "a capture into a graph that is not ended is ended by its guard") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    {
      auto capture = cuwrap::capture_into(s, g);
      cuwrap::zero(s, data);
      CHECK(s.is_capturing());
    }
    CHECK_FALSE(s.is_capturing());
    CHECK(g.nodes().size() == 1);  // what was captured stays in the graph
  }
}
