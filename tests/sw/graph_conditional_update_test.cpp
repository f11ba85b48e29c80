// Updating executable graphs with conditional nodes (cuda.h, cuGraphExecUpdate: "Conditional
// nodes: Changing node parameters is not supported. Changing parameters of nodes within the
// conditional body graph is subject to the rules above. Conditional handle flags and default
// values are updated as part of the graph update."): body nodes take new parameters through the
// per-node setters, the condition's default through exec.update; kernels from
// tests/kernels/graph_kernels.cu, results compared with host references.
#include <doctest/doctest.h>

#include <string>
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
  cuwrap::module mod = cuwrap::module::load_file(
      ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/graph_kernels.fatbin");
  cuwrap::typed_kernel<void(float*, float, float, int)> axpb =
      mod.kernel<void(float*, float, float, int)>("axpb");
  const cuwrap::launch_config all = cuwrap::launch_config::linear(n, 32);

  std::vector<float> read(cuwrap::device_buffer<float>& data) {
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    return out;
  }
};

std::vector<float> ramp() {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i) - 10.0f;
  return v;
}

void axpb_reference(std::vector<float>& v, float a, float b) {
  for (float& x : v) x = x * a + b;
}

// A graph of one if-else node on a condition with `initial` as its default (reset at each
// launch): body 0 runs axpb(data, 2, 1), body 1 axpb(data, 1, -3).
struct branching {
  cuwrap::graph g;
  cuwrap::conditional_node node;
  cuwrap::graph_node then_kernel;

  branching(fixture& f, cuwrap::device_buffer<float>& data, unsigned initial)
      : g{f.ctx},
        node{g.add_conditional(g.make_condition(initial), cuwrap::conditional::if_else)},
        then_kernel{node.body(0).add_kernel(f.axpb, f.all, {}, data.data(), 2.0f, 1.0f, n)} {
    (void)node.body(1).add_kernel(f.axpb, f.all, {}, data.data(), 1.0f, -3.0f, n);
  }
};

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "a kernel node in a conditional body takes new arguments") {
    cuwrap::device_buffer<float> data{ctx, n};
    auto expected = ramp();
    cuwrap::copy(s, data, expected);
    branching b{*this, data, 1};
    auto exec = b.g.instantiate();
    exec.launch(s);
    axpb_reference(expected, 2.0f, 1.0f);
    CHECK(read(data) == expected);
    // cuGraphExecKernelNodeSetParams on the body's node: the next launch runs axpb(data, 0.5, 4).
    exec.set_kernel_params(b.then_kernel, axpb, all, data.data(), 0.5f, 4.0f, n);
    exec.launch(s);
    axpb_reference(expected, 0.5f, 4.0f);
    CHECK(read(data) == expected);
    // Disabling it makes the body do nothing.
    exec.set_enabled(b.then_kernel, false);
    exec.launch(s);
    CHECK(read(data) == expected);
  }

  TEST_CASE_FIXTURE(fixture, "exec.update takes a condition's new default value") {
    cuwrap::device_buffer<float> data{ctx, n};
    auto expected = ramp();
    cuwrap::copy(s, data, expected);
    branching taken{*this, data, 1};
    branching not_taken{*this, data, 0};
    auto exec = taken.g.instantiate();
    exec.launch(s);
    axpb_reference(expected, 2.0f, 1.0f);
    CHECK(read(data) == expected);
    exec.update(not_taken.g);  // same topology; its condition starts at 0: the else body runs
    exec.launch(s);
    axpb_reference(expected, 1.0f, -3.0f);
    CHECK(read(data) == expected);
  }
}
