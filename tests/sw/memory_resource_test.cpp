// The concrete memory resources on the software driver: device, pinned, managed and pool
// resources, their call counts, alignment, equality and failure paths.
#include "cuwrap/memory_resource.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;
namespace mr = cuwrap::mr;

namespace {

struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

std::vector<int> iota_vector(std::size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 1);
  return v;
}

// Copies `host` into `device` memory and back through a second buffer, so the memory is used
// by the driver both ways.
void round_trip(void* device, const std::vector<int>& host) {
  const cuwrap::device_span<int> span{static_cast<int*>(device), host.size()};
  cuwrap::copy(span, host);
  std::vector<int> back(host.size());
  cuwrap::copy(back, span);
  CHECK(back == host);
}

bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

}  // namespace

// Which properties each resource declares, and which concept it satisfies.
static_assert(mr::stream_ordered_resource_with<mr::device_resource, mr::device_accessible>);
static_assert(!mr::resource_with<mr::device_resource, mr::host_accessible>);
static_assert(mr::resource_with<mr::pinned_resource, mr::host_accessible, mr::device_accessible>);
static_assert(!mr::stream_ordered_resource<mr::pinned_resource>);
static_assert(mr::resource_with<mr::managed_resource, mr::host_accessible, mr::device_accessible>);
static_assert(mr::stream_ordered_resource_with<mr::pool_resource, mr::device_accessible>);
static_assert(mr::stream_ordered_resource_with<mr::host_pool_resource, mr::device_accessible,
                                               mr::host_accessible>);
static_assert(std::is_nothrow_move_constructible_v<mr::device_resource> &&
              std::is_copy_constructible_v<mr::device_resource>);

