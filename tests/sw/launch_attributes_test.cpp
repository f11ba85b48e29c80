// Every launch attribute through the software driver, and the occupancy calculators (the
// driver's model: 2048 threads, 32 blocks and 228 KiB of shared memory per SM, 1 KiB reserved
// per block, 132 SMs; swdriver/src/exec/launch.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <swcuda/emulation.hpp>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "kernels_fixture.hpp"
#include "launch_log.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::last_launch;
using cuwrap::testing::swcuda;

namespace {

using fixture = cuwrap::testing::kernels_fixture;

// The model's resident blocks per SM for a kernel without static shared memory.
int blocks_per_sm(int block_size, std::size_t dynamic) {
  const int warps = (block_size + 31) / 32;
  const auto by_shared = static_cast<int>(233472 / (dynamic + 1024));
  return std::min({32, 2048 / (warps * 32), by_shared});
}

// The CUDA runtime's search (cudaOccupancyMaxPotentialBlockSize), done on the host: from 1024
// down by warps, the size with the most resident threads, the larger on ties.
std::pair<int, int> best_block(std::size_t (*shared)(int), int limit = 1024) {
  int best = 0, best_blocks = 0;
  for (int size = limit; size > 0; size -= 32) {
    const std::size_t bytes = shared(size);
    const int blocks = bytes > 49152 ? 0 : blocks_per_sm(size, bytes);
    if (blocks * size > best_blocks * best) {
      best = size;
      best_blocks = blocks;
    }
  }
  return {best, best_blocks * 132};
}

std::size_t two_hundred_per_thread(int block) { return static_cast<std::size_t>(block) * 200; }

}  // namespace

