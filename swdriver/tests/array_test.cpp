// CUDA arrays and mipmapped arrays: creation with cuda.h's validation (formats, channels,
// flags, extents against the device's limits), descriptors, levels, destruction, reclamation
// with the context, capacity, and fault rules.
#include <string>

#include "array_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::array_desc;
using swcu::test::create_context;

int attribute(CUdevice_attribute a) {
  int v = 0;
  REQUIRE(swcu::test::api().cuDeviceGetAttribute(&v, a, 0) == CUDA_SUCCESS);
  return v;
}

}  // namespace

TEST_SUITE("arrays") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuArrayCreate and cuArrayGetDescriptor round-trip") {
    const CUcontext ctx = create_context();
    CUDA_ARRAY_DESCRIPTOR d{};
    d.Width = 64;
    d.Height = 32;
    d.Format = CU_AD_FORMAT_HALF;
    d.NumChannels = 4;
    CUarray a = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayCreate_v2(&a, &d));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 1);
    CUDA_ARRAY_DESCRIPTOR got{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayGetDescriptor_v2(&got, a));
    CHECK(got.Width == 64);
    CHECK(got.Height == 32);
    CHECK(got.Format == CU_AD_FORMAT_HALF);
    CHECK(got.NumChannels == 4);
    // "This function may be called on 1D and 2D arrays, in which case the Height and/or Depth
    // members of the descriptor struct will be set to 0."
    CUDA_ARRAY3D_DESCRIPTOR got3{};
    got3.Depth = 99;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DGetDescriptor_v2(&got3, a));
    CHECK(got3.Width == 64);
    CHECK(got3.Height == 32);
    CHECK(got3.Depth == 0);
    CHECK(got3.Flags == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetDescriptor_v2(nullptr, a), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayCreate_v2(nullptr, &d), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayCreate_v2(&a, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    // A destroyed, NULL or foreign handle: CUDA_ERROR_INVALID_HANDLE.
    SWCU_TEST_CHECK_RESULT(cu.cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayDestroy(nullptr), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetDescriptor_v2(&got, reinterpret_cast<CUarray>(ctx)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuArray3DGetDescriptor_v2(&got3, a), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every array shape of cuArray3DCreate is created") {
    const CUcontext ctx = create_context();
    const struct {
      CUDA_ARRAY3D_DESCRIPTOR desc;
      const char* what;
    } shapes[] = {
        {array_desc(100, 0, 0, CU_AD_FORMAT_FLOAT), "1D"},
        {array_desc(100, 7, 0, CU_AD_FORMAT_FLOAT), "2D"},
        {array_desc(10, 7, 3, CU_AD_FORMAT_FLOAT), "3D"},
        {array_desc(100, 0, 5, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED), "1D layered"},
        {array_desc(9, 7, 5, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED), "2D layered"},
        {array_desc(8, 8, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP), "cubemap"},
        {array_desc(8, 8, 12, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED),
         "cubemap layered"},
        {array_desc(16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_TEXTURE_GATHER),
         "gather"},
        {array_desc(16, 16, 4, CU_AD_FORMAT_SIGNED_INT32, 2, CUDA_ARRAY3D_SURFACE_LDST), "surface"},
        {array_desc(16, 16, 0, CU_AD_FORMAT_UNORM_INT8X4, 4), "unorm 8x4"},
        {array_desc(16, 16, 0, CU_AD_FORMAT_SNORM_INT16X2, 2), "snorm 16x2"},
        {array_desc(16, 16, 0, CU_AD_FORMAT_UNORM_INT_101010_2, 4), "R10G10B10A2"},
        {array_desc(16, 16, 0, CU_AD_FORMAT_BC1_UNORM, 4), "BC1"},
        {array_desc(17, 9, 0, CU_AD_FORMAT_BC6H_UF16, 3), "BC6H"},
    };
    for (const auto& shape : shapes) {
      INFO(shape.what);
      CUarray a = nullptr;
      SWCU_TEST_CHECK_RESULT(cu.cuArray3DCreate_v2(&a, &shape.desc), CUDA_SUCCESS);
      CUDA_ARRAY3D_DESCRIPTOR got{};
      SWCU_TEST_CHECK_RESULT(cu.cuArray3DGetDescriptor_v2(&got, a), CUDA_SUCCESS);
      CHECK(got.Width == shape.desc.Width);
      CHECK(got.Height == shape.desc.Height);
      CHECK(got.Depth == shape.desc.Depth);
      CHECK(got.Format == shape.desc.Format);
      CHECK(got.NumChannels == shape.desc.NumChannels);
      CHECK(got.Flags == shape.desc.Flags);
      SWCU_TEST_CHECK_RESULT(cu.cuArrayDestroy(a), CUDA_SUCCESS);
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuArray3DCreate refuses what cuda.h rules out") {
    const CUcontext ctx = create_context();
    const int tex2d_w = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    const int surf1d_w = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
    const int tex3d = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    const int tex3d_alt = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
    const int layers = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
    const int gather_w = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
    const auto bad = CUDA_ERROR_INVALID_VALUE;
    const struct {
      CUDA_ARRAY3D_DESCRIPTOR desc;
      CUresult expected;
      const char* what;
    } cases[] = {
        {array_desc(0, 0, 0, CU_AD_FORMAT_FLOAT), bad, "width 0"},
        {array_desc(8, 0, 3, CU_AD_FORMAT_FLOAT), bad, "a depth without a height"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 3), bad, "3 channels"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 0), bad, "0 channels"},
        {array_desc(8, 8, 0, swcu::test::invalid_enum<CUarray_format>(0x77)), bad,
         "unknown format"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_UNORM_INT8X4, 1), bad, "UNORM_INT8X4 with 1 channel"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, 0x1000), bad, "an unknown flag"},
        {array_desc(8, 9, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP), bad,
         "cubemap: width != height"},
        {array_desc(8, 8, 5, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP), bad, "cubemap: depth 5"},
        {array_desc(8, 8, 12, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP), bad,
         "cubemap (not layered): depth 12"},
        {array_desc(8, 8, 9, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED),
         bad, "layered cubemap: depth 9"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED), bad,
         "layered: 0 layers"},
        {array_desc(8, 8, 2, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_TEXTURE_GATHER), bad,
         "gather on 3D"},
        {array_desc(static_cast<std::size_t>(gather_w) + 1, 8, 0, CU_AD_FORMAT_FLOAT, 1,
                    CUDA_ARRAY3D_TEXTURE_GATHER),
         bad, "gather wider than GATHER_WIDTH"},
        {array_desc(static_cast<std::size_t>(tex2d_w) + 1, 8, 0, CU_AD_FORMAT_FLOAT), bad,
         "2D wider than TEXTURE2D"},
        {array_desc(static_cast<std::size_t>(surf1d_w) + 1, 0, 0, CU_AD_FORMAT_FLOAT, 1,
                    CUDA_ARRAY3D_SURFACE_LDST),
         bad, "surface 1D wider than SURFACE1D"},
        {array_desc(8, 8, static_cast<std::size_t>(tex3d_alt) + 1, CU_AD_FORMAT_FLOAT), bad,
         "3D deeper than both limits"},
        {array_desc(8, 8, static_cast<std::size_t>(layers) + 1, CU_AD_FORMAT_FLOAT, 1,
                    CUDA_ARRAY3D_LAYERED),
         bad, "more layers than TEXTURE2D_LAYERED_LAYERS"},
        // Valid, but not modelled: NOT_SUPPORTED (SPARSE/DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED 0).
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SPARSE), CUDA_ERROR_NOT_SUPPORTED,
         "sparse"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_DEFERRED_MAPPING),
         CUDA_ERROR_NOT_SUPPORTED, "deferred mapping"},
        {array_desc(8, 8, 0, CU_AD_FORMAT_NV12, 1), CUDA_ERROR_NOT_SUPPORTED, "NV12"},
    };
    for (const auto& c : cases) {
      INFO(c.what);
      CUarray a = nullptr;
      SWCU_TEST_CHECK_RESULT(cu.cuArray3DCreate_v2(&a, &c.desc), c.expected);
      CHECK(a == nullptr);
    }
    // The alternate 3D limits: deeper than TEXTURE3D_DEPTH is fine within the alternate ones.
    CHECK(tex3d_alt > tex3d);
    CUarray deep = nullptr;
    const auto alternate =
        array_desc(1, 1, static_cast<std::size_t>(tex3d) + 1, CU_AD_FORMAT_FLOAT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&deep, &alternate));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(deep));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "arrays need a context and charge device memory") {
    CUarray a = nullptr;
    const auto d = array_desc(256, 256, 0, CU_AD_FORMAT_FLOAT, 4);
    SWCU_TEST_CHECK_RESULT(cu.cuArray3DCreate_v2(&a, &d), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    std::size_t free_before = 0, free_after = 0, total = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free_before, &total));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&a, &d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free_after, &total));
    CHECK(free_before - free_after == 256 * 256 * 16);
    // Larger than the device: CUDA_ERROR_OUT_OF_MEMORY.
    CUarray huge = nullptr;
    const auto h = array_desc(16384, 16384, 16384, CU_AD_FORMAT_FLOAT, 4);
    SWCU_TEST_CHECK_RESULT(cu.cuArray3DCreate_v2(&huge, &h), CUDA_ERROR_OUT_OF_MEMORY);
    // Destroying the context reclaims its arrays and gives the memory back.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_ARRAY) == 1);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    const CUcontext again = create_context();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetInfo_v2(&free_after, &total));
    CHECK(free_after == free_before);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(again));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "mipmapped arrays have their levels") {
    const CUcontext ctx = create_context();
    CUmipmappedArray m = nullptr;
    const auto d = array_desc(64, 20, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4);
    // Levels "clamped to the range [1, 1 + floor(log2(max(width, height, depth)))]": 7 here.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m, &d, 100));
    CHECK(ctl.live_handles(SWCU_MIPMAPPED_ARRAY) == 1);
    CHECK(ctl.live_handles(SWCU_ARRAY) == 7);
    const std::size_t widths[] = {64, 32, 16, 8, 4, 2, 1};
    const std::size_t heights[] = {20, 10, 5, 2, 1, 1, 1};
    for (unsigned l = 0; l < 7; ++l) {
      INFO("level ", l);
      CUarray level = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, m, l));
      CUDA_ARRAY3D_DESCRIPTOR got{};
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DGetDescriptor_v2(&got, level));
      CHECK(got.Width == widths[l]);
      CHECK(got.Height == heights[l]);
      CHECK(got.Depth == 0);
      CHECK(got.Format == CU_AD_FORMAT_UNSIGNED_INT8);
      // A level belongs to its mipmapped array.
      SWCU_TEST_CHECK_RESULT(cu.cuArrayDestroy(level), CUDA_ERROR_INVALID_HANDLE);
    }
    CUarray level = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetLevel(&level, m, 7), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetLevel(nullptr, m, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetLevel(&level, nullptr, 0),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayDestroy(m));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayDestroy(m), CUDA_ERROR_INVALID_HANDLE);
    // 0 levels is clamped to 1; a layered array keeps its layers on every level.
    const auto layered = array_desc(16, 16, 3, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m, &layered, 0));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayDestroy(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m, &layered, 5));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, m, 4));
    CUDA_ARRAY3D_DESCRIPTOR got{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DGetDescriptor_v2(&got, level));
    CHECK(got.Width == 1);
    CHECK(got.Depth == 3);
    CHECK(got.Flags == CUDA_ARRAY3D_LAYERED);
    // A 3D mipmapped array's depth shrinks too.
    CUmipmappedArray m3 = nullptr;
    const auto vol = array_desc(8, 8, 4, CU_AD_FORMAT_FLOAT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m3, &vol, 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level, m3, 3));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DGetDescriptor_v2(&got, level));
    CHECK(got.Width == 1);
    CHECK(got.Depth == 1);
    // Mipmapped 2D extents are limited by TEXTURE2D_MIPMAPPED_WIDTH.
    const int mip_w = attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH);
    const auto wide = array_desc(static_cast<std::size_t>(mip_w) + 1, 2, 0, CU_AD_FORMAT_FLOAT);
    CUmipmappedArray none = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayCreate(&none, &wide, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayCreate(nullptr, &vol, 1), CUDA_ERROR_INVALID_VALUE);
    // Destroying the context reclaims mipmapped arrays with their levels.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_MIPMAPPED_ARRAY) == 0);
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "sparse, requirement and plane queries") {
    const CUcontext ctx = create_context();
    CUarray a = nullptr;
    const auto d = array_desc(32, 32, 0, CU_AD_FORMAT_FLOAT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&a, &d));
    CUDA_ARRAY_SPARSE_PROPERTIES sparse{};
    CUDA_ARRAY_MEMORY_REQUIREMENTS req{};
    // "If the CUDA array is not allocated with flag CUDA_ARRAY3D_SPARSE (DEFERRED_MAPPING)
    // CUDA_ERROR_INVALID_VALUE will be returned"; no array here has either.
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetSparseProperties(&sparse, a), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetMemoryRequirements(&req, a, 0), CUDA_ERROR_INVALID_VALUE);
    // "if the array does not have a multi-planar format ... CUDA_ERROR_INVALID_VALUE"
    CUarray plane = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetPlane(&plane, a, 0), CUDA_ERROR_INVALID_VALUE);
    CUmipmappedArray m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayCreate(&m, &d, 2));
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetSparseProperties(&sparse, m),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetMemoryRequirements(&req, m, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuArrayGetSparseProperties(&sparse, nullptr),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayGetSparseProperties(&sparse, nullptr),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayDestroy(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "fault rules fail array creation") {
    const CUcontext ctx = create_context();
    REQUIRE(ctl.add_fault_rule("cuArray3DCreate:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    REQUIRE(ctl.add_fault_rule("cuMipmappedArrayCreate:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUarray a = nullptr;
    const auto d = array_desc(8, 8, 0, CU_AD_FORMAT_FLOAT);
    SWCU_TEST_CHECK_RESULT(cu.cuArray3DCreate_v2(&a, &d), CUDA_ERROR_OUT_OF_MEMORY);
    CUmipmappedArray m = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuMipmappedArrayCreate(&m, &d, 2), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DCreate_v2(&a, &d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
