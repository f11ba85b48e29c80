#include "cuwrap/memory.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "call_checks.hpp"
#include "fault_sweep.hpp"
#include "fill_checks.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

std::vector<int> iota_vector(std::size_t n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// A primary context made current for the test: synchronous copies run in the current context.
struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

}  // namespace

static_assert(cuwrap::device_memory<cuwrap::device_buffer<int>>);
static_assert(cuwrap::device_memory<cuwrap::device_span<const int>>);
static_assert(cuwrap::device_memory<cuwrap::managed_buffer<int>>);
static_assert(cuwrap::host_memory<std::vector<int>>);
static_assert(cuwrap::host_memory<cuwrap::pinned_buffer<int>>);
static_assert(cuwrap::host_memory<std::array<int, 4>>);
static_assert(!cuwrap::memory_range<int>);
static_assert(std::is_convertible_v<cuwrap::device_span<int>, cuwrap::device_span<const int>>);
static_assert(!std::is_convertible_v<cuwrap::device_span<const int>, cuwrap::device_span<int>>);

TEST_SUITE("memory") {
  TEST_CASE("a device span's subspans stay inside it") {
    int* base = reinterpret_cast<int*>(std::uintptr_t{0x1000});
    const cuwrap::device_span<int> span{base, 10};
    CHECK(span.size_bytes() == 40);
    CHECK(span.subspan(2).size() == 8);
    CHECK(span.subspan(2, 3).data() == base + 2);
    CHECK(span.first(4).size() == 4);
    CHECK(span.last(3).data() == base + 7);
    CHECK(span.address() == 0x1000);
    CHECK(cuwrap::device_span<int>{}.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "data round-trips host to device to host") {
    current_primary p;
    const auto input = iota_vector(1000);
    cuwrap::device_buffer<int> a{p.ctx, input.size()};
    cuwrap::device_buffer<int> b{p.ctx, input.size()};
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 2);
    cuwrap::copy(a, input);
    cuwrap::copy(b, a);  // device to device
    std::vector<int> output(input.size());
    cuwrap::copy(output, b);
    CHECK(output == input);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a zero-size buffer allocates nothing") {
    current_primary p;
    const auto calls = calls_made_by([&] {
      cuwrap::device_buffer<float> empty{p.ctx, 0};
      CHECK(empty.empty());
      CHECK(empty.data() == nullptr);
    });
    CHECK(calls.count("cuMemAlloc_v2") == 0);
    CHECK(calls.count("cuMemFree_v2") == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a size mismatch throws naming both sizes before any driver call") {
    current_primary p;
    cuwrap::device_buffer<int> device{p.ctx, 8};
    std::vector<int> host(10);
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(cuwrap::copy(device, host),
                           doctest::Contains("destination has 8 elements, source has 10"),
                           cuwrap::error);
      CHECK_THROWS_WITH_AS(cuwrap::copy(cuwrap::stream_ref::legacy(), host, device),
                           doctest::Contains("destination has 10 elements, source has 8"),
                           cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "allocating more than the device has throws out_of_memory naming the bytes") {
    current_primary p;
    const std::size_t too_many = std::size_t{1} << 50;
    CHECK_THROWS_WITH_AS(cuwrap::device_buffer<std::byte>(p.ctx, too_many),
                         doctest::Contains("cuMemAlloc(1125899906842624 bytes on device 0)"),
                         cuwrap::out_of_memory);
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "async copies and fills make one driver call each") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<std::uint32_t> device{ctx, 4};
    cuwrap::pinned_buffer<std::uint32_t> host{ctx, 4};
    check_one_call("cuMemsetD32Async", [&] { cuwrap::fill(s, device, 0xdeadbeefU); });
    check_one_call("cuMemcpyAsync", [&] { cuwrap::copy(s, host, device); });
    s.synchronize();
    for (auto v : host) CHECK(v == 0xdeadbeefU);
    check_one_call("cuMemsetD8Async", [&] { cuwrap::zero(s, device); });
    check_one_call("cuMemcpyAsync", [&] { cuwrap::copy(s, host, device); });
    s.synchronize();
    for (auto v : host) CHECK(v == 0U);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fill writes 1-, 2- and 4-byte patterns") {
    current_primary p;
    cuwrap::testing::check_fill_patterns(p.ctx);
  }

  // Synchronous copies without a current context: tests/sw/sync_copy_context_test.cpp.

  TEST_CASE_FIXTURE(sw_fixture,
                    "move assignment frees the previous buffer and release and adopt work") {
    current_primary p;
    cuwrap::device_buffer<int> a{p.ctx, 4};
    cuwrap::device_buffer<int> b{p.ctx, 8};
    a = std::move(b);
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    CHECK(a.size() == 8);
    CHECK(b.moved_from());  // NOLINT(bugprone-use-after-move): data() would throw usage_error
    const auto memory = a.release();
    CHECK(a.moved_from());
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    auto adopted = cuwrap::device_buffer<int>::adopt(p.ctx, memory);
    CHECK(adopted.size() == 8);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a buffer keeps its context alive") {
    std::unique_ptr<cuwrap::device_buffer<int>> buffer;
    {
      cuwrap::context ctx{cuwrap::device::get(0)};
      buffer = std::make_unique<cuwrap::device_buffer<int>>(ctx, 16);
    }
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
    buffer.reset();
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "pinned memory is host-accessible and, when mapped, has a device address") {
    current_primary p;
    cuwrap::pinned_buffer<int> plain{p.ctx, 16};
    cuwrap::pinned_buffer<int> mapped{
        p.ctx, 16, cuwrap::pinned_flags::device_mapped | cuwrap::pinned_flags::portable};
    CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 2);
    std::iota(plain.begin(), plain.end(), 0);
    cuwrap::device_buffer<int> device{p.ctx, 16};
    cuwrap::copy(device, plain);
    cuwrap::copy(mapped.device(), device);  // write through the mapping
    CHECK(std::equal(mapped.begin(), mapped.end(), plain.begin()));
    CHECK(cuwrap::pointer_attributes(plain.data()).type == cuwrap::memory_type::host);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a registration pins a vector for its lifetime") {
    current_primary p;
    std::vector<double> values(256, 2.5);
    {
      cuwrap::host_registration pinned{p.ctx, std::span{values}};
      CHECK(swcuda().live_handles(SWCU_HOST_REGISTRATION) == 1);
      CHECK(pinned.size_bytes() == 256 * sizeof(double));
      cuwrap::stream s{p.ctx};
      cuwrap::device_buffer<double> device{p.ctx, values.size()};
      cuwrap::copy(s, device, values);
      std::vector<double> back(values.size());
      cuwrap::copy(s, back, device);
      s.synchronize();
      CHECK(back == values);
      CHECK_THROWS_AS(cuwrap::host_registration(p.ctx, std::span{values}), cuwrap::error);
    }
    CHECK(swcuda().live_handles(SWCU_HOST_REGISTRATION) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "managed memory is host-accessible, prefetched and advised") {
    current_primary p;
    const auto dev = cuwrap::device::get(0);
    cuwrap::managed_buffer<int> managed{p.ctx, 64};
    for (std::size_t i = 0; i < managed.size(); ++i) managed[i] = static_cast<int>(i);
    cuwrap::stream s{p.ctx};
    check_one_call("cuMemPrefetchAsync_v2",
                   [&] { managed.prefetch(s, cuwrap::memory_location::on(dev)); });
    s.synchronize();
    CHECK(managed.last_prefetch_location() == cuwrap::memory_location::on(dev));
    managed.advise(cuwrap::memory_advice::set_read_mostly, cuwrap::memory_location::on(dev));
    CHECK(managed.read_mostly());
    managed.advise(cuwrap::memory_advice::set_preferred_location, cuwrap::memory_location::host());
    CHECK(managed.preferred_location() == cuwrap::memory_location::host());
    std::vector<int> copy_of(64);
    cuwrap::copy(copy_of, managed);
    CHECK(copy_of == iota_vector(64));
    const auto info = cuwrap::pointer_attributes(managed.data());
    CHECK(info.type == cuwrap::memory_type::managed);
  }

  TEST_CASE("memory locations compare ids only where the type has one") {
    // cuda.h (CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID): for a host location "the id
    // should be ignored"; a driver may report any id with it.
    constexpr cuwrap::memory_location host_any{CU_MEM_LOCATION_TYPE_HOST, -1};
    CHECK(host_any == cuwrap::memory_location::host());
    CHECK_FALSE(host_any.has_id());
    CHECK(cuwrap::memory_location{CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 3} ==
          cuwrap::memory_location{CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0});
    CHECK(cuwrap::memory_location::host_numa(0) != cuwrap::memory_location::host_numa(1));
    CHECK(cuwrap::memory_location{CU_MEM_LOCATION_TYPE_DEVICE, 0} !=
          cuwrap::memory_location{CU_MEM_LOCATION_TYPE_DEVICE, 1});
    CHECK(cuwrap::memory_location::host() != cuwrap::memory_location::host_numa(0));
    CHECK(cuwrap::memory_location{CU_MEM_LOCATION_TYPE_DEVICE, 0} !=
          cuwrap::memory_location::host());
  }

  TEST_CASE_FIXTURE(sw_fixture, "pitched memory round-trips through 2D copies") {
    current_primary p;
    constexpr std::size_t width = 7, height = 5;
    cuwrap::pitched_buffer<float> device{p.ctx, width, height};
    CHECK(device.pitch_bytes() >= width * sizeof(float));
    std::vector<float> input(width * height);
    std::iota(input.begin(), input.end(), 0.0f);
    cuwrap::copy_2d(device.view(),
                    cuwrap::pitched_span<const float>::dense(input.data(), width, height));
    std::vector<float> output(width * height);
    cuwrap::copy_2d(cuwrap::pitched_span<float>::dense(output.data(), width, height),
                    device.view());
    CHECK(output == input);
    CHECK_THROWS_WITH_AS(
        cuwrap::copy_2d(cuwrap::pitched_span<float>::dense(output.data(), width, height - 1),
                        device.view()),
        doctest::Contains("destination is 7 x 4 elements, source is 7 x 5"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "stream-ordered allocation and free make one driver call each") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    std::unique_ptr<cuwrap::stream_ordered_buffer<int>> buffer;
    check_one_call("cuMemAllocAsync",
                   [&] { buffer = std::make_unique<cuwrap::stream_ordered_buffer<int>>(s, 32); });
    CHECK(buffer->stream() == s);
    cuwrap::fill(s, *buffer, 7);
    std::vector<int> host(32);
    cuwrap::copy(s, host, *buffer);
    check_one_call("cuMemFreeAsync", [&] { buffer.reset(); });
    s.synchronize();
    CHECK(host == std::vector<int>(32, 7));
  }

  TEST_CASE_FIXTURE(sw_fixture, "a pool keeps its memory and reports its usage") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    CHECK(swcuda().live_handles(SWCU_MEMORY_POOL) == 1);
    CHECK(pool.release_threshold() == UINT64_MAX);
    {
      std::unique_ptr<cuwrap::stream_ordered_buffer<float>> buffer;
      check_one_call("cuMemAllocFromPoolAsync", [&] {
        buffer =
            std::make_unique<cuwrap::stream_ordered_buffer<float>>(pool.allocate<float>(s, 1024));
      });
      s.synchronize();
      const auto usage = pool.usage();
      CHECK(usage.used_current >= 1024 * sizeof(float));
      CHECK(usage.reserved_current >= usage.used_current);
    }
    s.synchronize();
    CHECK(pool.usage().used_current == 0);
    CHECK(pool.usage().used_high >= 1024 * sizeof(float));
    pool.reset_high_watermarks();
    CHECK(pool.usage().used_high == 0);
    pool.trim(0);
    CHECK(pool.usage().reserved_current == 0);
    pool.set_release_threshold(1 << 20);
    CHECK(pool.release_threshold() == (1 << 20));
    const auto default_pool = cuwrap::memory_pool::default_pool(cuwrap::device::get(0));
    CHECK(default_pool != pool);
    CHECK(pool.access(cuwrap::device::get(0)) == cuwrap::pool_access::read_write);
  }

  TEST_CASE_FIXTURE(sw_fixture, "pointer attributes tell device, host and unknown memory apart") {
    current_primary p;
    cuwrap::device_buffer<int> device{p.ctx, 100};
    const auto info = cuwrap::pointer_attributes(device.span().subspan(10).data());
    CHECK(info.type == cuwrap::memory_type::device);
    CHECK(info.device == 0);
    CHECK(info.context == p.ctx.get());
    CHECK(info.range_start == device.address());
    CHECK(info.range_size == device.size_bytes());
    int on_stack = 0;
    CHECK(cuwrap::pointer_attributes(&on_stack).type == cuwrap::memory_type::unregistered);
    const auto usage = cuwrap::memory_info(p.ctx);
    CHECK(usage.total == cuwrap::device::get(0).total_memory());
    CHECK(usage.free <= usage.total - device.size_bytes());
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: every allocator") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::device_buffer<int> device{ctx, 16};
      cuwrap::pinned_buffer<int> pinned{ctx, 16};
      cuwrap::managed_buffer<int> managed{ctx, 16};
      cuwrap::pitched_buffer<int> pitched{ctx, 4, 4};
      std::vector<int> host(16);
      cuwrap::host_registration registration{ctx, std::span{host}};
      cuwrap::stream s{ctx};
      cuwrap::stream_ordered_buffer<int> ordered{s, 16};
      cuwrap::memory_pool pool{cuwrap::device::get(0)};
      auto pooled = pool.allocate<int>(s, 16);
      s.synchronize();
    });
    CHECK(points >= 12);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: every copy and fill") {
    const int points = cuwrap::testing::fault_sweep([] {
      current_primary p;
      cuwrap::stream s{p.ctx};
      cuwrap::device_buffer<int> device{p.ctx, 16};
      std::vector<int> host(16);
      cuwrap::copy(device, host);
      cuwrap::copy(host, device);
      cuwrap::copy(s, device, host);
      cuwrap::fill(device, 3);
      cuwrap::fill(s, device, 4);
      cuwrap::zero(device);
      cuwrap::zero(s, device);
      cuwrap::pitched_buffer<int> pitched{p.ctx, 4, 4};
      cuwrap::copy_2d(pitched.view(), cuwrap::pitched_span<const int>::dense(host.data(), 4, 4));
      cuwrap::copy_2d(s, cuwrap::pitched_span<int>::dense(host.data(), 4, 4), pitched.view());
      s.synchronize();
    });
    CHECK(points >= 14);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(
      sw_fixture, "in deferred mode a stream-ordered buffer is freed when its stream gets there") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    {
      cuwrap::stream_ordered_buffer<int> buffer{s, 64};
      cuwrap::fill(s, buffer, 1);
    }
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);  // the free is still queued
    s.synchronize();
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "with two devices a pool can be shared with the peer") {
    const auto dev0 = cuwrap::device::get(0);
    const auto dev1 = cuwrap::device::get(1);
    cuwrap::memory_pool pool{dev0};
    CHECK(pool.access(dev1) == cuwrap::pool_access::none);
    pool.allow_access(dev1);
    CHECK(pool.access(dev1) == cuwrap::pool_access::read_write);
  }
}
