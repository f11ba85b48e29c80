// Memory pools of every location (memory_pool.hpp): device, host, host NUMA and managed pools,
// reuse policies, the default and current pools, host NUMA pools shared with another process;
// and the managed memory batch operations (managed_buffer.hpp).
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/memory_pool.hpp"
#include "fault_sweep.hpp"
#include "ipc_parent.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

std::vector<int> iota(std::size_t count) {
  std::vector<int> values(count);
  std::iota(values.begin(), values.end(), 0);
  return values;
}

// What the software driver makes a discarded byte read as (docs/software-driver.md).
constexpr unsigned char kDiscardedByte = 0xDB;

}  // namespace

static_assert(cuwrap::pool_location::host() == cuwrap::pool_location::host());
static_assert(cuwrap::pool_location::managed().is_managed());
static_assert(cuwrap::pool_location::host_numa(0).host_accessible());
static_assert(!std::is_default_constructible_v<cuwrap::pool_location>);

TEST_SUITE("memory pools") {
  // cuMemPoolCreate (cuda.h): host and host NUMA pools hold pinned host memory, "their default
  // accessibility will be from the host CPU"; managed pools (CUDA 13) hold managed memory.
  TEST_CASE_FIXTURE(sw_fixture, "pools of every location hand out the memory they hold") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    struct Case {
      cuwrap::pool_location location;
      cuwrap::memory_type type;
    };
    const Case cases[] = {
        {cuwrap::pool_location::device(dev), cuwrap::memory_type::device},
        {cuwrap::pool_location::host(), cuwrap::memory_type::host},
        {cuwrap::pool_location::host_numa(0), cuwrap::memory_type::host},
        {cuwrap::pool_location::managed(), cuwrap::memory_type::managed},
        {cuwrap::pool_location::managed(dev), cuwrap::memory_type::managed},
        {cuwrap::pool_location::managed_on_host(), cuwrap::memory_type::managed},
    };
    for (const Case& c : cases) {
      CAPTURE(c.location.location_type());
      CAPTURE(c.location.allocation_type());
      cuwrap::memory_pool pool{c.location};
      CHECK(pool.release_threshold() == UINT64_MAX);
      // The device reaches host pool memory once let in (cuMemPoolSetAccess).
      if (!c.location.is_managed() && c.location.host_accessible()) {
        CHECK(pool.access(dev) == cuwrap::pool_access::none);
        pool.allow_access(dev);
      }
      CHECK(pool.access(dev) == cuwrap::pool_access::read_write);
      auto buffer = pool.allocate<int>(s, 1000);
      const std::vector<int> values = iota(1000);
      cuwrap::copy(s, buffer, values);
      s.synchronize();
      CHECK(cuwrap::pointer_attributes(buffer.data()).type == c.type);
      CHECK(pool.usage().used_current >= 1000 * sizeof(int));
      if (c.location.host_accessible()) {  // the host reads it through the pointer
        const int* const host = buffer.data();
        CHECK(host[999] == 999);
      }
      std::vector<int> back(1000);
      cuwrap::copy(s, back, buffer);
      s.synchronize();
      CHECK(back == iota(1000));
    }
    CHECK(swcuda().live_handles(SWCU_MEMORY_POOL) == 0);
  }

  // cuMemPoolCreate: "Pools created with the type CU_MEM_LOCATION_TYPE_HOST are not IPC capable
  // and CUmemPoolProps::handleTypes must be 0, any other values will result in
  // CUDA_ERROR_INVALID_VALUE".
  TEST_CASE_FIXTURE(sw_fixture, "a pool the driver refuses names its location") {
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(
          cuwrap::memory_pool(cuwrap::pool_location::host(), options),
          doctest::Contains("cuMemPoolCreate(pinned memory of the host, shareable as a POSIX file "
                            "descriptor): invalid value (CUDA_ERROR_INVALID_VALUE)"),
          cuwrap::error);
    });
    CHECK(calls.at("cuMemPoolCreate") == 1);
    CHECK_THROWS_WITH_AS(cuwrap::memory_pool(cuwrap::pool_location::host_numa(3)),
                         doctest::Contains("pinned memory of host NUMA node 3"), cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::memory_pool(cuwrap::pool_location::managed(), options),
                         doctest::Contains("managed memory with no preferred location"),
                         cuwrap::error);
    CHECK(swcuda().live_handles(SWCU_MEMORY_POOL) == 0);
  }

  // CU_MEMPOOL_ATTR_REUSE_* (cuda.h): "Default enabled", each an int.
  TEST_CASE_FIXTURE(sw_fixture, "reuse policies are on by default and can be turned off") {
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    for (const auto policy :
         {cuwrap::pool_reuse::follow_event_dependencies, cuwrap::pool_reuse::allow_opportunistic,
          cuwrap::pool_reuse::allow_internal_dependencies}) {
      CAPTURE(static_cast<int>(policy));
      CHECK(pool.reuse(policy));
      check_one_call("cuMemPoolSetAttribute", [&] { pool.set_reuse(policy, false); });
      CHECK_FALSE(pool.reuse(policy));
    }
    CHECK(pool.reuse(cuwrap::pool_reuse::allow_opportunistic) == false);
    pool.set_reuse(cuwrap::pool_reuse::allow_opportunistic, true);
    CHECK(pool.reuse(cuwrap::pool_reuse::allow_opportunistic));
    cuwrap::memory_pool moved = std::move(pool);
    CHECK_THROWS_AS((void)pool.reuse(cuwrap::pool_reuse::allow_opportunistic),  // NOLINT
                    cuwrap::usage_error);
  }

  // cuDeviceSetMemPool / cuMemSetMemPool (cuda.h): the pool "must be of the same location and
  // allocation type"; cuMemPoolDestroy: "Destroying the current mempool of a device sets the
  // default mempool of that device as the current mempool for that device".
  TEST_CASE_FIXTURE(sw_fixture, "the current pool of a device and of a location") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::stream s{ctx};
    const auto fallback = cuwrap::memory_pool::default_pool(dev);
    CHECK(cuwrap::current_pool(dev) == fallback);
    CHECK(cuwrap::default_pool(cuwrap::pool_location::device(dev)) == fallback);
    {
      cuwrap::memory_pool pool{dev};
      check_one_call("cuDeviceSetMemPool", [&] { cuwrap::set_current_pool(dev, pool); });
      CHECK(cuwrap::current_pool(dev) == pool);
      CHECK(cuwrap::current_pool(cuwrap::pool_location::device(dev)) == pool);
      cuwrap::stream_ordered_buffer<int> ordered{s, 64};  // cuMemAllocAsync: the current pool
      s.synchronize();
      CHECK(pool.usage().used_current >= 64 * sizeof(int));
    }
    s.synchronize();
    CHECK(cuwrap::current_pool(dev) == fallback);

    const auto host = cuwrap::pool_location::host();
    const auto host_default = cuwrap::default_pool(host);
    CHECK(host_default != fallback);
    CHECK(cuwrap::current_pool(host) == host_default);
    cuwrap::memory_pool host_pool{host};
    check_one_call("cuMemSetMemPool", [&] { cuwrap::set_current_pool(host, host_pool); });
    CHECK(cuwrap::current_pool(host) == host_pool);
    CHECK_THROWS_WITH_AS(
        cuwrap::set_current_pool(dev, host_pool),
        doctest::Contains("cuDeviceSetMemPool(device 0: the pool must be a pool of "
                          "pinned memory of that device): invalid value"),
        cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::set_current_pool(cuwrap::pool_location::managed(), host_pool),
                         doctest::Contains("managed memory with no preferred location: the pool "
                                           "must be of that location and kind"),
                         cuwrap::error);
    cuwrap::set_current_pool(host, host_default);
    CHECK(cuwrap::current_pool(host) == host_default);
    const auto managed = cuwrap::pool_location::managed(dev);
    CHECK(cuwrap::default_pool(managed) != cuwrap::default_pool(cuwrap::pool_location::managed()));
    CHECK_THROWS_WITH_AS(
        (void)cuwrap::default_pool(cuwrap::pool_location::host_numa(5)),
        doctest::Contains("cuMemGetDefaultMemPool(pinned memory of host NUMA node 5)"),
        cuwrap::error);
    cuwrap::memory_pool moved = std::move(host_pool);
    CHECK_THROWS_AS(cuwrap::set_current_pool(host, host_pool),  // NOLINT: moved from on purpose
                    cuwrap::usage_error);
  }

  // cuMemPoolCreate: host NUMA pools may be IPC capable (only HOST pools are "not IPC
  // capable"); the importer's pool holds the same pinned host memory.
  TEST_CASE_FIXTURE(sw_fixture, "a second process imports a pinned host pool and writes to it") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::primary_context ctx{dev};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    cuwrap::memory_pool pool{cuwrap::pool_location::host_numa(0), options};
    pool.allow_access(dev);
    constexpr std::size_t count = 3000;
    auto shared = pool.allocate<int>(s, count);
    const std::vector<int> values = iota(count);
    cuwrap::copy(s, shared, values);
    s.synchronize();
    REQUIRE(cuwrap::testing::run_ipc_pool_child(pool, shared) == 0);
    const int* const host = shared.data();  // pinned host memory: the host reads it directly
    for (std::size_t i = 0; i < count; ++i) REQUIRE(host[i] == static_cast<int>(2 * i + 1));

    // The same import in this process sees the same bytes, as host memory.
    const auto imported_pool = cuwrap::import_pool(cuwrap::export_pool(pool));
    cuwrap::ipc_pool_memory<int> imported{ctx, imported_pool,
                                          cuwrap::export_pool_pointer(shared.span()), count};
    CHECK(cuwrap::pointer_attributes(imported.data()).type == cuwrap::memory_type::host);
    CHECK(imported.data()[5] == 11);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: pools of every location and the current pools") {
    const int points = cuwrap::testing::fault_sweep([] {
      const auto dev = cuwrap::device::get(0);
      cuwrap::primary_context ctx{dev};
      cuwrap::stream s{ctx};
      cuwrap::memory_pool host{cuwrap::pool_location::host()};
      cuwrap::memory_pool_options shareable;
      shareable.sharing = cuwrap::pool_sharing::posix_fd;
      cuwrap::memory_pool numa{cuwrap::pool_location::host_numa(0), shareable};
      cuwrap::memory_pool managed{cuwrap::pool_location::managed()};
      host.set_reuse(cuwrap::pool_reuse::allow_opportunistic, false);
      (void)host.reuse(cuwrap::pool_reuse::allow_opportunistic);
      cuwrap::set_current_pool(cuwrap::pool_location::host(), host);
      (void)cuwrap::current_pool(cuwrap::pool_location::host());
      cuwrap::set_current_pool(cuwrap::pool_location::host(),
                               cuwrap::default_pool(cuwrap::pool_location::host()));
      (void)cuwrap::current_pool(dev);
      auto memory = numa.allocate<int>(s, 16);
      auto from_managed = managed.allocate<int>(s, 16);
      s.synchronize();
      const auto imported_pool = cuwrap::import_pool(cuwrap::export_pool(numa));
      cuwrap::ipc_pool_memory<int> imported{ctx, imported_pool,
                                            cuwrap::export_pool_pointer(memory.span()), 16};
    });
    CHECK(points >= 14);
  }
}

