// cuwrap's memory resources in CCCL (the CUDA toolkit's include/cccl, cuda/memory_resource):
// they satisfy cuda::mr's concepts with CCCL's properties and pass into cuda::mr::resource_ref
// and async_resource_ref, which then allocate through them. CCCL's memory resources are
// experimental: the macro must be defined before any CCCL header (cuwrap/mr/cccl.hpp defines it
// too, which helps only when it comes first).
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#include <doctest/doctest.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/memory_resource.hpp"
#include "cuwrap/mr/cccl.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
namespace mr = cuwrap::mr;

static_assert(cuda::mr::async_resource_with<mr::device_resource, cuda::mr::device_accessible>);
static_assert(!cuda::mr::resource_with<mr::device_resource, cuda::mr::host_accessible>);
static_assert(cuda::mr::resource_with<mr::pinned_resource, cuda::mr::host_accessible,
                                      cuda::mr::device_accessible>);
static_assert(!cuda::mr::async_resource<mr::pinned_resource>);
static_assert(cuda::mr::resource_with<mr::managed_resource, cuda::mr::host_accessible,
                                      cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<mr::pool_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<mr::any_stream_ordered_resource<mr::device_accessible>,
                                            cuda::mr::device_accessible>);
static_assert(!cuda::mr::async_resource<mr::any_resource<mr::device_accessible>>);
static_assert(cuda::mr::async_resource_with<mr::stream_ordered_resource_ref<mr::device_accessible>,
                                            cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<mr::statistics_resource<mr::device_resource>,
                                            cuda::mr::device_accessible>);
static_assert(
    cuda::mr::resource_with<mr::logging_resource<mr::pinned_resource>, cuda::mr::host_accessible>);

TEST_SUITE("memory_resource") {
  TEST_CASE_FIXTURE(sw_fixture, "a cuwrap resource allocates through CCCL's resource_ref") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    mr::statistics_resource stats{mr::device_resource{ctx}};
    cuda::mr::async_resource_ref<cuda::mr::device_accessible> ref{stats};
    void* memory = nullptr;
    check_one_call("cuMemAllocAsync",
                   [&] { memory = ref.allocate_async(1024, 256, cuda::stream_ref{s.get()}); });
    CHECK(stats.statistics().bytes_in_use == 1024);
    std::vector<int> host(256, 9);
    cuwrap::copy(s, cuwrap::device_span<int>{static_cast<int*>(memory), 256}, host);
    std::vector<int> back(256);
    cuwrap::copy(s, back, cuwrap::device_span<const int>{static_cast<int*>(memory), 256});
    check_one_call("cuMemFreeAsync",
                   [&] { ref.deallocate_async(memory, 1024, 256, cuda::stream_ref{s.get()}); });
    s.synchronize();
    CHECK(back == host);
    CHECK(stats.statistics().deallocations == 1);

    mr::pinned_resource pinned{ctx};
    cuda::mr::resource_ref<cuda::mr::host_accessible> host_ref{pinned};
    auto* ints = static_cast<int*>(host_ref.allocate(64, 16));
    ints[15] = 42;  // host memory
    CHECK(ints[15] == 42);
    host_ref.deallocate(ints, 64, 16);
  }
}
