// Pools of every location and the managed memory batch operations on a real device.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace {
std::vector<int> iota(std::size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

bool attribute(const cuwrap::device& dev, CUdevice_attribute which) {
  return dev.raw_attribute(which) != 0;
}
}  // namespace

TEST_SUITE("gpu memory pools") {
  TEST_CASE("pools of the locations the device supports hand out their memory") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    std::vector<cuwrap::pool_location> locations{cuwrap::pool_location::device(dev)};
    if (attribute(dev, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED)) {
      locations.push_back(cuwrap::pool_location::host());
    }
    const int numa = dev.raw_attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    if (attribute(dev, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) && numa >= 0) {
      locations.push_back(cuwrap::pool_location::host_numa(numa));
    }
    if (attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)) {
      locations.push_back(cuwrap::pool_location::managed(dev));
    }
    const auto values = iota(1 << 16);
    for (const auto& location : locations) {
      CAPTURE(location.location_type());
      cuwrap::memory_pool pool{location};
      if (pool.access(dev) != cuwrap::pool_access::read_write) pool.allow_access(dev);
      CHECK(pool.reuse(cuwrap::pool_reuse::allow_opportunistic));
      auto buffer = pool.allocate<int>(s, values.size());
      cuwrap::copy(s, buffer, values);
      std::vector<int> back(values.size());
      cuwrap::copy(s, back, buffer);
      s.synchronize();
      CHECK(back == values);
      if (location.host_accessible()) CHECK(buffer.data()[values.size() - 1] == 65535);
    }
    CHECK(cuwrap::current_pool(dev) == cuwrap::memory_pool::default_pool(dev));
  }

  TEST_CASE("managed memory batch operations on a real device") {
    const auto dev = cuwrap::device::get(0);
    if (!attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)) return;
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::managed_buffer<int> a{ctx, 1 << 16};
    std::fill(a.begin(), a.end(), 3);
    const cuwrap::managed_range ranges[] = {a.span()};
    cuwrap::prefetch(s, ranges, cuwrap::memory_location::on(dev));
    s.synchronize();
    CHECK(a.last_prefetch_location() == cuwrap::memory_location::on(dev));
    CHECK(a[100] == 3);
    cuwrap::discard_and_prefetch(s, ranges, cuwrap::memory_location::host());
    s.synchronize();
    std::fill(a.begin(), a.end(), 4);  // written after the discard: defined again
    CHECK(a[100] == 4);
    cuwrap::discard(s, ranges);
    s.synchronize();
  }
}
