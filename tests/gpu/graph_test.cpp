#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu graph") {
  TEST_CASE("captured and built graphs run real kernels and an update loop changes the factor") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    const auto mod =
        cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.cubin");
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    constexpr int n = 4096;
    cuwrap::device_buffer<float> data{ctx, n};
    std::vector<float> host(n);
    const auto config = cuwrap::launch_config::linear(n, 256);

    cuwrap::graph captured = [&] {
      auto capture = s.begin_capture();
      cuwrap::fill(s, data, 1.0f);
      s.launch(scale, config, data.data(), 3.0f, n);
      return capture.end();
    }();
    auto exec = captured.instantiate();
    exec.launch(s);
    cuwrap::copy(s, host, data);
    s.synchronize();
    CHECK(host == std::vector<float>(n, 3.0f));

    cuwrap::graph built{ctx};
    const auto fill = built.add_fill(data, 1.0f);
    const cuwrap::graph_node after[] = {fill};
    const auto node = built.add_kernel(scale, config, after, data.data(), 2.0f, n);
    auto built_exec = built.instantiate(cuwrap::instantiate_flags::upload);
    for (int factor = 1; factor <= 5; ++factor) {
      built_exec.set_kernel_params(node, scale, config, data.data(), static_cast<float>(factor), n);
      built_exec.launch(s);
      cuwrap::copy(s, host, data);
      s.synchronize();
      CHECK(host[0] == static_cast<float>(factor));
      CHECK(host[n - 1] == static_cast<float>(factor));
    }
    exec.update(built);  // same shape as the captured graph: fill then kernel
    exec.launch(s);
    cuwrap::copy(s, host, data);
    s.synchronize();
    CHECK(host[0] == 2.0f);
  }

  TEST_CASE("host nodes and the DOT picture on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    int runs = 0;
    cuwrap::graph g{ctx};
    g.add_host([&runs] { ++runs; });
    auto exec = g.instantiate();
    exec.launch(s);
    exec.launch(s);
    s.synchronize();
    CHECK(runs == 2);
    CHECK(g.to_dot().find("digraph") != std::string::npos);
  }
}
