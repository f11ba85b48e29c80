#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace {
std::string kernels_file(const char* extension) {
  return std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels." + extension;
}
}  // namespace

TEST_SUITE("gpu module") {
  TEST_CASE("saxpy runs from PTX, cubin and fatbin with the right results") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    constexpr int n = 1 << 16;
    std::vector<float> x(n);
    std::iota(x.begin(), x.end(), 0.0f);
    for (const char* extension : {"ptx", "cubin", "fatbin"}) {
      CAPTURE(extension);
      const auto mod = cuwrap::module::load_file(ctx, kernels_file(extension));
      const auto saxpy = mod.kernel<void(float, const float*, float*, int)>("saxpy");
      cuwrap::device_buffer<float> dx{ctx, n}, dy{ctx, n};
      cuwrap::copy(s, dx, x);
      cuwrap::fill(s, dy, 1.0f);
      s.launch(saxpy, cuwrap::launch_config::linear(n, 256), 3.0f, dx.data(), dy.data(), n);
      std::vector<float> y(n);
      cuwrap::copy(s, y, dy);
      s.synchronize();
      bool ok = true;
      for (int i = 0; i < n; ++i)
        ok = ok && y[static_cast<std::size_t>(i)] == 3.0f * static_cast<float>(i) + 1.0f;
      CHECK(ok);
    }
  }

  TEST_CASE("the real cuFuncGetParamInfo agrees with the layouts the software driver parses") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto mod = cuwrap::module::load_file(ctx, kernels_file("cubin"));
    const auto saxpy = mod.kernel("saxpy");
    REQUIRE(saxpy.layout_known());
    const std::vector<cuwrap::kernel_param> expected{{0, 4}, {8, 8}, {16, 8}, {24, 4}};
    CHECK(
        std::equal(saxpy.params().begin(), saxpy.params().end(), expected.begin(), expected.end()));
    const auto with_struct = mod.kernel("with_struct");
    const std::vector<cuwrap::kernel_param> struct_layout{{0, 16}, {16, 1}, {18, 2}, {24, 8}};
    CHECK(std::equal(with_struct.params().begin(), with_struct.params().end(),
                     struct_layout.begin(), struct_layout.end()));
    CHECK_THROWS_AS(mod.kernel<void(float, float*)>("saxpy"), cuwrap::error);
  }

  TEST_CASE("globals, constants and dynamic shared memory on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto mod = cuwrap::module::load_file(ctx, kernels_file("ptx"));
    const std::vector<float> coefficients{2.0f, 0.0f, 0.0f, 0.0f};
    cuwrap::copy(mod.global<float>("coefficients"), coefficients);
    auto uses_shared = mod.kernel<void(float*)>("uses_shared");
    constexpr unsigned threads = 128;
    cuwrap::device_buffer<float> out{ctx, threads};
    s.launch(uses_shared, cuwrap::launch_config{{1}, {threads}, threads * sizeof(float)},
             out.data());
    std::vector<float> host(threads);
    cuwrap::copy(s, host, out);
    s.synchronize();
    for (unsigned i = 0; i < threads; ++i)
      CHECK(host[i] == 2.0f * static_cast<float>(threads - 1 - i));

    const auto count_up = mod.kernel<void(int)>("count_up");
    cuwrap::zero(mod.global<int>("counter"));
    s.launch(count_up, cuwrap::launch_config{{1}, {1}}, 5);
    s.launch(count_up, cuwrap::launch_config{{1}, {1}}, 6);
    std::vector<int> counter(1);
    cuwrap::copy(s, counter, mod.global<int>("counter"));
    s.synchronize();
    CHECK(counter[0] == 11);
  }

  TEST_CASE("a library kernel runs in a context it was not loaded for") {
    std::ifstream in{kernels_file("fatbin"), std::ios::binary};
    const std::string image{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    const auto lib = cuwrap::library::load(image);
    cuwrap::context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto scale = lib.kernel<void(float*, float, int)>("scale");
    cuwrap::device_buffer<float> data{ctx, 64};
    cuwrap::fill(s, data, 2.0f);
    s.launch(scale, cuwrap::launch_config::linear(64, 64), data.data(), 4.0f, 64);
    std::vector<float> host(64);
    cuwrap::copy(s, host, data);
    s.synchronize();
    CHECK(host == std::vector<float>(64, 8.0f));
  }

  TEST_CASE("a cluster launch on sm_90") {
    const auto dev = cuwrap::device::get(0);
    if (dev.compute_capability().major < 9) {
      MESSAGE("skipped: clusters need sm_90");
      return;
    }
    cuwrap::primary_context ctx{dev};
    cuwrap::stream s{ctx};
    const auto mod = cuwrap::module::load_file(ctx, kernels_file("cubin"));
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    cuwrap::device_buffer<float> data{ctx, 1024};
    cuwrap::fill(s, data, 1.0f);
    auto config = cuwrap::launch_config::linear(1024, 128);
    config.with_cluster({2});
    CHECK(cuwrap::occupancy::max_active_clusters(scale, config) > 0);
    s.launch(scale, config, data.data(), 5.0f, 1024);
    std::vector<float> host(1024);
    cuwrap::copy(s, host, data);
    s.synchronize();
    CHECK(host == std::vector<float>(1024, 5.0f));
  }
}