TEST_SUITE("launch attributes") {
  TEST_CASE_FIXTURE(fixture, "a launch with every stream-launch attribute runs the kernel") {
    const auto k = mod.kernel<void(float*, float, int)>("scale");
    constexpr int n = 8 * 64;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i);
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::copy(s, data, host);
    cuwrap::event programmatic{ctx};  // timing off: the driver requires it
    cuwrap::event completion{ctx};
    auto config = cuwrap::launch_config{{8}, {64}};
    config
        .with_access_policy_window({data.data(), n * sizeof(float), 0.75f,
                                    cuwrap::access_property::persisting,
                                    cuwrap::access_property::streaming})
        .with_cooperative()
        .with_synchronization_policy(cuwrap::synchronization_policy::blocking_sync)
        .with_cluster({2})
        .with_cluster_scheduling_policy(cuwrap::cluster_scheduling_policy::load_balancing)
        .with_programmatic_serialization()
        .with_programmatic_event(programmatic, true)
        .with_priority(-2)
        .with_memory_sync_domain_map({1, 3})
        .with_memory_sync_domain(cuwrap::memory_sync_domain::remote)
        .with_preferred_cluster({4})
        .with_launch_completion_event(completion)
        .with_shared_memory_carveout(50)
        .with_nvlink_util_centric_scheduling();
    REQUIRE(config.attributes().size() == 14);
    const auto calls = calls_made_by([&] { s.launch(k, config, data, 3.0f, n); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuLaunchKernelEx") == 1);
    const auto launch = last_launch();
    CHECK(launch.cluster[0] == 2);
    CHECK(launch.cooperative == 1);
    CHECK(launch.priority == -2);
    // Both events are recorded after the kernel: waiting on them waits for its results.
    completion.synchronize();
    programmatic.synchronize();
    CHECK(completion.is_done());
    CHECK(programmatic.is_done());
    std::vector<float> out(n);
    cuwrap::copy(s, out, data);
    s.synchronize();
    for (int i = 0; i < n; ++i) REQUIRE(out[static_cast<std::size_t>(i)] == 3.0f * host[i]);
  }

  TEST_CASE_FIXTURE(fixture, "values only the driver can judge are refused by it") {
    const auto k = mod.kernel<void()>("no_params");
    const auto refused = [&](const cuwrap::launch_config& c, CUresult code) {
      try {
        s.launch(k, c);
        FAIL("the launch was accepted");
      } catch (const cuwrap::error& e) {
        CHECK(e.code() == cuwrap::make_error_code(code));
        CHECK(std::string{e.what()}.find("cuLaunchKernelEx") != std::string::npos);
        CHECK(std::string{e.what()}.find("kernel no_params") != std::string::npos);
      }
    };
    // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT is 4: domain id 7 does not exist.
    refused(cuwrap::launch_config{{1}, {32}}.with_memory_sync_domain_map({7, 0}),
            CUDA_ERROR_INVALID_VALUE);
    // cuda.h: the events of PROGRAMMATIC_EVENT and LAUNCH_COMPLETION_EVENT "must disable timing".
    cuwrap::event timed{ctx, cuwrap::event_flags::timing};
    refused(cuwrap::launch_config{{1}, {32}}.with_launch_completion_event(timed),
            CUDA_ERROR_INVALID_VALUE);
    refused(cuwrap::launch_config{{1}, {32}}.with_programmatic_event(timed),
            CUDA_ERROR_INVALID_VALUE);
    // A window larger than CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE (128 MiB - 8 KiB).
    refused(cuwrap::launch_config{{1}, {32}}.with_access_policy_window(
                {nullptr, std::size_t{1} << 30, 0.5f}),
            CUDA_ERROR_INVALID_VALUE);
    // A cooperative grid larger than the device holds at once (32 blocks x 132 SMs).
    refused(cuwrap::launch_config{{32 * 132 + 1}, {32}}.with_cooperative(),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  }

  TEST_CASE_FIXTURE(fixture, "a device-updatable kernel node is for graphs only") {
    const auto k = mod.kernel<void()>("no_params");
    const auto config = cuwrap::launch_config{{1}, {32}}.with_device_updatable_kernel_node();
    // cuda.h: "graphs-only, and passing it to a launch in a non-capturing stream will result in
    // an error" (CUDA_ERROR_INVALID_VALUE).
    CHECK_THROWS_WITH_AS(s.launch(k, config), doctest::Contains("cuLaunchKernelEx"), cuwrap::error);
    // In a capture NVIDIA's driver makes a device-updatable node; the software driver does not
    // model device-side graph updates and says so (CUDA_ERROR_NOT_SUPPORTED, docs).
    auto capture = s.begin_capture();
    try {
      s.launch(k, config);
      FAIL("the captured launch was accepted");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::not_supported);
    }
  }

  TEST_CASE_FIXTURE(fixture,
                    "a preferred cluster must be a multiple of the cluster in the driver") {
    // launch_config checks this too; the raw call shows the driver's own check (cuda.h: x, y
    // multiples of the cluster's and dividing the grid, z equal).
    const CUfunction f = mod.kernel("no_params").get();
    CUlaunchAttribute attrs[2]{};
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim = {2, 1, 1};
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
    CUlaunchConfig c{};
    c.gridDimX = 8;
    c.gridDimY = 2;
    c.gridDimZ = 1;
    c.blockDimX = 32;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s.get();
    c.attrs = attrs;
    c.numAttrs = 2;
    const auto& d = cuwrap::detail::driver();
    attrs[1].value.preferredClusterDim = {4, 1, 1};
    CHECK(d.cuLaunchKernelEx(&c, f, nullptr, nullptr) == CUDA_SUCCESS);
    attrs[1].value.preferredClusterDim = {3, 1, 1};  // not a multiple of 2
    CHECK(d.cuLaunchKernelEx(&c, f, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
    attrs[1].value.preferredClusterDim = {4, 2, 1};  // y divides the grid, a multiple of 1
    CHECK(d.cuLaunchKernelEx(&c, f, nullptr, nullptr) == CUDA_SUCCESS);
    c.gridDimZ = 2;
    attrs[1].value.preferredClusterDim = {4, 1, 2};  // z differs from the cluster's 1
    CHECK(d.cuLaunchKernelEx(&c, f, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "occupancy: blocks, shared memory per block, clusters") {
    const auto k = mod.kernel("no_params");
    CHECK(cuwrap::occupancy::max_active_blocks_per_multiprocessor(k, 256) == blocks_per_sm(256, 0));
    CHECK(cuwrap::occupancy::max_active_blocks_per_multiprocessor(
              k, 128, 20000, cuwrap::occupancy::options::disable_caching_override) ==
          blocks_per_sm(128, 20000));
    // Four blocks per SM leave 228 KiB / 4 - 1 KiB each, capped by the kernel's 48 KiB limit;
    // eight leave 228 KiB / 8 - 1 KiB.
    CHECK(cuwrap::occupancy::available_dynamic_shared_bytes(k, 4, 256) == 49152);
    CHECK(cuwrap::occupancy::available_dynamic_shared_bytes(k, 8, 256) == 233472 / 8 - 1024);
    CHECK(cuwrap::occupancy::available_dynamic_shared_bytes(k, 16, 256) == 0);  // 16 x 256 > 2048
    CHECK_THROWS_WITH_AS((void)cuwrap::occupancy::available_dynamic_shared_bytes(k, 0, 256),
                         doctest::Contains("cuOccupancyAvailableDynamicSMemPerBlock"),
                         cuwrap::error);

    // A configuration without a stream asks about the current context (cuda.h: hStream NULL).
    const cuwrap::scoped_current_context current{ctx};
    const auto clustered = cuwrap::launch_config{{8}, {128}}.with_cluster({2});
    CHECK(cuwrap::occupancy::max_active_clusters(k, clustered) == blocks_per_sm(128, 0) * 132 / 2);
    // The portable limit (8 blocks) without CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED.
    CHECK(cuwrap::occupancy::max_potential_cluster_size(k, clustered) == 8);
    CHECK(cuwrap::occupancy::max_potential_cluster_size(k, cuwrap::launch_config{{8}, {128}}) == 8);
  }

  TEST_CASE_FIXTURE(fixture, "occupancy: the block size when shared memory grows with it") {
    const auto k = mod.kernel("no_params");
    const auto [block, grid] = best_block(&two_hundred_per_thread);
    CHECK(block == 224);  // 5 blocks per SM: 1120 threads
    // A capturing lambda: the trampoline reaches it through its thread_local slot.
    int asked = 0;
    const auto suggestion = cuwrap::occupancy::max_potential_block_size(k, [&](int size) {
      ++asked;
      return two_hundred_per_thread(size);
    });
    CHECK(suggestion.block_size == block);
    CHECK(suggestion.min_grid_size == grid);
    CHECK(asked > 0);
    // With a limit: only sizes up to it are tried.
    const auto limited = cuwrap::occupancy::max_potential_block_size(
        k, [](int size) { return std::size_t(size) * 8; }, 96);
    const auto eight_per_thread = [](int size) { return static_cast<std::size_t>(size) * 8; };
    CHECK(limited.block_size == best_block(eight_per_thread, 96).first);
    CHECK(limited.block_size == 64);  // 32 blocks of 64 fill an SM; 21 of 96 do not

    // Calls nest: the callable may ask for another suggestion; each finds its own callable.
    int inner_block = 0;
    const auto outer = cuwrap::occupancy::max_potential_block_size(k, [&](int size) {
      if (inner_block == 0) {
        inner_block = cuwrap::occupancy::max_potential_block_size(k, [](int) {
                        return std::size_t{0};
                      }).block_size;
      }
      return two_hundred_per_thread(size);
    });
    CHECK(inner_block == 1024);  // no shared memory: full blocks fill an SM
    CHECK(outer.block_size == block);

    // An exception stops the search and comes out of the call, not through the driver: the
    // callable is not asked again after it threw.
    int asked_after = 0;
    const auto throws_at_first = [&asked_after](int) -> std::size_t {
      if (asked_after++ == 0) throw std::runtime_error{"too small"};
      return 0;
    };
    CHECK_THROWS_WITH_AS((void)cuwrap::occupancy::max_potential_block_size(k, throws_at_first),
                         "too small", std::runtime_error);
    CHECK(asked_after == 1);
    // The slot is restored: a fixed-size query after it still works.
    CHECK(cuwrap::occupancy::max_potential_block_size(k).block_size == 1024);
  }
}
