// Conditional graph nodes (if, if-else, while, switch) whose conditions are set by real kernels
// (tests/kernels/graph_kernels.cu, compiled by nvcc, run from their PTX by the software driver's
// interpreter) calling cudaGraphSetConditional; results compared with host references.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuwrap/capture.hpp"
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
  cuwrap::module mod = cuwrap::module::load_file(
      ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/graph_kernels.fatbin");
  cuwrap::typed_kernel<void(CUgraphConditionalHandle, const int*)> set_if_positive =
      mod.kernel<void(CUgraphConditionalHandle, const int*)>("set_if_positive");
  cuwrap::typed_kernel<void(CUgraphConditionalHandle, const unsigned*)> set_to =
      mod.kernel<void(CUgraphConditionalHandle, const unsigned*)>("set_to");
  cuwrap::typed_kernel<void(CUgraphConditionalHandle, int*)> count_down =
      mod.kernel<void(CUgraphConditionalHandle, int*)>("count_down");
  cuwrap::typed_kernel<void(float*, float, float, int)> axpb =
      mod.kernel<void(float*, float, float, int)>("axpb");
  const cuwrap::launch_config one{{1}, {32}};
  const cuwrap::launch_config all = cuwrap::launch_config::linear(n, 64);

  std::vector<float> initial() const {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - 2.0f;
    return v;
  }
  std::vector<float> read(cuwrap::device_buffer<float>& data) {
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    return out;
  }
};

// The host reference of axpb.
void axpb_reference(std::vector<float>& v, float a, float b) {
  for (float& x : v) x = x * a + b;
}

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "an if-else node runs the body a kernel's condition picks") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::device_buffer<int> flag{ctx, 1};
    cuwrap::graph g{ctx};
    const auto condition = g.make_condition();
    const auto set = g.add_kernel(set_if_positive, one, {}, condition, flag.data());
    const auto branch = g.add_conditional(condition, cuwrap::conditional::if_else, set);
    CHECK(branch.node.kind() == cuwrap::node_kind::conditional);
    CHECK(branch.kind == cuwrap::conditional::if_else);
    REQUIRE(branch.bodies.size() == 2);
    // The "then" body node by node; the "else" body captured from a stream into the body.
    (void)branch.body(0).add_kernel(axpb, all, {}, data.data(), 2.0f, 0.0f, n);
    {
      auto capture = cuwrap::capture_into(s, branch.body(1));
      s.launch(axpb, all, data.data(), 1.0f, -1.0f, n);
      capture.end();
    }
    CHECK(branch.body(1).nodes().size() == 1);
    auto exec = g.instantiate();

    for (const int value : {3, -2, 0, 1}) {
      CAPTURE(value);
      auto expected = initial();
      cuwrap::copy(s, data, expected);
      cuwrap::copy(s, flag, std::vector<int>{value});
      exec.launch(s);
      if (value > 0) {
        axpb_reference(expected, 2.0f, 0.0f);
      } else {
        axpb_reference(expected, 1.0f, -1.0f);
      }
      CHECK(read(data) == expected);
    }
    CHECK_THROWS_AS((void)branch.body(2), cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(fixture, "a while node runs its body kernels until a kernel clears it") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::device_buffer<int> counter{ctx, 1};
    cuwrap::graph g{ctx};
    const auto condition = g.make_condition(0, cuwrap::condition_reset::each_launch);
    const auto init = g.add_fill(counter, 5);
    const auto test = g.add_kernel(set_if_positive, one, init, condition, counter.data());
    const auto loop = g.add_conditional(condition, cuwrap::conditional::while_loop, test);
    const auto step = loop.body().add_kernel(axpb, all, {}, data.data(), 1.5f, 1.0f, n);
    (void)loop.body().add_kernel(count_down, one, step, condition, counter.data());
    auto exec = g.instantiate();

    for (const int iterations : {5, 0, 1, 12}) {
      CAPTURE(iterations);
      exec.set_fill_params(init, counter, iterations);
      auto expected = initial();
      cuwrap::copy(s, data, expected);
      exec.launch(s);
      for (int i = 0; i < iterations; ++i) axpb_reference(expected, 1.5f, 1.0f);
      CHECK(read(data) == expected);
      std::vector<int> left(1, -1);
      cuwrap::copy(s, left, counter);
      s.synchronize();
      CHECK(left[0] == 0);
    }
  }

  TEST_CASE_FIXTURE(fixture, "a switch node runs the body its condition's value names, or none") {
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::device_buffer<unsigned> selector{ctx, 1};
    cuwrap::graph g{ctx};
    const auto condition = g.make_condition();
    const auto set = g.add_kernel(set_to, one, {}, condition, selector.data());
    const auto cases = g.add_conditional(condition, cuwrap::conditional::switch_of(3), set);
    REQUIRE(cases.bodies.size() == 3);
    for (unsigned i = 0; i < 3; ++i) {
      (void)cases.body(i).add_kernel(axpb, all, {}, data.data(), 1.0f,
                                     10.0f * (static_cast<float>(i) + 1.0f), n);
    }
    auto exec = g.instantiate();
    for (const unsigned value : {0U, 2U, 1U, 3U, 70U}) {
      CAPTURE(value);
      auto expected = initial();
      cuwrap::copy(s, data, expected);
      cuwrap::copy(s, selector, std::vector<unsigned>{value});
      exec.launch(s);
      if (value < 3) axpb_reference(expected, 1.0f, 10.0f * (static_cast<float>(value) + 1.0f));
      CHECK(read(data) == expected);
    }
  }

  TEST_CASE_FIXTURE(fixture, "an if node's default value applies at each launch unless told not") {
    // CU_GRAPH_COND_ASSIGN_DEFAULT: "Applied at the beginning of each graph execution"
    // (cuGraphConditionalHandleCreate). Here no kernel sets the condition: the default decides.
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::graph g{ctx};
    const auto yes = g.make_condition(1);
    const auto no = g.make_condition(0);
    const auto a = g.add_conditional(yes, cuwrap::conditional::if_then);
    (void)a.body().add_kernel(axpb, all, {}, data.data(), 1.0f, 1.0f, n);
    const auto b = g.add_conditional(no, cuwrap::conditional::if_then, a.node);
    (void)b.body().add_kernel(axpb, all, {}, data.data(), 1.0f, 100.0f, n);
    auto exec = g.instantiate();
    auto expected = initial();
    cuwrap::copy(s, data, expected);
    exec.launch(s);
    exec.launch(s);
    axpb_reference(expected, 1.0f, 2.0f);
    CHECK(read(data) == expected);
  }

  TEST_CASE_FIXTURE(fixture, "conditional nodes are one driver call and name their kind on error") {
    cuwrap::graph g{ctx};
    const auto condition = g.make_condition();
    const auto calls = calls_made_by(
        [&] { (void)g.add_conditional(condition, cuwrap::conditional::switch_of(4)); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuGraphAddNode_v2") == 1);
    // A while node has exactly one body (CUDA_CONDITIONAL_NODE_PARAMS::size): the driver
    // refuses two, and the error names the kind asked for.
    const cuwrap::conditional_kind two_body_while{CU_GRAPH_COND_TYPE_WHILE, 2};
    CHECK_THROWS_WITH_AS((void)g.add_conditional(condition, two_body_while),
                         doctest::Contains("while, 2 bodies"), cuwrap::error);
    // A condition made for another graph is not this graph's.
    cuwrap::graph other{ctx};
    const auto foreign = other.make_condition();
    CHECK_THROWS_AS((void)g.add_conditional(foreign, cuwrap::conditional::if_then), cuwrap::error);
  }
}
