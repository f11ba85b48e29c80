#include "cuwrap/device.hpp"

#include <doctest/doctest.h>

#include <string>
#include <unordered_set>

#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

TEST_SUITE("device") {
  TEST_CASE_FIXTURE(sw_fixture, "the software driver shows one H100-like device by default") {
    REQUIRE(cuwrap::device::count() == 1);
    const auto dev = cuwrap::device::get(0);
    CHECK(dev.ordinal() == 0);
    CHECK(dev.compute_capability() == cuwrap::compute_capability{9, 0});
    CHECK(dev.multiprocessor_count() == 132);
    CHECK(dev.warp_size() == 32);
    CHECK(dev.max_threads_per_block() == 1024);
    CHECK(dev.shared_memory_per_block() == 49152);
    CHECK(dev.shared_memory_per_block_optin() > dev.shared_memory_per_block());
    CHECK(dev.clock_rate_khz() > 0);
    CHECK(dev.memory_clock_rate_khz() > 0);
    CHECK(dev.total_memory() > (std::size_t{1} << 30));
    CHECK_FALSE(dev.name().empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "typed attributes: capabilities are bool, sizes are size_t") {
    const auto dev = cuwrap::device::get(0);
    const auto unified = dev.attribute<CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING>();
    static_assert(std::is_same_v<decltype(unified), const bool>);
    CHECK(unified);
    const auto l2 = dev.attribute<CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE>();
    static_assert(std::is_same_v<decltype(l2), const std::size_t>);
    CHECK(l2 > 0);
    const auto sms = dev.attribute<CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT>();
    static_assert(std::is_same_v<decltype(sms), const int>);
    CHECK(sms == dev.raw_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    static_assert(
        std::is_same_v<
            cuwrap::device_attribute_t<CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES>, int>);
    static_assert(
        std::is_same_v<cuwrap::device_attribute_t<CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED>,
                       bool>);
  }

  TEST_CASE_FIXTURE(sw_fixture, "an invalid ordinal names the valid range") {
    for (int ordinal : {1, -1, 100}) {
      CAPTURE(ordinal);
      try {
        (void)cuwrap::device::get(ordinal);
        FAIL("no exception");
      } catch (const cuwrap::error& e) {
        CHECK(e.code() == cuwrap::errc::invalid_device);
        CHECK(std::string{e.what()}.find("ordinal " + std::to_string(ordinal) +
                                         "; valid ordinals are 0 to 0") != std::string::npos);
      }
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "an unknown attribute names the attribute and the device") {
    try {
      (void)cuwrap::device::get(0).raw_attribute(CU_DEVICE_ATTRIBUTE_MAX);
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::invalid_value);
      CHECK(std::string{e.what()}.find("attribute " + std::to_string(CU_DEVICE_ATTRIBUTE_MAX) +
                                       ", device 0") != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "a device is found again by its PCI bus id, in any case") {
    const auto dev = cuwrap::device::get(0);
    const auto bus_id = dev.pci_bus_id();
    CHECK(cuwrap::device::by_pci_bus_id(bus_id) == dev);
    std::string lower = bus_id;
    for (auto& c : lower) c = static_cast<char>(std::tolower(c));
    CHECK(cuwrap::device::by_pci_bus_id(lower) == dev);
    CHECK_THROWS_AS((void)cuwrap::device::by_pci_bus_id("0000:ff:1f.7"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "devices compare and hash by ordinal and uuids are stable") {
    const auto a = cuwrap::device::get(0);
    const auto b = cuwrap::device::get(0);
    CHECK(a == b);
    std::unordered_set<cuwrap::device> set{a, b};
    CHECK(set.size() == 1);
    const auto u1 = a.uuid();
    const auto u2 = b.uuid();
    CHECK(std::equal(std::begin(u1.bytes), std::end(u1.bytes), std::begin(u2.bytes)));
    CHECK(cuwrap::device::all() == std::vector{a});
  }

  TEST_CASE_FIXTURE(sw_fixture, "a device is not its own peer") {
    const auto dev = cuwrap::device::get(0);
    CHECK_FALSE(dev.can_access_peer(dev));
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture, "with SWCUDA_DEVICES=3 there are three distinct devices") {
    const auto devices = cuwrap::device::all();
    REQUIRE(devices.size() == 3);
    CHECK(devices[0].pci_bus_id() != devices[1].pci_bus_id());
    CHECK(devices[1].can_access_peer(devices[2]));
    CHECK(cuwrap::device::by_pci_bus_id(devices[2].pci_bus_id()) == devices[2]);
    CHECK_THROWS_WITH_AS((void)cuwrap::device::get(3),
                         doctest::Contains("valid ordinals are 0 to 2"), cuwrap::error);
  }

  TEST_CASE("with SWCUDA_DEVICES=0 the count is zero and get() says there is no device") {
    CHECK(cuwrap::device::count() == 0);
    CHECK(cuwrap::device::all().empty());
    CHECK_THROWS_WITH_AS((void)cuwrap::device::get(0), doctest::Contains("no CUDA device"),
                         cuwrap::error);
  }

  TEST_CASE("a malformed SWCUDA_FAULTS rule makes loading the driver fail") {
    CHECK_THROWS_WITH_AS((void)cuwrap::device::count(), doctest::Contains("cuInit"), cuwrap::error);
  }
}
