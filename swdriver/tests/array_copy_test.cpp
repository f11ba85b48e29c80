// Copies to, from and between CUDA arrays and 3D copies: cuMemcpy2D/3D with CU_MEMORYTYPE_ARRAY,
// cuMemcpyAtoH/HtoA/AtoD/DtoA/AtoA, cuMemcpy3DPeer, against host references, and the extents
// cuda.h requires (CUDA_ERROR_INVALID_VALUE otherwise).
#include <cstdint>
#include <numeric>
#include <vector>

#include "array_support.hpp"
#include "graph_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::array_to_host;
using swcu::test::create_context;
using swcu::test::create_stream;
using swcu::test::host_to_array;
using swcu::test::make_array;

}  // namespace

TEST_SUITE("array copies") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a 3D array round-trips through host and device") {
    const CUcontext ctx = create_context();
    const std::size_t w = 7, h = 5, d = 3;
    const CUarray a = make_array(w, h, d);
    const auto input = swcu::test::iota_words(w * h * d);
    auto p = host_to_array(input.data(), a, w, h, d);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&p));
    // Array to pitched device memory (a pitch wider than the row, slices of 6 rows), then host.
    const std::size_t pitch = 64, rows = 6;
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, pitch * rows * d));
    CUDA_MEMCPY3D to_dev{};
    to_dev.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    to_dev.srcArray = a;
    to_dev.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    to_dev.dstDevice = dev;
    to_dev.dstPitch = pitch;
    to_dev.dstHeight = rows;
    to_dev.WidthInBytes = w * 4;
    to_dev.Height = h;
    to_dev.Depth = d;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&to_dev));
    std::vector<std::uint32_t> device_image(pitch / 4 * rows * d);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemcpyDtoH_v2(device_image.data(), dev, device_image.size() * 4));
    for (std::size_t z = 0; z < d; ++z) {
      for (std::size_t y = 0; y < h; ++y) {
        for (std::size_t x = 0; x < w; ++x) {
          CHECK(device_image[(z * rows + y) * (pitch / 4) + x] == input[(z * h + y) * w + x]);
        }
      }
    }
    // A sub-box back to the host: x 2..5, y 1..3, z 1..2, from the array.
    std::vector<std::uint32_t> box(3 * 2 * 2, 0);
    CUDA_MEMCPY3D sub = array_to_host(a, box.data(), 3, 2, 2);
    sub.srcXInBytes = 2 * 4;
    sub.srcY = 1;
    sub.srcZ = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&sub));
    for (std::size_t z = 0; z < 2; ++z) {
      for (std::size_t y = 0; y < 2; ++y) {
        for (std::size_t x = 0; x < 3; ++x) {
          CHECK(box[(z * 2 + y) * 3 + x] == input[((z + 1) * h + (y + 1)) * w + (x + 2)]);
        }
      }
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuMemcpy2D reaches arrays, layers and levels") {
    const CUcontext ctx = create_context();
    // A 2D array of float2 (8-byte elements): host rows with a wider pitch into a window.
    CUarray a = make_array(6, 4, 0, 2, CU_AD_FORMAT_FLOAT);
    const auto input = swcu::test::iota_words(6 * 4 * 2);
    CUDA_MEMCPY2D p{};
    p.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.srcHost = input.data();
    p.srcPitch = 6 * 8;
    p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    p.dstArray = a;
    p.WidthInBytes = 6 * 8;
    p.Height = 4;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&p));
    std::vector<std::uint32_t> out(2 * 2 * 2, 0);
    CUDA_MEMCPY2D back{};
    back.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    back.srcArray = a;
    back.srcXInBytes = 3 * 8;
    back.srcY = 2;
    back.dstMemoryType = CU_MEMORYTYPE_HOST;
    back.dstHost = out.data();
    back.dstPitch = 2 * 8;
    back.WidthInBytes = 2 * 8;
    back.Height = 2;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&back));
    for (std::size_t y = 0; y < 2; ++y) {
      for (std::size_t i = 0; i < 4; ++i) {  // 2 elements of 2 channels
        CHECK(out[y * 4 + i] == input[(y + 2) * 12 + 3 * 2 + i]);
      }
    }
    // The Async form, in a stream.
    const CUstream s = create_stream();
    std::vector<std::uint32_t> async_out(6 * 4 * 2, 0);
    CUDA_MEMCPY2D all = back;
    all.srcXInBytes = 0;
    all.srcY = 0;
    all.dstHost = async_out.data();
    all.dstPitch = 6 * 8;
    all.WidthInBytes = 6 * 8;
    all.Height = 4;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2DAsync_v2(&all, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(async_out == input);
    // Array to array (cuMemcpy2D with both sides arrays).
    const CUarray b = make_array(6, 4, 0, 2, CU_AD_FORMAT_FLOAT);
    CUDA_MEMCPY2D a2a{};
    a2a.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    a2a.srcArray = a;
    a2a.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    a2a.dstArray = b;
    a2a.WidthInBytes = 6 * 8;
    a2a.Height = 4;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&a2a));
    std::fill(async_out.begin(), async_out.end(), 0);
    all.srcArray = b;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&all));
    CHECK(async_out == input);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(b));
    // Layer 2 of a layered array is slice z = 2 of a 3D copy; other layers stay zero.
    const CUarray layered =
        make_array(4, 3, 4, 1, CU_AD_FORMAT_UNSIGNED_INT32, CUDA_ARRAY3D_LAYERED);
    const auto layer = swcu::test::iota_words(12, 100);
    auto in = host_to_array(layer.data(), layered, 4, 3, 1);
    in.dstZ = 2;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&in));
    std::vector<std::uint32_t> layers(4 * 3 * 4, 7);
    auto out_all = array_to_host(layered, layers.data(), 4, 3, 4);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&out_all));
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::size_t z = i / 12;
      CHECK(layers[i] == (z == 2 ? layer[i % 12] : 0u));
    }
    // A mipmap level is an array: level 1 of a 8x8 mipmapped array is 4x4.
    CUDA_ARRAY3D_DESCRIPTOR md{};
    md.Width = 8;
    md.Height = 8;
    md.Format = CU_AD_FORMAT_UNSIGNED_INT32;
    md.NumChannels = 1;
    CUmipmappedArray m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m, &md, 4));
    CUarray level = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, m, 1));
    const auto small = swcu::test::iota_words(16, 5);
    auto to_level = host_to_array(small.data(), level, 4, 4, 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&to_level));
    std::vector<std::uint32_t> level_out(16, 0);
    auto from_level = array_to_host(level, level_out.data(), 4, 4, 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3D_v2(&from_level));
    CHECK(level_out == small);
    to_level.Height = 5;  // level 1 has 4 rows
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&to_level), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayDestroy(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(layered));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the 1D array copies: AtoH, HtoA, AtoD, DtoA, AtoA") {
    const CUcontext ctx = create_context();
    const CUarray a = make_array(32, 0, 0);
    const CUarray b = make_array(32, 0, 0);
    const auto input = swcu::test::iota_words(32);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoA_v2(a, 0, input.data(), 32 * 4));
    // AtoA: elements 4..11 of a into elements 20..27 of b.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoA_v2(b, 20 * 4, a, 4 * 4, 8 * 4));
    std::vector<std::uint32_t> out(32, 9);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoH_v2(out.data(), b, 0, 32 * 4));
    for (std::size_t i = 0; i < 32; ++i) {
      CHECK(out[i] == (i >= 20 && i < 28 ? input[i - 16] : 0u));
    }
    // DtoA and AtoD through device memory.
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 32 * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoD_v2(dev, a, 8, 16 * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoA_v2(b, 0, dev, 16 * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoH_v2(out.data(), b, 0, 16 * 4));
    for (std::size_t i = 0; i < 16; ++i) CHECK(out[i] == input[i + 2]);
    // The Async forms in a stream.
    const CUstream s = create_stream();
    const auto second = swcu::test::iota_words(32, 1000);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoAAsync_v2(a, 0, second.data(), 32 * 4, s));
    std::vector<std::uint32_t> async_out(32, 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoHAsync_v2(async_out.data(), a, 0, 32 * 4, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(async_out == second);
    // Past the end, an offset or a size that is not a whole element, a bad handle.
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyAtoH_v2(out.data(), a, 4, 32 * 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoA_v2(a, 2, input.data(), 8), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoA_v2(a, 0, input.data(), 6), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyAtoA_v2(b, 0, nullptr, 0, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyAtoD_v2(dev + 32 * 4, a, 0, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuMemcpy3D refuses extents outside either side") {
    const CUcontext ctx = create_context();
    const std::size_t w = 8, h = 4, d = 2;
    const CUarray a = make_array(w, h, d);
    std::vector<std::uint32_t> host(w * h * d);
    const auto good = host_to_array(host.data(), a, w, h, d);
    const struct {
      void (*change)(CUDA_MEMCPY3D&);
      const char* what;
    } cases[] = {
        {[](CUDA_MEMCPY3D& p) { p.dstXInBytes = 4; }, "x + width past the array's row"},
        {[](CUDA_MEMCPY3D& p) { p.dstXInBytes = 2, p.WidthInBytes = 8; }, "x not an element"},
        {[](CUDA_MEMCPY3D& p) { p.WidthInBytes = 6; }, "width not whole elements"},
        {[](CUDA_MEMCPY3D& p) { p.dstY = 1; }, "y + height past the array"},
        {[](CUDA_MEMCPY3D& p) { p.dstZ = 1; }, "z + depth past the array"},
        {[](CUDA_MEMCPY3D& p) { p.Depth = 3; }, "depth larger than the array"},
        {[](CUDA_MEMCPY3D& p) { p.dstLOD = 1; }, "dstLOD not 0"},
        {[](CUDA_MEMCPY3D& p) { p.srcLOD = 1; }, "srcLOD not 0"},
        {[](CUDA_MEMCPY3D& p) { p.srcPitch = 16; }, "source pitch below the width"},
        {[](CUDA_MEMCPY3D& p) { p.srcHeight = 3; }, "source slice height below the height"},
        {[](CUDA_MEMCPY3D& p) { p.dstArray = nullptr; }, "no destination array"},
        {[](CUDA_MEMCPY3D& p) { p.dstMemoryType = static_cast<CUmemorytype>(5); },
         "an unknown memory type"},
        {[](CUDA_MEMCPY3D& p) { p.srcMemoryType = CU_MEMORYTYPE_DEVICE; },
         "host memory passed as device memory"},
    };
    for (const auto& c : cases) {
      INFO(c.what);
      CUDA_MEMCPY3D p = good;
      c.change(p);
      SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&p), CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(nullptr), CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMCPY3D ok = good;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&ok), CUDA_SUCCESS);
    // A destroyed array.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&ok), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "3D copies between linear memory, sync and async") {
    const CUcontext ctx = create_context();
    const std::size_t w = 5, h = 3, d = 4;
    const auto input = swcu::test::iota_words(w * h * d);
    // Host (dense) to device (pitch 32 bytes, 4-row slices), then back with an offset.
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 32 * 4 * d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(dev, 0, 32 * 4 * d));
    CUDA_MEMCPY3D p{};
    p.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.srcHost = input.data();
    p.srcPitch = w * 4;
    p.srcHeight = h;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = dev;
    p.dstPitch = 32;
    p.dstHeight = 4;
    p.dstY = 1;
    p.WidthInBytes = w * 4;
    p.Height = h;
    p.Depth = d;
    const CUstream s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DAsync_v2(&p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    std::vector<std::uint32_t> image(8 * 4 * d);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(image.data(), dev, image.size() * 4));
    for (std::size_t z = 0; z < d; ++z) {
      for (std::size_t y = 0; y < 4; ++y) {
        for (std::size_t x = 0; x < 8; ++x) {
          const bool inside = y >= 1 && x < w;
          CHECK(image[(z * 4 + y) * 8 + x] == (inside ? input[(z * h + y - 1) * w + x] : 0u));
        }
      }
    }
    // Device memory the range leaves: slices of 4 rows at y = 2 run past the allocation.
    p.dstY = 2;
    p.dstHeight = 5;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&p), CUDA_ERROR_INVALID_VALUE);
    // Nothing to copy: a zero extent succeeds.
    p.dstY = 0;
    p.dstHeight = 4;
    p.Depth = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3D_v2(&p), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuMemcpy3DPeer names each side's context") {
    const CUcontext src_ctx = create_context();
    const CUarray a = make_array(4, 4, 0);
    const auto input = swcu::test::iota_words(16);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoA_v2(a, 0, input.data(), 16));  // first 4 elements
    const CUcontext dst_ctx = create_context();
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 16 * 4));
    CUDA_MEMCPY3D_PEER p{};
    p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    p.srcArray = a;
    p.srcContext = src_ctx;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = dev;
    p.dstPitch = 16;
    p.dstContext = dst_ctx;
    p.WidthInBytes = 16;
    p.Height = 4;
    p.Depth = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DPeer(&p));
    std::vector<std::uint32_t> out(16, 9);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(out.data(), dev, 64));
    for (std::size_t i = 0; i < 16; ++i) CHECK(out[i] == (i < 4 ? input[i] : 0u));
    const CUstream s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DPeerAsync(&p, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    p.dstContext = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DPeer(&p), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DPeer(nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(dst_ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(src_ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a synchronous array copy while a blocking stream captures is implicit") {
    // Captured array copies become memcpy nodes (graph_array_copy_test.cpp). A synchronous one
    // runs in the legacy stream, which would depend on the capturing blocking stream:
    // CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, and the capture is invalidated.
    const CUcontext ctx = create_context();
    const CUstream s = create_stream(CU_STREAM_DEFAULT);
    const CUarray a = make_array(4, 0, 0);
    std::vector<std::uint32_t> host(4);
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyHtoA_v2(a, 0, host.data(), 16),
                           CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g = nullptr;
    SWCU_TEST_CHECK_RESULT(swcu::test::gr().cuStreamEndCapture(s, &g),
                           CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "BC arrays copy in 4x4 blocks") {
    const CUcontext ctx = create_context();
    // 10x6 texels of BC1 (8-byte blocks): 3x2 blocks.
    const CUarray a = make_array(10, 6, 0, 4, CU_AD_FORMAT_BC1_UNORM);
    std::vector<unsigned char> blocks(3 * 2 * 8);
    std::iota(blocks.begin(), blocks.end(), static_cast<unsigned char>(1));
    CUDA_MEMCPY2D p{};
    p.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.srcHost = blocks.data();
    p.srcPitch = 24;
    p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    p.dstArray = a;
    p.WidthInBytes = 24;
    p.Height = 2;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2D_v2(&p));
    p.Height = 3;  // 3 block rows: past the array
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy2D_v2(&p), CUDA_ERROR_INVALID_VALUE);
    std::vector<unsigned char> out(blocks.size());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoH_v2(out.data(), a, 8, 16));
    CHECK(std::equal(out.begin(), out.begin() + 16, blocks.begin() + 8));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
