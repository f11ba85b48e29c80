// Copies and memsets: byte-exact data, ranges inside allocations, 2D pitches and offsets, stream
// order, staging of pageable memory, and memory freed before an operation runs.
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUdeviceptr allocate(std::size_t bytes) {
  CUdeviceptr p = 0;
  REQUIRE(swcu::test::api().cuMemAlloc_v2(&p, bytes) == CUDA_SUCCESS);
  return p;
}

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

template <class T>
T* host(CUdeviceptr p) {
  return reinterpret_cast<T*>(p);
}

CUDA_MEMCPY2D copy_2d(CUmemorytype dst_type, CUdeviceptr dst, std::size_t dst_pitch,
                      CUmemorytype src_type, CUdeviceptr src, std::size_t src_pitch,
                      std::size_t width, std::size_t height) {
  CUDA_MEMCPY2D c{};
  c.dstMemoryType = dst_type;
  c.dstDevice = dst;
  c.dstHost = reinterpret_cast<void*>(dst);
  c.dstPitch = dst_pitch;
  c.srcMemoryType = src_type;
  c.srcDevice = src;
  c.srcHost = reinterpret_cast<const void*>(src);
  c.srcPitch = src_pitch;
  c.WidthInBytes = width;
  c.Height = height;
  return c;
}

}  // namespace

