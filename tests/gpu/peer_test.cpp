#include <doctest/doctest.h>

#include <numeric>
#include <optional>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "ipc_parent.hpp"

TEST_SUITE("gpu peer") {
  TEST_CASE("IPC between two processes on one real GPU") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> shared{ctx, 4096};
    std::vector<int> values(4096);
    std::iota(values.begin(), values.end(), 100);
    cuwrap::copy(s, shared, values);
    cuwrap::event ready{ctx, cuwrap::event_flags::interprocess};
    s.record(ready);
    s.synchronize();
    REQUIRE(cuwrap::testing::run_ipc_child(shared, ready) == 0);
    std::vector<int> back(4096);
    cuwrap::copy(back, shared);
    for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == values[i] + 1);
  }

  TEST_CASE("pool IPC between two processes on one real GPU") {
    const auto dev = cuwrap::device::get(0);
    if (!dev.attribute<CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED>() ||
        !dev.attribute<CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED>() ||
        (dev.raw_attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES) &
         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
      MESSAGE("skipped: device 0 has no memory pools shareable as POSIX file descriptors");
      return;
    }
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    const cuwrap::memory_pool pool{dev, options};
    auto shared = pool.allocate<int>(s, 4096);
    std::vector<int> values(4096);
    std::iota(values.begin(), values.end(), 0);
    cuwrap::copy(s, shared, values);
    s.synchronize();  // allocated and written before the other process imports it
    REQUIRE(cuwrap::testing::run_ipc_pool_child(pool, shared) == 0);
    std::vector<int> back(4096);
    cuwrap::copy(back, shared);
    for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == static_cast<int>(2 * i + 1));
  }

  TEST_CASE("peer access and peer copies between real devices") {
    const auto devices = cuwrap::device::all();
    if (devices.size() < 2) {
      MESSAGE("skipped: one GPU; peer access needs two");
      return;
    }
    cuwrap::primary_context a{devices[0]}, b{devices[1]};
    const auto topology = cuwrap::peer_matrix();
    CHECK(topology.devices.size() == devices.size());
    std::optional<cuwrap::peer_access> access;
    if (cuwrap::can_access_peer(devices[0], devices[1])) access.emplace(a, b);
    cuwrap::device_buffer<int> on_a{a, 1024}, on_b{b, 1024};
    std::vector<int> values(1024, 42), back(1024);
    {
      cuwrap::scoped_current_context current{a};
      cuwrap::copy(on_a, values);
    }
    cuwrap::copy_peer(b, on_b, a, on_a);
    {
      cuwrap::scoped_current_context current{b};
      cuwrap::copy(back, on_b);
    }
    CHECK(back == values);
  }
}
