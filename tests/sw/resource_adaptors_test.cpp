// any_resource, resource_ref, the statistics and logging adaptors, the std::pmr adaptor and the
// resource-backed buffers, on the software driver.
#include <doctest/doctest.h>

#include <memory_resource>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/memory_resource.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;
namespace mr = cuwrap::mr;

namespace {

struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

// A host-only resource (operator new), to check what the properties let through.
struct host_heap {
  void* allocate(std::size_t bytes, std::size_t alignment) {
    return ::operator new (bytes, std::align_val_t{alignment});
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    ::operator delete (p, bytes, std::align_val_t{alignment});
  }
  friend bool operator==(const host_heap&, const host_heap&) = default;
  friend constexpr void get_property(const host_heap&, mr::host_accessible) noexcept {}
};

}  // namespace

using any_device = mr::any_resource<mr::device_accessible>;
using any_host_device = mr::any_resource<mr::host_accessible, mr::device_accessible>;
using any_ordered = mr::any_stream_ordered_resource<mr::device_accessible>;
using ref_device = mr::resource_ref<mr::device_accessible>;
using ref_ordered = mr::stream_ordered_resource_ref<mr::device_accessible>;

// The erased wrappers satisfy the concepts themselves, with exactly their properties.
static_assert(mr::resource_with<any_device, mr::device_accessible>);
static_assert(!mr::has_property<any_device, mr::host_accessible>);
static_assert(!mr::stream_ordered_resource<any_device>);
static_assert(mr::stream_ordered_resource_with<any_ordered, mr::device_accessible>);
static_assert(mr::resource_with<ref_device, mr::device_accessible>);
static_assert(mr::stream_ordered_resource_with<ref_ordered, mr::device_accessible>);
// Conversions exist exactly where the source has every required property.
static_assert(std::is_convertible_v<mr::device_resource, any_device>);
static_assert(std::is_convertible_v<mr::device_resource, any_ordered>);
static_assert(!std::is_convertible_v<mr::device_resource, any_host_device>);
static_assert(std::is_convertible_v<mr::pinned_resource, any_host_device>);
static_assert(!std::is_convertible_v<mr::pinned_resource, any_ordered>);  // not stream-ordered
static_assert(!std::is_convertible_v<host_heap, any_device>);
static_assert(std::is_convertible_v<host_heap, mr::any_resource<mr::host_accessible>>);
static_assert(std::is_convertible_v<any_host_device, any_device>);
static_assert(!std::is_convertible_v<any_device, any_host_device>);
static_assert(std::is_convertible_v<any_ordered, any_device>);
static_assert(!std::is_convertible_v<any_device, any_ordered>);
static_assert(std::is_convertible_v<mr::device_resource&, ref_ordered>);
static_assert(!std::is_convertible_v<const mr::device_resource&, ref_device>);
static_assert(!std::is_convertible_v<host_heap&, ref_device>);
static_assert(std::is_convertible_v<any_ordered&, ref_device>);
static_assert(std::is_convertible_v<ref_ordered, ref_device>);
static_assert(std::is_convertible_v<ref_ordered, any_ordered>);  // holds the reference
static_assert(!std::is_convertible_v<ref_device, ref_ordered>);
// The adaptors declare their upstream's properties and ordering.
static_assert(mr::stream_ordered_resource_with<mr::statistics_resource<mr::device_resource>,
                                               mr::device_accessible>);
static_assert(!mr::stream_ordered_resource<mr::statistics_resource<mr::pinned_resource>>);
static_assert(mr::resource_with<mr::logging_resource<mr::pinned_resource>, mr::host_accessible,
                                mr::device_accessible>);
static_assert(!mr::has_property<mr::logging_resource<mr::device_resource>, mr::host_accessible>);
// The pmr adaptor takes host-accessible resources only.
template <class R>
concept pmr_adaptable = requires {
  sizeof(mr::pmr_resource<R>);
};
static_assert(pmr_adaptable<mr::pinned_resource> && pmr_adaptable<host_heap>);
static_assert(!pmr_adaptable<mr::device_resource>);

