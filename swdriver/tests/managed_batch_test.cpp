// The managed memory batch operations of CUDA 13: cuMemPrefetchBatchAsync,
// cuMemDiscardBatchAsync and cuMemDiscardAndPrefetchBatchAsync.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "graph_fixture.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

// What the software driver makes a discarded byte read as (docs/software-driver.md).
constexpr unsigned char kDiscardedByte = 0xDB;

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

CUmemLocation device_location(int ordinal) {
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = ordinal;
  return loc;
}

CUmemLocation host_location() {
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_HOST;
  return loc;
}

CUmemLocation last_prefetch(CUdeviceptr p, std::size_t bytes) {
  int type = -1, id = -1;
  REQUIRE(swcu::test::api().cuMemRangeGetAttribute(
              &type, sizeof type, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, bytes) ==
          CUDA_SUCCESS);
  REQUIRE(swcu::test::api().cuMemRangeGetAttribute(&id, sizeof id,
                                                   CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
                                                   p, bytes) == CUDA_SUCCESS);
  CUmemLocation loc{};
  loc.type = static_cast<CUmemLocationType>(type);
  loc.id = id;
  return loc;
}

bool all_bytes(CUdeviceptr p, std::size_t bytes, unsigned char value) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (b[i] != value) return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("managed memory batch operations") {
  // cuMemPrefetchBatchAsync (cuda.h): "The prefetch location for every operation in the batch
  // is specified in the prefetchLocs array. Each entry in this array can apply to more than one
  // operation ... if a batch has 10 prefetches ... the first 4 of which are to be prefetched to
  // one location and the remaining 6 ... to another, then numPrefetchLocs will be 2,
  // prefetchLocIdxs will be {0, 4}"; "The semantics of the individual prefetch operations are as
  // described in cuMemPrefetchAsync" (which records the last prefetch location).
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a prefetch batch moves each range to the location its index names") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t page = page_size();
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 4 * page, CU_MEM_ATTACH_GLOBAL));
    std::memset(reinterpret_cast<void*>(m), 0x11, 4 * page);
    CUdeviceptr dptrs[3] = {m, m + page, m + 2 * page};
    std::size_t sizes[3] = {page, page, 2 * page};
    CUmemLocation locations[2] = {device_location(0), host_location()};
    std::size_t first[2] = {0, 1};  // range 0 to the device, ranges 1 and 2 to the host
    ctl.reset_call_counts();
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemPrefetchBatchAsync(dptrs, sizes, 3, locations, first, 2, 0, s));
    CHECK(ctl.call_count("cuMemPrefetchBatchAsync") == 1);
    CHECK(last_prefetch(m, page).type == CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK(last_prefetch(m, page).id == 0);
    CHECK(last_prefetch(m + page, 3 * page).type == CU_MEM_LOCATION_TYPE_HOST);
    // Managed memory reports where it was prefetched to, as after cuMemPrefetchAsync.
    unsigned type = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m + 2 * page));
    CHECK(type == CU_MEMORYTYPE_HOST);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 4 * page, 0x11));  // a prefetch keeps the contents

    // The per-thread default stream is no legacy NULL stream.
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemPrefetchBatchAsync_ptsz(dptrs, sizes, 1, locations + 1, first, 1, 0, nullptr));
    CHECK(last_prefetch(m, page).type == CU_MEM_LOCATION_TYPE_HOST);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // cuMemDiscardBatchAsync (cuda.h): "Reading from a discarded range, without a subsequent write
  // or prefetch to that part of the range, will return an indeterminate value"; "This operation
  // can be undone on any part of the range by either writing to it or prefetching it". The
  // software driver's indeterminate value is kDiscardedByte, written in stream order; what is
  // written afterwards reads back; bytes outside the ranges keep their values.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a discard batch makes the ranges' contents garbage") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t page = page_size();
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 3 * page, CU_MEM_ATTACH_GLOBAL));
    std::memset(reinterpret_cast<void*>(m), 0x22, 3 * page);
    CUdeviceptr dptrs[2] = {m, m + 2 * page};
    std::size_t sizes[2] = {page, 100};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemDiscardBatchAsync(dptrs, sizes, 2, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, page, kDiscardedByte));
    CHECK(all_bytes(m + page, page, 0x22));  // not discarded
    CHECK(all_bytes(m + 2 * page, 100, kDiscardedByte));
    CHECK(all_bytes(m + 2 * page + 100, page - 100, 0x22));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(m, 0x33, page, s));  // a write undoes it
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, page, 0x33));

    // Discard, then prefetch: "semantically equivalent to calling cuMemDiscardBatchAsync
    // followed by cuMemPrefetchBatchAsync".
    CUmemLocation to = device_location(0);
    std::size_t first = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemDiscardAndPrefetchBatchAsync(dptrs, sizes, 1, &to, &first, 1, 0, s));
    CHECK(last_prefetch(m, page).type == CU_MEM_LOCATION_TYPE_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, page, kDiscardedByte));
    CHECK(all_bytes(m + page, page, 0x22));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemDiscardBatchAsync_ptsz(dptrs + 1, sizes + 1, 1, 0, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // The batch is one stream operation: a discard queued behind other work runs after it.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a discard batch runs in stream order") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 256, CU_MEM_ATTACH_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(m, 0x44, 256, s));
    CUdeviceptr dptr = m + 128;
    std::size_t size = 128;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemDiscardBatchAsync(&dptr, &size, 1, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 128, 0x44));
    CHECK(all_bytes(m + 128, 128, kDiscardedByte));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // The arguments as cuda.h states them: "flags - Flags reserved for future use. Must be zero";
  // "hStream - ... Must not be legacy NULL stream"; "Each memory range specified must refer to
  // managed memory" (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0 here); "the first entry in
  // prefetchLocIdxs must always be 0 ... each entry must be greater than the previous entry and
  // the last entry should be less than count ... numPrefetchLocs must be lesser than or equal to
  // count". Nothing is enqueued or recorded when a call fails.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "batch arguments are validated") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t page = page_size();
    CUdeviceptr m = 0, d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 2 * page, CU_MEM_ATTACH_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, page));
    std::memset(reinterpret_cast<void*>(m), 0x55, 2 * page);
    CUdeviceptr dptrs[2] = {m, m + page};
    std::size_t sizes[2] = {page, page};
    CUmemLocation locations[2] = {device_location(0), host_location()};
    std::size_t first[2] = {0, 1};

    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, sizes, 2, 1, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, sizes, 2, 0, nullptr),
                           CUDA_ERROR_INVALID_VALUE);  // the legacy NULL stream
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, sizes, 2, 0, CU_STREAM_LEGACY),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, sizes, 0, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(nullptr, sizes, 2, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, nullptr, 2, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr not_managed[2] = {m, d};
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(not_managed, sizes, 2, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    std::size_t too_long[2] = {page, page + 1};
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, too_long, 2, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    std::size_t empty[2] = {page, 0};
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(dptrs, empty, 2, 0, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemDiscardBatchAsync(dptrs, sizes, 2, 0, reinterpret_cast<CUstream>(&first)),
        CUDA_ERROR_INVALID_HANDLE);

    const auto prefetch = [&](std::size_t* idxs, std::size_t n, CUmemLocation* locs) {
      return cu.cuMemPrefetchBatchAsync(dptrs, sizes, 2, locs, idxs, n, 0, s);
    };
    std::size_t starts_at_1[1] = {1};
    std::size_t not_increasing[2] = {0, 0};
    std::size_t past_count[2] = {0, 2};
    std::size_t three[3] = {0, 1, 1};
    CUmemLocation three_locations[3] = {host_location(), host_location(), host_location()};
    SWCU_TEST_CHECK_RESULT(prefetch(starts_at_1, 1, locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(not_increasing, 2, locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(past_count, 2, locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(three, 3, three_locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(first, 0, locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(nullptr, 2, locations), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(prefetch(first, 2, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUmemLocation bad_device[2] = {device_location(7), host_location()};
    SWCU_TEST_CHECK_RESULT(prefetch(first, 2, bad_device), CUDA_ERROR_INVALID_DEVICE);
    CUmemLocation bad_type[2] = {device_location(0), {}};  // CU_MEM_LOCATION_TYPE_INVALID
    SWCU_TEST_CHECK_RESULT(prefetch(first, 2, bad_type), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemDiscardAndPrefetchBatchAsync(dptrs, sizes, 2, locations, past_count, 2, 0, s),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemDiscardAndPrefetchBatchAsync(dptrs, sizes, 2, locations, first, 2, 0, nullptr),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 2 * page, 0x55));  // no failed call discarded anything
    CHECK(last_prefetch(m, 2 * page).type == CU_MEM_LOCATION_TYPE_INVALID);  // nor prefetched

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // Managed memory from a managed pool (CUDA 13) is managed memory for the batch operations too.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "batches take managed pool memory") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    props.location.type = CU_MEM_LOCATION_TYPE_NONE;
    CUmemoryPool pool = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolCreate(&pool, &props));
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&m, 512, pool, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    std::memset(reinterpret_cast<void*>(m), 0x66, 512);
    std::size_t size = 512, first = 0;
    CUmemLocation to = device_location(0);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemDiscardAndPrefetchBatchAsync(&m, &size, 1, &to, &first, 1, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 512, kDiscardedByte));
    CHECK(last_prefetch(m, 512).type == CU_MEM_LOCATION_TYPE_DEVICE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(m, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(pool));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "fault rules apply to batches") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr m = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&m, 64, CU_MEM_ATTACH_GLOBAL));
    std::memset(reinterpret_cast<void*>(m), 0x77, 64);
    REQUIRE(ctl.add_fault_rule("cuMemDiscardBatchAsync:1:CUDA_ERROR_OUT_OF_MEMORY;"
                               "cuMemPrefetchBatchAsync:1:CUDA_ERROR_INVALID_DEVICE;"
                               "cuMemDiscardAndPrefetchBatchAsync:1:CUDA_ERROR_NOT_PERMITTED") ==
            0);
    std::size_t size = 64, first = 0;
    CUmemLocation to = host_location();
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardBatchAsync(&m, &size, 1, 0, s), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(cu.cuMemPrefetchBatchAsync(&m, &size, 1, &to, &first, 1, 0, s),
                           CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemDiscardAndPrefetchBatchAsync(&m, &size, 1, &to, &first, 1, 0, s),
                           CUDA_ERROR_NOT_PERMITTED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 64, 0x77));
    CHECK(last_prefetch(m, 64).type == CU_MEM_LOCATION_TYPE_INVALID);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemDiscardBatchAsync(&m, &size, 1, 0, s));  // once each
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(all_bytes(m, 64, kDiscardedByte));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // No CUgraphNodeType holds a prefetch or a discard: a capturing stream refuses them
  // (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), which invalidates the capture, and nothing runs.
  TEST_CASE_FIXTURE(swcu::test::GraphTest, "a capture refuses prefetches and discards") {
    const auto& g = swcu::test::gr();
    CUdeviceptr mem = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemAllocManaged(&mem, 64, CU_MEM_ATTACH_GLOBAL));
    std::memset(reinterpret_cast<void*>(mem), 0x12, 64);
    std::size_t size = 64, first = 0;
    CUmemLocation to = host_location();
    const auto refused = [&](const auto& operation) {
      SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
      SWCU_TEST_CHECK_RESULT(operation(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      CUgraph graph = nullptr;
      SWCU_TEST_CHECK_RESULT(g.cuStreamEndCapture(stream, &graph),
                             CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
      CHECK(graph == nullptr);
    };
    refused([&] { return swcu::test::api().cuMemDiscardBatchAsync(&mem, &size, 1, 0, stream); });
    refused([&] {
      return swcu::test::api().cuMemPrefetchBatchAsync(&mem, &size, 1, &to, &first, 1, 0, stream);
    });
    refused([&] {
      return swcu::test::api().cuMemDiscardAndPrefetchBatchAsync(&mem, &size, 1, &to, &first, 1, 0,
                                                                 stream);
    });
    refused([&] { return swcu::test::api().cuMemPrefetchAsync_v2(mem, 64, to, 0, stream); });
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuStreamSynchronize(stream));
    CHECK(all_bytes(mem, 64, 0x12));
    CHECK(last_prefetch(mem, 64).type == CU_MEM_LOCATION_TYPE_INVALID);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemFree_v2(mem));
  }
}