TEST_SUITE("copies and memsets") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "data round-trips byte-exact in every direction") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const std::size_t n = 4099;
    const auto input = random_bytes(n);
    const CUdeviceptr a = allocate(n);
    const CUdeviceptr b = allocate(n);
    std::vector<unsigned char> output(n);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(a, input.data(), n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoD_v2(b, a, n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(output.data(), b, n));
    CHECK(output == input);

    std::fill(output.begin(), output.end(), 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(a, 0, n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy(a, reinterpret_cast<CUdeviceptr>(input.data()), n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy(reinterpret_cast<CUdeviceptr>(output.data()), a, n));
    CHECK(output == input);

    std::fill(output.begin(), output.end(), 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(b, 0, n, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(a, input.data(), n, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoDAsync_v2(b, a, n, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(output.data(), b, n, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(output == input);

    std::fill(output.begin(), output.end(), 0);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(output.data()), b + 3, 7, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(std::equal(output.begin(), output.begin() + 7, input.begin() + 3));
    CHECK(output[7] == 0);

    // Per-thread default stream variants.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2_ptds(a, 0x5a, n));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2_ptds(a, input.data(), 10));
    CHECK(std::memcmp(host<unsigned char>(a), input.data(), 10) == 0);
    CHECK(host<unsigned char>(a)[10] == 0x5a);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2_ptsz(a, input.data(), n, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize_ptsz(nullptr));
    CHECK(std::memcmp(host<unsigned char>(a), input.data(), n) == 0);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(a, input.data(), 0));  // nothing to copy
    for (const CUdeviceptr p : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a device range must lie inside one live allocation") {
    std::vector<unsigned char> buffer(256);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(0, buffer.data(), 4), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr a = allocate(128);
    const CUdeviceptr b = allocate(128);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(a, buffer.data(), 129), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(a + 1, buffer.data(), 128), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(buffer.data(), a - 1, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoD_v2(a, b, 256), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoDAsync_v2(b + 100, buffer.data(), 29, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD8_v2(a + 64, 0, 65), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD32Async(a, 0, 33, s), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(a, nullptr, 4), CUDA_ERROR_INVALID_VALUE);
    const auto pageable = reinterpret_cast<CUdeviceptr>(buffer.data());
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoD_v2(pageable, buffer.data(), 4),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD8_v2(pageable, 0, 4), CUDA_ERROR_INVALID_VALUE);
    // A unified copy takes an unknown address as pageable host memory, a known one as memory
    // of its allocation.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy(pageable, a, 128));
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy(pageable, a + 64, 128), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(b));
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoD_v2(a, b, 4), CUDA_ERROR_INVALID_VALUE);  // freed
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoDAsync_v2(b, buffer.data(), 4, s),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "2D copies honour memory types, pitches and offsets") {
    const CUcontext ctx = create_context();
    constexpr std::size_t width = 24, height = 5, host_pitch = 40;
    CUdeviceptr d = 0;
    std::size_t pitch = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocPitch_v2(&d, &pitch, width + 8, height + 2, 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(d, 0xee, pitch * (height + 2)));
    const auto input = random_bytes(host_pitch * height, 7);
    const auto src = reinterpret_cast<CUdeviceptr>(input.data());

    // Host -> device at (x 8, y 2), from a host buffer with its own pitch.
    CUDA_MEMCPY2D c =
        copy_2d(CU_MEMORYTYPE_DEVICE, d, pitch, CU_MEMORYTYPE_HOST, src, host_pitch, width, height);
    c.dstXInBytes = 8;
    c.dstY = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&c));
    const auto* bytes = host<unsigned char>(d);
    for (std::size_t y = 0; y < height + 2; ++y) {
      for (std::size_t x = 0; x < pitch; ++x) {
        const bool inside = y >= 1 && y < 1 + height && x >= 8 && x < 8 + width;
        const unsigned char expected = inside ? input[(y - 1) * host_pitch + (x - 8)] : 0xee;
        if (bytes[y * pitch + x] != expected) {
          FAIL("byte (", x, ", ", y, ") is ", int{bytes[y * pitch + x]});
        }
      }
    }

    // Device -> host through unified addresses, with a source offset, asynchronously.
    std::vector<unsigned char> output(width * height, 0);
    const CUstream s = create_stream();
    c = copy_2d(CU_MEMORYTYPE_UNIFIED, reinterpret_cast<CUdeviceptr>(output.data()), width,
                CU_MEMORYTYPE_UNIFIED, d, pitch, width, height);
    c.srcXInBytes = 8;
    c.srcY = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2DAsync_v2(&c, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (std::size_t y = 0; y < height; ++y) {
      CHECK(std::memcmp(output.data() + y * width, input.data() + y * host_pitch, width) == 0);
    }

    // Widths beyond the pitches, pitches beyond the maximum, arrays, unknown types.
    c = copy_2d(CU_MEMORYTYPE_DEVICE, d, pitch, CU_MEMORYTYPE_HOST, src, host_pitch, 41, 2);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);  // 41 > host pitch 40
    c = copy_2d(CU_MEMORYTYPE_DEVICE, d, pitch, CU_MEMORYTYPE_HOST, src, host_pitch, 16, 2);
    c.srcXInBytes = 30;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);  // 30 + 16 > 40
    c.srcXInBytes = 0;
    c.srcPitch = std::size_t{1} << 31;  // one row: the pitch is not used, but it is too large
    c.Height = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2DUnaligned_v2(&c));
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY;  // with no array (array_copy_test.cpp has arrays)
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    c.srcMemoryType = swcu::test::invalid_enum<CUmemorytype>(9);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(nullptr), CUDA_ERROR_INVALID_VALUE);
    c = copy_2d(CU_MEMORYTYPE_DEVICE, d, pitch, CU_MEMORYTYPE_HOST, src, host_pitch, width,
                height + 3);  // more rows than the allocation has
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    c.Height = 0;  // nothing to copy
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&c));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "memsets write 8-, 16- and 32-bit patterns, in 2D too") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr d = allocate(64);
    const auto* bytes = host<unsigned char>(d);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(d, 0, 64));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD16_v2(d + 2, 0xbeef, 3));
    CHECK(std::vector<unsigned char>(bytes, bytes + 10) ==
          std::vector<unsigned char>{0, 0, 0xef, 0xbe, 0xef, 0xbe, 0xef, 0xbe, 0, 0});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32Async(d + 16, 0x01020304, 2, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD16Async(d + 24, 0x0a0b, 1, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(d + 26, 0x77, 2, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(std::vector<unsigned char>(bytes + 16, bytes + 29) ==
          std::vector<unsigned char>{4, 3, 2, 1, 4, 3, 2, 1, 0x0b, 0x0a, 0x77, 0x77, 0});
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD16_v2(d + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);  // alignment
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD32_v2(d + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD32Async(d + 6, 0, 1, s), CUDA_ERROR_INVALID_VALUE);

    // 2D: rows of width elements, pitch apart; what lies between rows is untouched.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(d, 0, 64));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD2D8_v2(d, 16, 0xaa, 3, 2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD2D16_v2(d + 4, 16, 0x1122, 2, 2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD2D32Async(d + 40, 8, 0xffffffffU, 1, 3, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (std::size_t row = 0; row < 2; ++row) {
      const auto* r = bytes + row * 16;
      CHECK(std::vector<unsigned char>(r, r + 10) ==
            std::vector<unsigned char>{0xaa, 0xaa, 0xaa, 0, 0x22, 0x11, 0x22, 0x11, 0, 0});
    }
    for (std::size_t row = 0; row < 3; ++row) {
      const auto* r = bytes + 40 + row * 8;
      CHECK(std::vector<unsigned char>(r, r + 8) ==
            std::vector<unsigned char>{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0});
    }
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD2D8_v2(d, 2, 0, 3, 2),
                           CUDA_ERROR_INVALID_VALUE);  // pitch < width
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD2D16_v2(d, 15, 0, 2, 2),
                           CUDA_ERROR_INVALID_VALUE);  // odd pitch
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD2D32_v2(d, 16, 0, 4, 5),
                           CUDA_ERROR_INVALID_VALUE);  // past the end
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD2D8Async(d, 16, 0, 4, 5, s), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemsetD2D16Async(d + 1, 16, 0, 1, 1, s), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(d, 0, 0));  // nothing to set
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "async copies and memsets run in stream order") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr d = allocate(16);
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 16, 0));
    std::memset(pinned, 0, 16);
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32Async(d, 0x12345678, 4, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(pinned, d, 16, s));
    CHECK(static_cast<unsigned*>(pinned)[0] == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (int i = 0; i < 4; ++i) CHECK(static_cast<unsigned*>(pinned)[i] == 0x12345678U);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an async copy from pageable memory is staged at the call") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr a = allocate(8);
    const CUdeviceptr b = allocate(8);
    std::vector<unsigned char> pageable(8, 1);
    void* pinned = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&pinned, 8, 0));
    std::memset(pinned, 1, 8);
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(a, pageable.data(), 8, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(b, pinned, 8, s));
    std::fill(pageable.begin(), pageable.end(), 2);  // free to reuse at once
    std::memset(pinned, 2, 8);                       // read when the copy runs
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(host<unsigned char>(a)[7] == 1);
    CHECK(host<unsigned char>(b)[7] == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(pinned));
    for (const CUdeviceptr p : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an operation whose memory was freed before it ran is an illegal address") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&p, 64, s));
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(p, 1, 64, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));  // stream-ordered memory: freed at once
    gate.finish();
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "peer copies check their contexts") {
    const CUcontext first = create_context();
    const CUdeviceptr a = allocate(32);
    const CUcontext second = create_context();
    const CUdeviceptr b = allocate(32);
    std::memset(host<void>(a), 3, 32);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyPeer(b, second, a, first, 32));
    CHECK(host<unsigned char>(b)[31] == 3);
    const CUstream s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(a, 4, 32));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyPeerAsync(b, second, a, first, 32, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(host<unsigned char>(b)[0] == 4);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(b, nullptr, a, first, 32), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(b, second, a, reinterpret_cast<CUcontext>(s), 32),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(b, second, a, first, 33), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(second));  // frees b
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(first));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "copies and memsets advance the device clock by their bytes" *
                        doctest::test_suite("simulated time")) {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent start = swcu::test::create_event();
    const CUevent stop = swcu::test::create_event();
    const CUdeviceptr d = allocate(64 * 1000);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(start, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(d, 0, 64 * 1000, s));  // 1 us + 1000 ns
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemcpyDtoDAsync_v2(d, d + 32 * 1000, 32 * 1000, s));  // + 1 us + 500 ns
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(stop, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(stop));
    float ms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventElapsedTime_v2(&ms, start, stop));
    CHECK(ms == doctest::Approx(0.0035));
    for (const CUevent e : {start, stop}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