TEST_SUITE("memory_resource") {
  TEST_CASE_FIXTURE(sw_fixture, "any_resource owns a copy and forwards each call once") {
    current_primary p;
    mr::device_resource device{p.ctx};
    any_device any{device};
    CHECK_FALSE(any.empty());
    CHECK(any.type() == typeid(mr::device_resource));
    REQUIRE(any.target<mr::device_resource>() != nullptr);
    CHECK(*any.target<mr::device_resource>() == device);
    CHECK(any.target<mr::pinned_resource>() == nullptr);
    void* memory = nullptr;
    const auto calls = calls_made_by([&] { memory = any.allocate(256, 256); });
    CHECK(calls.at("cuMemAlloc_v2") == 1);
    check_one_call("cuMemFree_v2", [&] { any.deallocate(memory, 256, 256); });
    // Copies are equal and free each other's memory; moved-from ones hold nothing.
    any_device copy = any;
    CHECK(copy == any);
    memory = copy.allocate(16);
    any.deallocate(memory, 16);
    any_device moved{std::move(copy)};
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(copy.type() == typeid(void));
    CHECK_THROWS_WITH_AS((void)copy.allocate(16), doctest::Contains("any_resource::allocate"),
                         cuwrap::usage_error);
    copy.deallocate(nullptr, 0);  // does nothing
    CHECK(moved == any);
    copy = moved;
    CHECK(copy == moved);
  }

  TEST_CASE_FIXTURE(sw_fixture, "any_resource equality: the same type and equal resources") {
    cuwrap::primary_context primary{cuwrap::device::get(0)};
    cuwrap::context created{cuwrap::device::get(0)};
    const any_device a{mr::device_resource{primary}};
    const any_device b{mr::device_resource{created}};
    const any_device c{mr::pinned_resource{primary}};
    CHECK(a == any_device{mr::device_resource{primary}});
    CHECK(a != b);
    CHECK(a != c);  // different types never compare equal
  }

  TEST_CASE_FIXTURE(sw_fixture, "any_resource round trips: fewer properties, synchronous view") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    any_host_device both{mr::managed_resource{p.ctx}};
    any_device device_only{both};  // a copy of the managed resource, fewer properties
    CHECK(device_only.type() == typeid(mr::managed_resource));
    void* memory = device_only.allocate(64);
    both.deallocate(memory, 64);
    any_ordered ordered{mr::device_resource{p.ctx}};
    memory = ordered.allocate(s, 128);
    ordered.deallocate(s, memory, 128);
    any_device synchronous{std::move(ordered)};  // the same resource, used synchronously
    CHECK(ordered.empty());                      // NOLINT(bugprone-use-after-move)
    CHECK(synchronous.type() == typeid(mr::device_resource));
    synchronous.deallocate(synchronous.allocate(32), 32);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "resource_ref refers to a resource without owning it") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    mr::device_resource device{p.ctx};
    ref_ordered ref{device};
    CHECK(ref.target<mr::device_resource>() == &device);
    void* memory = nullptr;
    check_one_call("cuMemAllocAsync", [&] { memory = ref.allocate(s, 64); });
    check_one_call("cuMemFreeAsync", [&] { ref.deallocate(s, memory, 64); });
    const ref_device synchronous{ref};  // fewer promises, the same resource
    CHECK(synchronous.target<mr::device_resource>() == &device);
    CHECK(synchronous == ref_device{device});
    // A reference to an any_resource refers to the resource it holds.
    any_ordered any{device};
    const ref_device to_any{any};
    CHECK(to_any.target<mr::device_resource>() == any.target<mr::device_resource>());
    CHECK(to_any == synchronous);  // same type, equal resources
    any_ordered taken{std::move(any)};
    const ref_device to_moved{any};  // NOLINT(bugprone-use-after-move)
    CHECK(to_moved.empty());
    CHECK_THROWS_WITH_AS((void)to_moved.allocate(8), doctest::Contains("resource_ref::allocate"),
                         cuwrap::usage_error);
    // An any_resource made from a reference holds the reference: the resource is not copied.
    mr::statistics_resource stats{device};
    const any_ordered holding_ref{ref_ordered{stats}};
    CHECK(holding_ref.type() == typeid(ref_ordered));
    {
      const mr::ordered_resource_buffer<int> buffer{holding_ref, s, 8};
      CHECK(stats.statistics().bytes_in_use == 32);
    }
    CHECK(stats.statistics().deallocations == 1);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "statistics count bytes, the peak and the calls") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    mr::statistics_resource stats{mr::device_resource{p.ctx}};
    CHECK(stats.statistics() == mr::resource_statistics{});
    void* a = stats.allocate(1000);
    void* b = stats.allocate(s, 500);
    CHECK(stats.statistics() == mr::resource_statistics{1500, 1500, 2, 0});
    stats.deallocate(a, 1000);
    CHECK(stats.statistics() == mr::resource_statistics{500, 1500, 2, 1});
    void* c = stats.allocate(200);
    CHECK(stats.statistics() == mr::resource_statistics{700, 1500, 3, 1});
    stats.reset_peak_and_counts();
    CHECK(stats.statistics() == mr::resource_statistics{700, 700, 0, 0});
    auto copy = stats;  // copies share the counters
    copy.deallocate(s, b, 500);
    copy.deallocate(c, 200);
    CHECK(stats.statistics() == mr::resource_statistics{0, 700, 0, 2});
    CHECK(copy == stats);
    CHECK(stats.upstream() == mr::device_resource{p.ctx});
    CHECK(std::as_const(stats).upstream().context() == p.ctx);
    stats.deallocate(nullptr, 0);  // not counted
    CHECK(stats.statistics().deallocations == 2);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "statistics count nothing for a failed allocation") {
    current_primary p;
    mr::statistics_resource stats{mr::device_resource{p.ctx}};
    REQUIRE(swcuda().add_fault_rule("cuMemAlloc:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK_THROWS_AS((void)stats.allocate(64), cuwrap::out_of_memory);
    CHECK(stats.statistics() == mr::resource_statistics{});
  }

  TEST_CASE_FIXTURE(sw_fixture, "statistics are exact under concurrent allocation") {
    mr::statistics_resource stats{host_heap{}};
    constexpr int threads = 4;
    constexpr int rounds = 2000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&stats] {
        for (int i = 0; i < rounds; ++i) {
          void* p = stats.allocate(16);
          stats.deallocate(p, 16);
        }
      });
    }
    for (auto& w : workers) {
      w.join();
    }
    const auto counted = stats.statistics();
    CHECK(counted.bytes_in_use == 0);
    CHECK(counted.allocations == threads * rounds);
    CHECK(counted.deallocations == threads * rounds);
    CHECK(counted.peak_bytes >= 16);
    CHECK(counted.peak_bytes <= 16 * threads);
  }

  TEST_CASE_FIXTURE(sw_fixture, "logging writes a line per call, failures included") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    std::ostringstream log;
    mr::logging_resource logged{mr::device_resource{p.ctx}, log};
    void* a = logged.allocate(100, 64);
    logged.deallocate(a, 100, 64);
    void* b = logged.allocate(s, 50);
    logged.deallocate(s, b, 50);
    REQUIRE(swcuda().add_fault_rule("cuMemAlloc:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK_THROWS_AS((void)logged.allocate(7, 8), cuwrap::out_of_memory);
    std::ostringstream expected;
    const void* stream = s.get();
    expected << "allocate 100 bytes (alignment 64) -> " << a << '\n'
             << "deallocate " << a << " 100 bytes (alignment 64)\n"
             << "allocate 50 bytes (alignment " << mr::default_alignment << ") on stream " << stream
             << " -> " << b << '\n'
             << "deallocate " << b << " 50 bytes (alignment " << mr::default_alignment
             << ") on stream " << stream << '\n'
             << "allocate 7 bytes (alignment 8) failed\n";
    CHECK(log.str() == expected.str());
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "logging to a callback sees each call's fields") {
    std::vector<mr::resource_call> calls;
    mr::logging_resource logged{host_heap{},
                                [&calls](const mr::resource_call& c) { calls.push_back(c); }};
    void* p = logged.allocate(24, 8);
    logged.deallocate(p, 24, 8);
    CHECK(logged.upstream() == host_heap{});
    CHECK(std::as_const(logged) == logged);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].operation == mr::resource_call::kind::allocate);
    CHECK(calls[0].pointer == p);
    CHECK(calls[0].bytes == 24);
    CHECK(calls[0].alignment == 8);
    CHECK_FALSE(calls[0].stream.has_value());
    CHECK_FALSE(calls[0].failed);
    CHECK(calls[1].operation == mr::resource_call::kind::deallocate);
    CHECK(calls[1].pointer == p);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a sink that throws on an allocation frees it") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    mr::statistics_resource stats{mr::device_resource{p.ctx}};
    mr::logging_resource logged{stats, [](const mr::resource_call& c) {
                                  if (c.operation == mr::resource_call::kind::allocate) {
                                    throw std::runtime_error{"log full"};
                                  }
                                }};
    CHECK_THROWS_WITH_AS((void)logged.allocate(64), "log full", std::runtime_error);
    CHECK_THROWS_WITH_AS((void)logged.allocate(s, 64), "log full", std::runtime_error);
    s.synchronize();
    CHECK(stats.statistics() == mr::resource_statistics{0, 64, 2, 2});
  }

  TEST_CASE_FIXTURE(sw_fixture, "std::pmr::vector keeps its elements in pinned memory") {
    current_primary p;
    mr::statistics_resource pinned{mr::pinned_resource{p.ctx}};
    mr::pmr_resource pmr{pinned};
    {
      std::pmr::vector<int> v{&pmr};
      for (int i = 0; i < 1000; ++i) {
        v.push_back(i);
      }
      CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 1);
      CHECK(pinned.statistics().bytes_in_use >= 1000 * sizeof(int));
      CHECK(pinned.statistics().allocations > 1);  // the vector grew
      // The device reads the vector's storage: it is pinned memory.
      cuwrap::device_buffer<int> device{p.ctx, v.size()};
      cuwrap::copy(device, v);
      std::vector<int> back(v.size());
      cuwrap::copy(back, device);
      CHECK(std::equal(back.begin(), back.end(), v.begin()));
    }
    CHECK(pinned.statistics().bytes_in_use == 0);
    CHECK(swcuda().live_handles(SWCU_HOST_ALLOCATION) == 0);
    mr::pmr_resource same{pinned};
    mr::pmr_resource other{host_heap{}};
    CHECK(pmr.is_equal(same));
    CHECK_FALSE(pmr.is_equal(other));
    CHECK(pmr.resource() == pinned);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a resource buffer keeps its resource and frees through it") {
    current_primary p;
    mr::statistics_resource stats{mr::device_resource{p.ctx}};
    std::vector<int> host(100);
    std::iota(host.begin(), host.end(), 3);
    {
      mr::resource_buffer<int> buffer{stats, host.size()};
      CHECK(buffer.size() == 100);
      CHECK(buffer.size_bytes() == 400);
      CHECK(stats.statistics().bytes_in_use == 400);
      cuwrap::copy(buffer, host);
      std::vector<int> back(100);
      cuwrap::copy(back, buffer);
      CHECK(back == host);
      CHECK(buffer.address() == reinterpret_cast<CUdeviceptr>(buffer.data()));
      const cuwrap::device_span<const int> view = buffer;
      CHECK(view.size() == 100);
      CHECK(buffer.resource().type() == typeid(stats));
      mr::resource_buffer<int> moved{std::move(buffer)};
      CHECK(buffer.moved_from());  // NOLINT(bugprone-use-after-move)
      CHECK_THROWS_WITH_AS((void)buffer.data(), doctest::Contains("resource_buffer::data"),
                           cuwrap::usage_error);
      mr::resource_buffer<int> other{stats, 10};
      other = std::move(moved);  // frees other's memory
      CHECK(stats.statistics().bytes_in_use == 400);
    }
    CHECK(stats.statistics() == mr::resource_statistics{0, 440, 2, 2});
  }

  TEST_CASE_FIXTURE(sw_fixture, "an ordered resource buffer frees in its stream's order") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    mr::statistics_resource stats{mr::pool_resource{pool, s}};
    {
      mr::ordered_resource_buffer<float> buffer{stats, s, 256};
      CHECK(buffer.stream() == s);
      CHECK(buffer.size() == 256);
      CHECK(buffer.size_bytes() == 1024);
      CHECK_FALSE(buffer.empty());
      CHECK(buffer.address() == reinterpret_cast<CUdeviceptr>(buffer.data()));
      CHECK(buffer.resource().type() == typeid(stats));
      const cuwrap::device_span<const float> view = buffer;
      CHECK(view.size() == 256);
      cuwrap::fill(s, buffer, 2.5f);
      std::vector<float> back(256);
      cuwrap::copy(s, back, buffer);
      s.synchronize();
      CHECK(back == std::vector<float>(256, 2.5f));
      CHECK(stats.statistics().bytes_in_use == 1024);
      mr::ordered_resource_buffer<float> other{stats, s, 4};
      other = std::move(buffer);   // frees other's memory in stream order
      CHECK(buffer.moved_from());  // NOLINT(bugprone-use-after-move)
      CHECK_THROWS_WITH_AS((void)buffer.data(), doctest::Contains("ordered_resource_buffer::data"),
                           cuwrap::usage_error);
      buffer = std::move(other);
      const auto calls =
          calls_made_by([&] { mr::ordered_resource_buffer<float> gone{std::move(buffer)}; });
      CHECK(calls.at("cuMemFreeAsync") == 1);
      CHECK(calls.size() == 1);
    }
    s.synchronize();
    CHECK(pool.usage().used_current == 0);
    CHECK(stats.statistics().bytes_in_use == 0);
  }
}