TEST_SUITE("managed memory batch operations") {
  TEST_CASE_FIXTURE(sw_fixture, "a batch of ranges is one driver call") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::managed_buffer<int> a{ctx, 4096};  // 4 pages of 4 KiB
    cuwrap::managed_buffer<int> b{ctx, 1024};
    std::fill(a.begin(), a.end(), 1);
    std::fill(b.begin(), b.end(), 2);
    const cuwrap::managed_range ranges[] = {a.span(), b.span().first(512)};
    const auto to_device = cuwrap::memory_location::on(cuwrap::device::get(0));
    check_one_call("cuMemPrefetchBatchAsync", [&] { cuwrap::prefetch(s, ranges, to_device); });
    CHECK(a.last_prefetch_location() == to_device);
    CHECK(b.span().first(512).size() == 512);
    s.synchronize();
    CHECK(a[1023] == 1);  // a prefetch keeps the contents

    // Discarded bytes are undefined until written: the software driver poisons them.
    check_one_call("cuMemDiscardBatchAsync",
                   [&] { cuwrap::discard(s, std::span{ranges}.last(1)); });
    s.synchronize();
    unsigned char poison[4];
    std::memset(poison, kDiscardedByte, sizeof poison);
    CHECK(std::memcmp(&b[0], poison, 4) == 0);
    CHECK(b[512] == 2);  // outside the range
    const auto to_host = cuwrap::memory_location::host();
    check_one_call("cuMemDiscardAndPrefetchBatchAsync",
                   [&] { cuwrap::discard_and_prefetch(s, ranges, to_host); });
    s.synchronize();
    CHECK(std::memcmp(&a[0], poison, 4) == 0);
    CHECK(a.last_prefetch_location() == to_host);

    // More ranges than the stack holds, and none at all (no call).
    std::vector<cuwrap::managed_range> many;
    for (std::size_t i = 0; i < 40; ++i) many.emplace_back(a.span().subspan(i * 16, 16));
    check_one_call("cuMemPrefetchBatchAsync", [&] { cuwrap::prefetch(s, many, to_device); });
    CHECK(a.last_prefetch_location() != to_device);  // only the first page moved
    CHECK(calls_made_by([&] { cuwrap::discard(s, {}); }).empty());
    s.synchronize();
  }

  // cuMemPrefetchBatchAsync (cuda.h): "hStream - The stream to enqueue the operations in. Must
  // not be legacy NULL stream"; "Each memory range specified must refer to managed memory".
  TEST_CASE_FIXTURE(sw_fixture, "a batch names what the driver refused") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::managed_buffer<int> a{ctx, 64};
    cuwrap::device_buffer<int> d{ctx, 64};
    const cuwrap::managed_range ranges[] = {a.span(), d.span()};
    CHECK_THROWS_WITH_AS(
        cuwrap::discard(s, ranges),
        doctest::Contains("cuMemDiscardBatchAsync(2 ranges: each must be managed memory, and the "
                          "stream not the legacy default stream): invalid value"),
        cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::prefetch(cuwrap::stream_ref::legacy(), std::span{ranges}.first(1),
                                          cuwrap::memory_location::host()),
                         doctest::Contains("cuMemPrefetchBatchAsync(1 ranges"), cuwrap::error);
    cuwrap::prefetch(cuwrap::stream_ref::per_thread(), std::span{ranges}.first(1),
                     cuwrap::memory_location::host());
    cuwrap::stream_ref::per_thread().synchronize();
    cuwrap::stream moved = std::move(s);
    CHECK_THROWS_AS(cuwrap::discard(s, ranges), cuwrap::usage_error);  // NOLINT: moved from
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: batch operations") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::managed_buffer<int> a{ctx, 64};
      const cuwrap::managed_range ranges[] = {a.span()};
      cuwrap::prefetch(s, ranges, cuwrap::memory_location::host());
      cuwrap::discard(s, ranges);
      cuwrap::discard_and_prefetch(s, ranges, cuwrap::memory_location::on(cuwrap::device::get(0)));
      s.synchronize();
    });
    CHECK(points >= 7);
  }
}
