// Virtual memory management (virtual_memory.hpp), multicast objects (multicast.hpp) and the
// virtual-memory resource (mr/virtual_memory_resource.hpp) on the software driver.
#include "cuwrap/virtual_memory.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>

#include <array>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/mr/virtual_memory_resource.hpp"
#include "fault_sweep.hpp"
#include "ipc_parent.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::vector<int> iota(std::size_t count, int first = 0) {
  std::vector<int> values(count);
  std::iota(values.begin(), values.end(), first);
  return values;
}

// The sweep's options: cuMemUnmap and cuMulticastUnbind are destructors' calls too.
cuwrap::testing::fault_sweep_options destructor_calls() {
  cuwrap::testing::fault_sweep_options options;
  options.skip.push_back("Unmap");
  options.skip.push_back("Unbind");
  return options;
}

struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

}  // namespace

TEST_SUITE("virtual_memory") {
  TEST_CASE_FIXTURE(sw_fixture,
                    "granularity: 2 MiB for device memory, a page minimum on the host") {
    const auto dev = cuwrap::device::get(0);
    // The software driver reports what an NVIDIA GPU reports for device memory: 2 MiB.
    CHECK(cuwrap::allocation_granularity(cuwrap::memory_location::on(dev)) == 2 * kMiB);
    CHECK(cuwrap::allocation_granularity(cuwrap::memory_location::on(dev),
                                         cuwrap::granularity_kind::recommended) == 2 * kMiB);
    CHECK(cuwrap::allocation_granularity(cuwrap::memory_location::host()) == 4096);
    check_one_call("cuMemGetAllocationGranularity",
                   [&] { (void)cuwrap::allocation_granularity(cuwrap::memory_location::on(dev)); });
    CHECK_THROWS_WITH_AS((void)cuwrap::allocation_granularity({CU_MEM_LOCATION_TYPE_DEVICE, 7}),
                         doctest::Contains("cuMemGetAllocationGranularity(of memory on device 7)"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "map physical memory into a reservation, give access, copy through it") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    cuwrap::physical_memory memory{dev, 2 * kMiB};
    CHECK(memory.size() == 2 * kMiB);
    CHECK(memory.get() != 0);
    const auto props = memory.properties();
    CHECK(props.location == cuwrap::memory_location::on(dev));
    CHECK_FALSE(props.posix_fd);
    cuwrap::address_reservation range{8 * kMiB};
    CHECK(range.size() == 8 * kMiB);
    CHECK(range.address() % (2 * kMiB) == 0);  // the default alignment is the granularity
    cuwrap::memory_mapping mapping = range.map(2 * kMiB, memory);
    CHECK(mapping.address() == range.address() + 2 * kMiB);
    CHECK(mapping.size() == 2 * kMiB);
    // "calling cuMemMap does not make the address accessible" (cuda.h).
    CHECK(mapping.access(cuwrap::memory_location::on(dev)) == cuwrap::memory_access::none);
    check_one_call("cuMemSetAccess", [&] { mapping.set_access(dev); });
    CHECK(mapping.access(cuwrap::memory_location::on(dev)) == cuwrap::memory_access::read_write);
    const auto span = mapping.span<int>();
    CHECK(span.size() == 2 * kMiB / sizeof(int));
    const auto values = iota(span.size());
    cuwrap::copy(span, values);
    std::vector<int> back(span.size());
    cuwrap::copy(back, span);
    CHECK(back == values);
    // Read-only access: the device may read, a write into it fails.
    const cuwrap::access_descriptor read_only{cuwrap::memory_location::on(dev),
                                              cuwrap::memory_access::read};
    mapping.set_access(std::span{&read_only, 1});
    CHECK(mapping.access(cuwrap::memory_location::on(dev)) == cuwrap::memory_access::read);
    cuwrap::copy(back, span);
    CHECK(back == values);
    // Mapping the same range twice is refused by the driver, and the error says what it needs.
    CHECK_THROWS_WITH_AS((void)range.map(2 * kMiB, memory), doctest::Contains("cuMemMap"),
                         cuwrap::error);
    // Off the end of the reservation: refused before any driver call.
    const auto refused = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)range.map(8 * kMiB, memory),
                           doctest::Contains("do not fit the reservation of 8388608 bytes"),
                           cuwrap::error);
    });
    CHECK(refused.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "a mapping keeps its reservation and its physical memory") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    std::optional<cuwrap::memory_mapping> mapping;
    {
      cuwrap::physical_memory memory{dev, 4 * kMiB};
      cuwrap::address_reservation range{4 * kMiB};
      mapping = range.map(0, memory);
      mapping->set_access(dev);
    }  // the owners went; the mapping holds both
    CHECK(swcuda().live_handles(SWCU_VMM_ALLOCATION) == 1);
    CHECK(swcuda().live_handles(SWCU_ADDRESS_RESERVATION) == 1);
    cuwrap::fill(mapping->span<int>(), 42);
    std::vector<int> back(16);
    cuwrap::copy(back, mapping->span<int>().first(16));
    CHECK(back == std::vector<int>(16, 42));
    // Unmapping releases the last references: cuMemUnmap, cuMemRelease, cuMemAddressFree.
    const auto calls = calls_made_by([&] { mapping->unmap(); });
    CHECK(calls == cuwrap::testing::call_counts{
                       {"cuMemUnmap", 1}, {"cuMemRelease", 1}, {"cuMemAddressFree", 1}});
    CHECK(mapping->empty());
    CHECK_THROWS_AS(mapping->unmap(), cuwrap::usage_error);
    CHECK_THROWS_WITH_AS((void)mapping->span<int>(), doctest::Contains("memory_mapping"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "retain gives a new reference to the memory mapped at an address") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    cuwrap::address_reservation range{2 * kMiB};
    cuwrap::memory_mapping mapping = [&] {
      cuwrap::physical_memory memory{dev, 2 * kMiB};
      return range.map(0, memory);
    }();
    mapping.set_access(dev);
    cuwrap::fill(mapping.span<int>(), 9);
    const auto retained = cuwrap::physical_memory::retain(mapping.address() + 4096, 2 * kMiB);
    CHECK(retained.properties().location == cuwrap::memory_location::on(dev));
    // The same memory, mapped a second time, shows the same bytes.
    cuwrap::address_reservation other{2 * kMiB};
    auto again = other.map(0, retained);
    again.set_access(dev);
    std::vector<int> back(4);
    cuwrap::copy(back, again.span<int>().first(4));
    CHECK(back == std::vector<int>(4, 9));
    CHECK_THROWS_WITH_AS(
        (void)cuwrap::physical_memory::retain(other.address() + other.size() + (64 << 20), 1),
        doctest::Contains("cuMemRetainAllocationHandle(of address"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "moved-from owners are empty and refuse every operation") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::physical_memory memory{dev, 2 * kMiB};
    cuwrap::physical_memory moved = std::move(memory);
    CHECK(memory.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(memory.get() == 0);
    CHECK_THROWS_WITH_AS((void)memory.properties(),
                         doctest::Contains("cuwrap::physical_memory::properties: this "
                                           "physical_memory was moved from"),
                         cuwrap::usage_error);
    CHECK_THROWS_AS((void)memory.export_fd(), cuwrap::usage_error);
    cuwrap::address_reservation range{2 * kMiB};
    CHECK_THROWS_AS((void)range.map(0, memory), cuwrap::usage_error);
    cuwrap::address_reservation taken = std::move(range);
    CHECK(range.empty());  // NOLINT(bugprone-use-after-move)
    CHECK_THROWS_AS((void)range.map(0, moved), cuwrap::usage_error);
    auto mapping = taken.map(0, moved);
    auto other = std::move(mapping);
    CHECK(mapping.empty());  // NOLINT(bugprone-use-after-move)
    CHECK_THROWS_AS(mapping.set_access(dev), cuwrap::usage_error);
    CHECK_THROWS_AS((void)mapping.access(cuwrap::memory_location::on(dev)), cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "creating memory that is not a multiple of the granularity names the size") {
    CHECK_THROWS_WITH_AS(cuwrap::physical_memory(cuwrap::device::get(0), 4096),
                         doctest::Contains("cuMemCreate(4096 bytes on device 0"), cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::address_reservation(1000),
                         doctest::Contains("cuMemAddressReserve(1000 bytes"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "GPUDirect RDMA memory is refused where the device cannot make it") {
    // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0 on the software driver.
    const auto dev = cuwrap::device::get(0);
    CHECK(dev.raw_attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) == 0);
    cuwrap::physical_memory_options options;
    options.gpu_direct_rdma = true;
    try {
      const cuwrap::physical_memory memory{dev, 2 * kMiB, options};
      FAIL("made RDMA-capable memory on a device without support");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_NOT_SUPPORTED));
      CHECK(std::string{e.api()} == "cuMemCreate");
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "exporting memory that was not created shareable says how") {
    cuwrap::physical_memory plain{cuwrap::device::get(0), 2 * kMiB};
    CHECK_THROWS_WITH_AS((void)plain.export_fd(),
                         doctest::Contains("physical_memory_options::posix_fd"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a second process imports physical memory from a descriptor") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    cuwrap::physical_memory_options options;
    options.posix_fd = true;
    cuwrap::physical_memory memory{dev, 2 * kMiB, options};
    CHECK(memory.properties().posix_fd);
    cuwrap::address_reservation range{2 * kMiB};
    auto mapping = range.map(0, memory);
    mapping.set_access(dev);
    constexpr std::size_t count = 5000;
    cuwrap::copy(mapping.span<int>().first(count), iota(count));
    const cuwrap::file_descriptor fd = memory.export_fd();
    REQUIRE(fd);
    CHECK((fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    fd.inherit_on_exec();
    // The child imports, maps, checks 0, 1, 2... and writes 2 * i + 1 (ipc_child.cpp).
    REQUIRE(cuwrap::testing::run_child({"vmm", std::to_string(fd.get()),
                                        std::to_string(memory.size()), std::to_string(count)}) ==
            0);
    std::vector<int> back(count);
    cuwrap::copy(back, mapping.span<int>().first(count));
    for (std::size_t i = 0; i < count; ++i) REQUIRE(back[i] == static_cast<int>(2 * i + 1));
    // An import in this process is a new handle of the same memory.
    const auto imported = cuwrap::physical_memory::import_fd(fd, memory.size());
    CHECK(imported.get() != memory.get());
    cuwrap::address_reservation other{2 * kMiB};
    auto seen = other.map(0, imported);
    seen.set_access(dev);
    cuwrap::copy(back, seen.span<int>().first(count));
    CHECK(back[10] == 21);
    CHECK_THROWS_WITH_AS((void)cuwrap::physical_memory::import_fd(-1, 2 * kMiB),
                         doctest::Contains("cuMemImportFromShareableHandle(descriptor -1)"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "fault sweep: physical memory, reservations, mappings, access, sharing") {
    const int points = cuwrap::testing::fault_sweep(
        [] {
          const auto dev = cuwrap::device::get(0);
          (void)cuwrap::allocation_granularity(cuwrap::memory_location::on(dev));
          cuwrap::physical_memory_options options;
          options.posix_fd = true;
          cuwrap::physical_memory memory{dev, 2 * kMiB, options};
          cuwrap::address_reservation range{4 * kMiB};
          auto mapping = range.map(0, memory);
          mapping.set_access(dev);
          (void)mapping.access(cuwrap::memory_location::on(dev));
          (void)memory.properties();
          const auto fd = memory.export_fd();
          const auto imported = cuwrap::physical_memory::import_fd(fd, memory.size());
          auto second = range.map(2 * kMiB, imported);
          const auto retained = cuwrap::physical_memory::retain(second.address(), 2 * kMiB);
        },
        destructor_calls());
    CHECK(points >= 10);
  }
}

TEST_SUITE("multicast") {
  TEST_CASE_FIXTURE(sw_fixture, "multicast: a team of one and a moved-from object") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::multicast_object team{{1, 2 * kMiB}};
    CHECK(team.get() != 0);
    CHECK_THROWS_WITH_AS(cuwrap::multicast_object({1, 4096}),
                         doctest::Contains("cuMulticastCreate(1 devices, 4096 bytes per device"),
                         cuwrap::error);
    team.add_device(dev);
    CHECK_THROWS_WITH_AS(team.add_device(dev), doctest::Contains("cuMulticastAddDevice(device 0"),
                         cuwrap::error);
    cuwrap::physical_memory memory{dev, 2 * kMiB};
    team.bind(0, memory, 0, 2 * kMiB);
    cuwrap::address_reservation range{2 * kMiB};
    auto mc = cuwrap::map(range, 0, team);
    mc.set_access(dev);
    cuwrap::fill(mc.span<int>().first(8), 11);
    // The memory bound holds what was stored through the range.
    cuwrap::address_reservation unicast{2 * kMiB};
    auto direct = unicast.map(0, memory);
    direct.set_access(dev);
    std::vector<int> back(8);
    cuwrap::copy(back, direct.span<int>().first(8));
    CHECK(back == std::vector<int>(8, 11));
    // Destroying the object unbinds; the mapping keeps the handle until it goes.
    cuwrap::multicast_object moved = std::move(team);
    CHECK(team.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(team.get() == 0);
    CHECK_THROWS_AS(team.add_device(dev), cuwrap::usage_error);
    CHECK_THROWS_AS(team.bind(0, memory, 0, 2 * kMiB), cuwrap::usage_error);
    CHECK_THROWS_AS(team.unbind(dev, 0, 2 * kMiB), cuwrap::usage_error);
    CHECK_THROWS_WITH_AS((void)cuwrap::map(range, 0, team),
                         doctest::Contains("cuwrap::multicast_object::map"), cuwrap::usage_error);
    const auto calls = calls_made_by([&] { moved = cuwrap::multicast_object{{1, 2 * kMiB}}; });
    CHECK(calls ==
          cuwrap::testing::call_counts{{"cuMulticastCreate", 1}, {"cuMulticastUnbind", 1}});
  }
}

TEST_SUITE("virtual_memory_resource") {
  TEST_CASE_FIXTURE(sw_fixture, "an allocation grows in place and keeps its contents") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    cuwrap::mr::virtual_memory_resource resource{dev, 64 * kMiB};
    CHECK(resource.max_bytes() == 64 * kMiB);
    CHECK(resource.granularity() == 2 * kMiB);
    CHECK(resource.device().ordinal() == 0);
    void* const p0 = resource.allocate(1000);
    CHECK(resource.mapped_bytes(p0) == 2 * kMiB);
    CHECK(resource.chunk_count(p0) == 1);
    const std::size_t first = 2 * kMiB / sizeof(int);
    const cuwrap::device_span<int> before{static_cast<int*>(p0), first};
    cuwrap::copy(before, iota(first));
    // Growing maps one chunk after the first: same address, old data intact.
    const auto calls = calls_made_by([&] { resource.grow(p0, 7 * kMiB); });
    CHECK(calls ==
          cuwrap::testing::call_counts{{"cuMemCreate", 1}, {"cuMemMap", 1}, {"cuMemSetAccess", 1}});
    CHECK(resource.mapped_bytes(p0) == 8 * kMiB);
    CHECK(resource.chunk_count(p0) == 2);
    const std::size_t all = 8 * kMiB / sizeof(int);
    const cuwrap::device_span<int> after{static_cast<int*>(p0), all};
    cuwrap::copy(after.subspan(first), iota(all - first, static_cast<int>(first)));
    std::vector<int> back(all);
    cuwrap::copy(back, after);
    CHECK(back == iota(all));
    // grow never shrinks; resize does, by whole chunks.
    CHECK(calls_made_by([&] { resource.grow(p0, 4 * kMiB); }).empty());
    resource.resize(p0, 2 * kMiB);
    CHECK(resource.mapped_bytes(p0) == 2 * kMiB);
    std::vector<int> kept(first);
    cuwrap::copy(kept, before);
    CHECK(kept == iota(first));
    // Past max_bytes: refused, the allocation as it was.
    CHECK_THROWS_WITH_AS(resource.grow(p0, 65 * kMiB),
                         doctest::Contains("exceed the resource's max_bytes of 67108864"),
                         cuwrap::error);
    CHECK(resource.mapped_bytes(p0) == 2 * kMiB);
    void* const p1 = resource.allocate(3 * kMiB, 4096);
    CHECK(p1 != p0);
    CHECK(resource.allocation_count() == 2);
    const cuwrap::mr::virtual_memory_resource copy = resource;
    CHECK(copy == resource);
    CHECK_FALSE(cuwrap::mr::virtual_memory_resource(dev, 2 * kMiB) == resource);
    resource.deallocate(p0, 1000);
    CHECK(copy.allocation_count() == 1);  // copies share the allocations
    CHECK_THROWS_AS(resource.grow(p0, 4 * kMiB), cuwrap::usage_error);
    resource.deallocate(p1, 3 * kMiB, 4096);
    CHECK(swcuda().live_handles(SWCU_VMM_ALLOCATION) == 0);
    CHECK(swcuda().live_handles(SWCU_ADDRESS_RESERVATION) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a large alignment is honoured and a bad one named") {
    cuwrap::mr::virtual_memory_resource resource{cuwrap::device::get(0), 4 * kMiB};
    void* const p = resource.allocate(kMiB, 16 * kMiB);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % (16 * kMiB) == 0);
    resource.deallocate(p, kMiB, 16 * kMiB);
    CHECK_THROWS_WITH_AS((void)resource.allocate(kMiB, 3), doctest::Contains("alignment 3"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: allocate and grow create nothing when a call fails") {
    const int points = cuwrap::testing::fault_sweep(
        [] {
          cuwrap::mr::virtual_memory_resource resource{cuwrap::device::get(0), 16 * kMiB};
          void* const p = resource.allocate(kMiB);
          try {
            resource.grow(p, 6 * kMiB);
          } catch (...) {
            CHECK(resource.mapped_bytes(p) == 2 * kMiB);  // a failed grow leaves it as it was
            resource.deallocate(p, kMiB);
            throw;
          }
          resource.deallocate(p, kMiB);
        },
        destructor_calls());
    CHECK(points >= 7);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture,
                    "multicast: a store through the multicast range reaches both devices") {
    const auto d0 = cuwrap::device::get(0);
    const auto d1 = cuwrap::device::get(1);
    CHECK(d0.raw_attribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) == 1);
    cuwrap::primary_context c0{d0};
    cuwrap::primary_context c1{d1};
    const cuwrap::multicast_options options{2, 2 * kMiB};
    CHECK(cuwrap::multicast_granularity(options) == 2 * kMiB);
    cuwrap::multicast_object team{options};
    CHECK(team.size() == 2 * kMiB);
    cuwrap::physical_memory m0{d0, 2 * kMiB};
    cuwrap::physical_memory m1{d1, 2 * kMiB};
    cuwrap::address_reservation unicast{4 * kMiB};
    auto u0 = unicast.map(0, m0);
    auto u1 = unicast.map(2 * kMiB, m1);
    // Both devices may read both memories (this test reads them from device 0's context).
    const std::array<cuwrap::access_descriptor, 2> both{
        {{cuwrap::memory_location::on(d0)}, {cuwrap::memory_location::on(d1)}}};
    u0.set_access(both);
    u1.set_access(both);
    cuwrap::address_reservation range{2 * kMiB};
    team.add_device(d0);
    // Binding before the team is complete: the real call blocks; the software driver refuses.
    CHECK_THROWS_WITH_AS(team.bind(0, m0, 0, 2 * kMiB), doctest::Contains("add every device first"),
                         cuwrap::error);
    CHECK_THROWS_AS((void)cuwrap::map(range, 0, team), cuwrap::error);
    team.add_device(d1);
    CHECK_THROWS_AS(team.add_device(d1), cuwrap::error);  // a device is added once
    {
      cuwrap::scoped_current_context current{c0};
      cuwrap::fill(u0.span<int>(), -1);  // device 0's memory before it is bound; device 1's is 0
    }
    team.bind(0, m0, 0, 2 * kMiB);
    team.bind(0, u1.address(), 2 * kMiB);
    auto mc = cuwrap::map(range, 0, team);
    mc.set_access(d0);
    mc.set_access(d1);
    cuwrap::scoped_current_context current{c0};
    std::vector<int> back(8);
    cuwrap::copy(back, mc.span<int>().first(8));
    CHECK(back == std::vector<int>(8, -1));  // a load returns one device's value (the first bound)
    // A store through the multicast range reaches both devices' memory. (The software driver
    // finds stores by comparing with the range's last contents: no byte of these is 0xff.)
    std::vector<int> values(1000);
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = 0x10203040 + static_cast<int>(i % 100);
    cuwrap::copy(mc.span<int>().first(1000), values);
    std::vector<int> seen(1000);
    cuwrap::copy(seen, u0.span<int>().first(1000));
    CHECK(seen == values);
    cuwrap::copy(seen, u1.span<int>().first(1000));
    CHECK(seen == values);
    // A store to one device's memory stays there (it is not a multicast store).
    cuwrap::fill(u1.span<int>().first(4), -1);
    cuwrap::copy(seen, u0.span<int>().first(1000));
    CHECK(seen == values);
    team.unbind(d1, 0, 2 * kMiB);
    CHECK_THROWS_AS(team.unbind(d1, 0, 2 * kMiB), cuwrap::error);  // no longer bound
    cuwrap::fill(mc.span<int>().first(4), 77);
    cuwrap::copy(seen, u1.span<int>().first(1000));
    CHECK(seen[0] == -1);  // unbound: no longer reached
    cuwrap::copy(seen, u0.span<int>().first(1000));
    CHECK(seen[0] == 77);
  }

  TEST_CASE_FIXTURE(sw_fixture, "multicast: fault sweep over create and add and bind and map") {
    const int points = cuwrap::testing::fault_sweep(
        [] {
          const auto d0 = cuwrap::device::get(0);
          const auto d1 = cuwrap::device::get(1);
          cuwrap::multicast_object team{{2, 2 * kMiB}};
          team.add_device(d0);
          team.add_device(d1);
          cuwrap::physical_memory m0{d0, 2 * kMiB};
          team.bind(0, m0, 0, 2 * kMiB);
          cuwrap::address_reservation range{2 * kMiB};
          auto mc = cuwrap::map(range, 0, team);
          mc.set_access(d0);
        },
        destructor_calls());
    CHECK(points >= 8);
  }
}
