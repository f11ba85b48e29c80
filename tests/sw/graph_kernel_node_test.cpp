// Kernel nodes of untyped kernels (checked as untyped launches are) and kernel nodes' launch
// attributes (cuGraphKernelNodeSetAttribute / GetAttribute).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/graph.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;

namespace {

constexpr int n = 128;

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::module mod =
      cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
  // scale(data, factor, n): data[i] *= factor
  cuwrap::kernel scale = mod.kernel("scale");
  const cuwrap::launch_config config = cuwrap::launch_config::linear(n, 32);
};

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "an untyped kernel node runs and is checked like an untyped launch") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 1.5f);
    // Adding a kernel node is one driver call, after one cuCtxGetCurrent: NVIDIA's driver
    // crashes in cuGraphAddKernelNode without a current context, so the graph's is made current
    // when it is not (a push and a pop more).
    const auto calls = [&] {
      const cuwrap::scoped_current_context current{ctx};
      return calls_made_by([&] { (void)g.add_kernel(scale, config, fill, data, 4.0f, int{n}); });
    }();
    CHECK(cuwrap::testing::total(calls) == 2);
    CHECK(calls.count("cuGraphAddKernelNode_v2") == 1);
    CHECK(calls.count("cuCtxGetCurrent") == 1);
    REQUIRE_FALSE(cuwrap::current_context().has_value());
    cuwrap::graph other{ctx};
    const auto without =
        calls_made_by([&] { (void)other.add_kernel(scale, config, {}, data, 4.0f, int{n}); });
    CHECK(cuwrap::testing::total(without) == 4);
    CHECK(without.count("cuCtxPushCurrent_v2") == 1);
    CHECK_FALSE(cuwrap::current_context().has_value());  // restored
    auto exec = g.instantiate();
    exec.launch(s);
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out == std::vector<float>(n, 6.0f));  // 1.5 * 4, as on the host

    // The layout the driver reports: three parameters of 8, 4 and 4 bytes.
    CHECK_THROWS_WITH_AS((void)g.add_kernel(scale, config, {}, data, 4.0f),
                         doctest::Contains("scale"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)g.add_kernel(scale, config, {}, data, 4.0, int{n}),
                         doctest::Contains("argument 1"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "launch attributes become kernel node attributes") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    auto with = config;
    with.with_cooperative().with_priority(-1);
    const cuwrap::scoped_current_context current{ctx};
    const auto calls =
        calls_made_by([&] { (void)g.add_kernel(scale, with, {}, data.data(), 2.0f, int{n}); });
    // One call for the node (after cuCtxGetCurrent) and one per attribute.
    CHECK(cuwrap::testing::total(calls) == 4);
    CHECK(calls.at("cuGraphKernelNodeSetAttribute") == 2);
    const auto node = g.nodes().at(0);
    CHECK(node.attribute(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).cooperative == 1);
    CHECK(node.attribute(CU_LAUNCH_ATTRIBUTE_PRIORITY).priority == -1);

    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = 2;
    cluster.value.clusterDim.y = 1;
    cluster.value.clusterDim.z = 1;
    node.set_attribute(cluster);
    CHECK(node.attribute(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).clusterDim.x == 2);

    // cuda.h: CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY is "valid for streams" only.
    CUlaunchAttribute stream_only{};
    stream_only.id = CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY;
    CHECK_THROWS_WITH_AS(node.set_attribute(stream_only),
                         doctest::Contains("cuGraphKernelNodeSetAttribute"), cuwrap::error);
    // Attributes belong to kernel nodes.
    const auto empty = g.add_empty();
    CHECK_THROWS_WITH_AS((void)empty.attribute(CU_LAUNCH_ATTRIBUTE_PRIORITY),
                         doctest::Contains("empty node"), cuwrap::error);

    // The node still runs (a cooperative grid of 4 blocks in clusters of 2).
    std::vector<float> out(n, 3.0f);
    cuwrap::copy(s, data, out);
    auto exec = g.instantiate(cuwrap::instantiate_flags::use_node_priority);
    exec.launch(s);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out == std::vector<float>(n, 6.0f));
  }
}
