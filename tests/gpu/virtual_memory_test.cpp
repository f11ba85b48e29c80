// Virtual memory management, the virtual-memory resource and multicast on a real GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/mr/virtual_memory_resource.hpp"

TEST_SUITE("gpu virtual memory") {
  TEST_CASE("physical memory mapped into a reservation holds data on a real device") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    const std::size_t g = cuwrap::allocation_granularity(cuwrap::memory_location::on(dev));
    CHECK(g > 0);
    cuwrap::physical_memory memory{dev, g};
    CHECK(memory.properties().location == cuwrap::memory_location::on(dev));
    cuwrap::address_reservation range{2 * g};
    auto mapping = range.map(g, memory);
    CHECK(mapping.access(cuwrap::memory_location::on(dev)) == cuwrap::memory_access::none);
    mapping.set_access(dev);
    std::vector<std::uint32_t> values(g / sizeof(std::uint32_t));
    std::iota(values.begin(), values.end(), 7u);
    cuwrap::copy(mapping.span<std::uint32_t>(), values);
    std::vector<std::uint32_t> back(values.size());
    cuwrap::copy(back, mapping.span<std::uint32_t>());
    CHECK(back == values);
  }

  TEST_CASE("a virtual-memory resource allocation grows in place on a real device") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::mr::virtual_memory_resource resource{dev, std::size_t{1} << 30};
    void* const p = resource.allocate(1);
    const std::size_t g = resource.granularity();
    const cuwrap::device_span<std::uint8_t> first{static_cast<std::uint8_t*>(p), g};
    cuwrap::fill(first, std::uint8_t{0x5a});
    resource.grow(p, 3 * g);
    CHECK(resource.mapped_bytes(p) == 3 * g);
    std::vector<std::uint8_t> back(g);
    cuwrap::copy(back, first);
    CHECK(back == std::vector<std::uint8_t>(g, 0x5a));
    resource.deallocate(p, 3 * g);
  }

  TEST_CASE("multicast objects are created where the device supports them") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    if (dev.raw_attribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) == 0) {
      CHECK_THROWS_AS(cuwrap::multicast_object({1, std::size_t{2} << 20}), cuwrap::error);
      return;
    }
    const std::size_t g = cuwrap::multicast_granularity({1, std::size_t{2} << 20});
    cuwrap::multicast_object team{{1, g}};
    team.add_device(dev);
    cuwrap::physical_memory memory{dev, g};
    team.bind(0, memory, 0, g);
    cuwrap::address_reservation range{g};
    auto mc = cuwrap::map(range, 0, team);
    mc.set_access(dev);
    cuwrap::scoped_current_context current{ctx};
    cuwrap::fill(mc.span<std::uint32_t>(), 0x01020304u);
    std::vector<std::uint32_t> back(16);
    cuwrap::copy(back, mc.span<std::uint32_t>().first(16));
    CHECK(back == std::vector<std::uint32_t>(16, 0x01020304u));
  }
}