TEST_SUITE("memory_resource") {
  TEST_CASE_FIXTURE(sw_fixture, "a device resource's memory holds data, one cuMemAlloc each") {
    current_primary p;
    mr::device_resource r{p.ctx};
    const auto host = iota_vector(1000);
    void* memory = nullptr;
    // The real driver's cuMemAlloc needs the context current: cuCtxGetCurrent finds it is.
    check_calls({"cuCtxGetCurrent", "cuMemAlloc_v2"},
                [&] { memory = r.allocate(host.size() * sizeof(int), alignof(int)); });
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);
    round_trip(memory, host);
    check_one_call("cuMemFree_v2", [&] { r.deallocate(memory, host.size() * sizeof(int)); });
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 0);
    CHECK(r.device() == cuwrap::device::get(0));
    CHECK(r.context() == p.ctx);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a device resource makes its context current only for the call") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    mr::device_resource r{ctx};
    void* memory = r.allocate(64);
    CHECK(memory != nullptr);
    CHECK(swcuda().context_stack_depth() == 0);
    r.deallocate(memory, 64);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a device resource allocates in stream order, one call each way") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    mr::device_resource r{p.ctx};
    void* memory = nullptr;
    check_one_call("cuMemAllocAsync", [&] { memory = r.allocate(s, 4096, 256); });
    CHECK(aligned(memory, 256));
    const std::vector<int> host = iota_vector(1024);
    cuwrap::copy(s, cuwrap::device_span<int>{static_cast<int*>(memory), 1024}, host);
    std::vector<int> back(1024);
    cuwrap::copy(s, back, cuwrap::device_span<const int>{static_cast<int*>(memory), 1024});
    check_one_call("cuMemFreeAsync", [&] { r.deallocate(s, memory, 4096, 256); });
    s.synchronize();
    CHECK(back == host);
    // CCCL's names for the same calls.
    void* other = r.allocate_async(128, 16, cuwrap::stream_ref{s});
    r.deallocate_async(other, 128, 16, cuwrap::stream_ref{s});
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "alignment: up to 256 bytes is given, more is refused by name") {
    current_primary p;
    mr::device_resource device{p.ctx};
    mr::pinned_resource pinned{p.ctx};
    mr::managed_resource managed{p.ctx};
    for (const std::size_t alignment : {1, 8, 64, 256}) {
      void* a = device.allocate(10, alignment);
      void* b = pinned.allocate(10, alignment);
      void* c = managed.allocate(10, alignment);
      // The driver aligns every allocation to at least 256 bytes.
      CHECK(aligned(a, mr::driver_alignment));
      CHECK(aligned(b, mr::driver_alignment));
      CHECK(aligned(c, mr::driver_alignment));
      device.deallocate(a, 10, alignment);
      pinned.deallocate(b, 10, alignment);
      managed.deallocate(c, 10, alignment);
    }
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(
          (void)device.allocate(10, 512),
          doctest::Contains("cuwrap::device_resource::allocate: alignment 512 is more than the "
                            "256 bytes"),
          cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)pinned.allocate(10, 3),
                           doctest::Contains("pinned_resource::allocate: alignment 3 is not a "
                                             "power of two"),
                           cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)managed.allocate(10, 4096),
                           doctest::Contains("managed_resource::allocate: alignment 4096"),
                           cuwrap::usage_error);
      cuwrap::stream_ref legacy = cuwrap::stream_ref::legacy();
      CHECK_THROWS_AS((void)device.allocate(legacy, 10, 1024), cuwrap::usage_error);
    });
    CHECK(calls.empty());  // refused before any driver call
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "zero bytes allocate nothing and deallocating nullptr does nothing") {
    current_primary p;
    mr::device_resource device{p.ctx};
    mr::pinned_resource pinned{p.ctx};
    mr::managed_resource managed{p.ctx};
    const auto calls = calls_made_by([&] {
      CHECK(device.allocate(0) == nullptr);
      CHECK(pinned.allocate(0) == nullptr);
      CHECK(managed.allocate(0) == nullptr);
      device.deallocate(nullptr, 0);
      pinned.deallocate(nullptr, 0);
      managed.deallocate(nullptr, 0);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "resources are equal when each can free the other's memory") {
    cuwrap::primary_context primary{cuwrap::device::get(0)};
    cuwrap::context created{cuwrap::device::get(0)};
    const mr::device_resource a{primary};
    const mr::device_resource b{primary};
    const mr::device_resource c{created};
    CHECK(a == b);
    CHECK(a != c);
    CHECK(mr::pinned_resource{primary} == mr::pinned_resource{primary});
    CHECK(mr::pinned_resource{primary} !=
          mr::pinned_resource{primary, cuwrap::pinned_flags::portable});
    CHECK(mr::managed_resource{primary} == mr::managed_resource{primary});
    CHECK(mr::managed_resource{primary} !=
          mr::managed_resource{primary, cuwrap::managed_attach::host});
    // Memory from one device resource is freed by an equal one.
    mr::device_resource copy = a;
    void* memory = copy.allocate(32);
    mr::device_resource{b}.deallocate(memory, 32);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a resource keeps its context alive") {
    std::optional<mr::device_resource> r;
    {
      cuwrap::context ctx{cuwrap::device::get(0)};
      r.emplace(ctx);
    }
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 1);
    void* memory = r->allocate(16);
    r->deallocate(memory, 16);
    r.reset();
    CHECK(swcuda().live_handles(SWCU_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a resource of a moved-from context is refused") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::primary_context moved{std::move(ctx)};
    CHECK_THROWS_WITH_AS(mr::device_resource{ctx},  // NOLINT(bugprone-use-after-move)
                         doctest::Contains("device_resource"), cuwrap::usage_error);
    CHECK_THROWS_AS(mr::pinned_resource{ctx}, cuwrap::usage_error);   // NOLINT
    CHECK_THROWS_AS(mr::managed_resource{ctx}, cuwrap::usage_error);  // NOLINT
    mr::device_resource r{moved};
    mr::device_resource taken{std::move(r)};
    CHECK_THROWS_AS((void)r.allocate(8), cuwrap::usage_error);  // NOLINT(bugprone-use-after-move)
  }

  TEST_CASE_FIXTURE(sw_fixture, "pinned memory is host memory the device copies from") {
    current_primary p;
    mr::pinned_resource r{p.ctx, cuwrap::pinned_flags::portable};
    CHECK(r.flags() == cuwrap::pinned_flags::portable);
    CHECK(r.context() == p.ctx);
    void* memory = nullptr;
    check_calls({"cuCtxGetCurrent", "cuMemHostAlloc"}, [&] { memory = r.allocate(400); });
    CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 1);
    auto* ints = static_cast<int*>(memory);
    std::iota(ints, ints + 100, 0);  // host access
    cuwrap::device_buffer<int> device{p.ctx, 100};
    cuwrap::copy(device, std::span<const int>{ints, 100});
    std::vector<int> back(100);
    cuwrap::copy(back, device);
    CHECK(std::equal(back.begin(), back.end(), ints));
    check_one_call("cuMemFreeHost", [&] { r.deallocate(memory, 400); });
    CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "managed memory is written by the host and read by the device") {
    current_primary p;
    mr::managed_resource r{p.ctx, cuwrap::managed_attach::global};
    CHECK(r.attach() == cuwrap::managed_attach::global);
    CHECK(r.context() == p.ctx);
    void* memory = nullptr;
    check_calls({"cuCtxGetCurrent", "cuMemAllocManaged"}, [&] { memory = r.allocate(400); });
    auto* ints = static_cast<int*>(memory);
    std::iota(ints, ints + 100, 5);
    std::vector<int> back(100);
    cuwrap::copy(back, cuwrap::device_span<const int>{ints, 100});
    CHECK(back == std::vector<int>(ints, ints + 100));
    check_one_call("cuMemFree_v2", [&] { r.deallocate(memory, 400); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "a pool resource allocates from its pool, in stream order") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    mr::pool_resource r{pool, s};
    CHECK(r.pool() == pool);
    CHECK(r.sync_stream() == s);
    void* memory = nullptr;
    check_one_call("cuMemAllocFromPoolAsync", [&] { memory = r.allocate(s, 1024, 256); });
    CHECK(pool.usage().used_current >= 1024);
    round_trip(memory, iota_vector(256));
    check_one_call("cuMemFreeAsync", [&] { r.deallocate(s, memory, 1024, 256); });
    s.synchronize();
    CHECK(pool.usage().used_current == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a pool resource's synchronous allocate synchronizes its stream") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    mr::pool_resource r{pool, s};
    void* memory = nullptr;
    check_calls({"cuMemAllocFromPoolAsync", "cuStreamSynchronize"},
                [&] { memory = r.allocate(512); });
    round_trip(memory, iota_vector(128));
    check_one_call("cuMemFree_v2", [&] { r.deallocate(memory, 512); });
    CHECK(pool.usage().used_current == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "pool resources are equal when they share the pool") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    cuwrap::stream t{p.ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    cuwrap::memory_pool other{cuwrap::device::get(0)};
    CHECK(mr::pool_resource{pool, s} == mr::pool_resource{pool, t});
    CHECK(mr::pool_resource{pool, s} != mr::pool_resource{other, s});
    cuwrap::memory_pool taken{std::move(pool)};
    CHECK_THROWS_WITH_AS(mr::pool_resource(pool, s),  // NOLINT(bugprone-use-after-move)
                         doctest::Contains("memory pool"), cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a failed allocation throws, names the bytes and leaks nothing") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    mr::device_resource device{p.ctx};
    mr::pinned_resource pinned{p.ctx};
    mr::managed_resource managed{p.ctx};
    mr::pool_resource pooled{pool, s};
    const std::size_t allocations = swcuda().live_handles(SWCU_DEVICE_ALLOCATION);
    REQUIRE(swcuda().add_fault_rule("cuMemAlloc:1:CUDA_ERROR_OUT_OF_MEMORY;"
                                    "cuMemHostAlloc:1:CUDA_ERROR_OUT_OF_MEMORY;"
                                    "cuMemAllocManaged:1:CUDA_ERROR_OUT_OF_MEMORY;"
                                    "cuMemAllocAsync:1:CUDA_ERROR_OUT_OF_MEMORY;"
                                    "cuMemAllocFromPoolAsync:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK_THROWS_WITH_AS((void)device.allocate(1000), doctest::Contains("1000 bytes on device 0"),
                         cuwrap::out_of_memory);
    CHECK_THROWS_AS((void)pinned.allocate(1000), cuwrap::out_of_memory);
    CHECK_THROWS_AS((void)managed.allocate(1000), cuwrap::out_of_memory);
    CHECK_THROWS_AS((void)device.allocate(s, 1000), cuwrap::out_of_memory);
    CHECK_THROWS_WITH_AS((void)pooled.allocate(s, 1000), doctest::Contains("1000 bytes"),
                         cuwrap::out_of_memory);
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == allocations);
    CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 0);
    CHECK(pool.usage().used_current == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: every resource's allocations") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::memory_pool pool{cuwrap::device::get(0)};
      mr::device_resource device{ctx};
      mr::pinned_resource pinned{ctx};
      mr::managed_resource managed{ctx};
      mr::pool_resource pooled{pool, s};
      device.deallocate(device.allocate(64), 64);
      device.deallocate(s, device.allocate(s, 64), 64);
      pinned.deallocate(pinned.allocate(64), 64);
      managed.deallocate(managed.allocate(64), 64);
      pooled.deallocate(pooled.allocate(64), 64);
      pooled.deallocate(s, pooled.allocate(s, 64), 64);
      mr::resource_buffer<int> buffer{device, 16};
      mr::ordered_resource_buffer<int> ordered{pooled, s, 16};
      s.synchronize();
    });
    CHECK(points >= 14);
  }
}
