#include "cuwrap/launch.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <swcuda/emulation.hpp>  // swcuda::param, to read the launch log's records
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "kernels_fixture.hpp"
#include "launch_log.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::last_launch;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

using fixture = cuwrap::testing::kernels_fixture;

struct pair {
  double a;
  int b;
};

}  // namespace

TEST_SUITE("launch") {
  TEST_CASE_FIXTURE(fixture, "a kernel computes through copy, launch, copy") {
    constexpr int n = 1000;
    std::vector<float> x(n), y(n, 1.0f);
    std::iota(x.begin(), x.end(), 0.0f);
    cuwrap::device_buffer<float> dx{ctx, n}, dy{ctx, n};
    cuwrap::copy(s, dx, x);
    cuwrap::copy(s, dy, y);
    const auto k = mod.kernel<void(float, const float*, float*, int)>("saxpy");
    s.launch(k, cuwrap::launch_config::linear(n, 128), 2.0f, dx.data(), dy.data(), n);
    cuwrap::copy(s, y, dy);
    s.synchronize();
    for (int i = 0; i < n; ++i) {
      REQUIRE(y[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i) + 1.0f);
    }
    const auto launch = last_launch();
    CHECK(std::string{launch.kernel} == "saxpy");
    CHECK(launch.grid[0] == 8);
    CHECK(launch.block[0] == 128);
  }

  TEST_CASE_FIXTURE(fixture, "arguments are packed by the kernel's layout, byte for byte") {
    const auto k = mod.kernel<void(pair, unsigned char, short, long long*)>("with_struct");
    cuwrap::device_buffer<long long> result{ctx, 1};
    auto* out = result.data();
    s.launch(k, cuwrap::launch_config{{1}, {1}}, pair{2.5, 7}, static_cast<unsigned char>('x'),
             short{-3}, out);
    std::vector<long long> sum(1);
    cuwrap::copy(s, sum, result);
    s.synchronize();
    CHECK(sum[0] == 2 + 7 + 'x' - 3);  // the kernel read every argument where it was packed
    const auto launch = last_launch();
    REQUIRE(launch.params_size == 32);
    REQUIRE(launch.param_count == 4);
    pair p{};
    std::memcpy(&p, launch.params, sizeof p);
    CHECK(p.a == 2.5);
    CHECK(p.b == 7);
    CHECK(launch.params[16] == 'x');
    short sh = 0;
    std::memcpy(&sh, launch.params + 18, sizeof sh);
    CHECK(sh == -3);
    long long* ptr = nullptr;
    std::memcpy(&ptr, launch.params + 24, sizeof ptr);
    CHECK(ptr == out);
    CHECK(swcuda::param<short>(launch, 2) == -3);
  }

  TEST_CASE_FIXTURE(fixture, "a launch makes exactly one driver call") {
    const auto k = mod.kernel<void(float*, float, int)>("scale");
    const auto untyped = mod.kernel("scale");
    const auto config = cuwrap::launch_config::linear(100, 64);
    cuwrap::device_buffer<float> buffer{ctx, 100};  // the kernel runs: it needs real memory
    float* data = buffer.data();
    auto calls = calls_made_by([&] { s.launch(k, config, data, 2.0f, 100); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuLaunchKernel") == 1);
    calls = calls_made_by([&] { s.launch(untyped, config, data, 2.0f, 100); });
    CHECK(cuwrap::testing::total(calls) == 1);
    auto with_attributes = config;
    with_attributes.with_priority(-1).with_programmatic_serialization();
    calls = calls_made_by([&] { s.launch(k, with_attributes, data, 2.0f, 100); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuLaunchKernelEx") == 1);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "launch attributes reach the driver") {
    const auto k = mod.kernel<void()>("no_params");
    auto config = cuwrap::launch_config{{4, 2}, {32}};
    config.with_cluster({2, 1}).with_cooperative();
    s.launch(k, config);
    const auto launch = last_launch();
    CHECK(launch.cluster[0] == 2);
    CHECK(launch.cluster[1] == 1);
    CHECK(launch.cooperative == 1);
    CHECK(launch.param_count == 0);
  }

  TEST_CASE_FIXTURE(fixture, "an untyped launch checks count and sizes before calling the driver") {
    const auto k = mod.kernel("scale");
    const auto config = cuwrap::launch_config::linear(10, 32);
    auto* data = reinterpret_cast<float*>(std::uintptr_t{0x1000});
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(
          s.launch(k, config, data, 2.0f),
          doctest::Contains("kernel scale: 2 arguments given; it has 3 parameters"), cuwrap::error);
      CHECK_THROWS_WITH_AS(
          s.launch(k, config, data, 2.0, 10),
          doctest::Contains("kernel scale: argument 1 has 8 bytes; the parameter has 4"),
          cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(fixture, "a block larger than the kernel allows is refused before the driver") {
    const auto k = mod.kernel<void(float*, float, int)>("scale");
    auto* data = reinterpret_cast<float*>(std::uintptr_t{0x1000});
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(
          s.launch(k, cuwrap::launch_config{{1}, {1024}, 1 << 20}, data, 1.0f, 1),
          doctest::Contains("kernel scale: 1048576 bytes of dynamic shared memory; the kernel "
                            "allows"),
          cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(fixture, "a kernel updates a module global, and its launch is logged") {
    const auto k = mod.kernel<void(int)>("count_up");
    const auto counter = mod.global<int>("counter");
    cuwrap::zero(s, counter);
    s.launch(k, cuwrap::launch_config{{2}, {32}}, 3);
    s.launch(k, cuwrap::launch_config{{1}, {1}}, 4);
    std::vector<int> value(1);
    cuwrap::copy(s, value, counter);
    s.synchronize();
    CHECK(value[0] == 7);  // only thread 0 of block 0 adds
    CHECK(std::string{last_launch().kernel} == "count_up");
  }

  TEST_CASE_FIXTURE(fixture, "occupancy queries answer") {
    const auto k = mod.kernel("scale");
    CHECK(cuwrap::occupancy::max_active_blocks_per_multiprocessor(k, 256) > 0);
    const auto suggestion = cuwrap::occupancy::max_potential_block_size(k);
    CHECK(suggestion.block_size > 0);
    CHECK(suggestion.min_grid_size > 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: launching") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      const auto mod =
          cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
      const auto k = mod.kernel<void(float*, float, int)>("scale");
      cuwrap::device_buffer<float> data{ctx, 16};
      s.launch(k, cuwrap::launch_config::linear(16, 16), data.data(), 2.0f, 16);
      s.synchronize();
    });
    CHECK(points >= 8);
  }
}
