// cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide and
// cuTensorMapReplaceAddress: each requirement cuda.h lists is refused with
// CUDA_ERROR_INVALID_VALUE, as the real driver does, with a stderr line naming it; a map that
// meets them is made (and read by the kernels of conformance/conformance_tma_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "module_support.hpp"
#include "swdriver_test.hpp"

namespace {

using swcu::test::mod;

// The arguments of a valid 2D float tiled map; each case changes one thing.
// The enum arguments are kept as ints: a value outside an enum's range is only ever made at the
// call (swcu::test::invalid_enum), never stored and read back as the enum type.
struct Tiled {
  int type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 2;
  std::uintptr_t address = 0;
  cuuint64_t dims[5] = {64, 32, 1, 1, 1};
  cuuint64_t strides[4] = {256, 8192, 8192, 8192};
  cuuint32_t box[5] = {32, 8, 1, 1, 1};
  cuuint32_t steps[5] = {1, 1, 1, 1, 1};
  int interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  int swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  int l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  int fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  CUresult encode(CUtensorMap* m) const {
    using swcu::test::invalid_enum;
    return mod().cuTensorMapEncodeTiled(
        m, invalid_enum<CUtensorMapDataType>(type), rank, reinterpret_cast<void*>(address), dims,
        strides, box, steps, invalid_enum<CUtensorMapInterleave>(interleave),
        invalid_enum<CUtensorMapSwizzle>(swizzle), invalid_enum<CUtensorMapL2promotion>(l2),
        invalid_enum<CUtensorMapFloatOOBfill>(fill));
  }
};

struct TensorMapTest : swcu::test::ModuleTest {
  CUdeviceptr memory = 0;
  TensorMapTest() { SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&memory, 1 << 16)); }
  ~TensorMapTest() { (void)cu.cuMemFree_v2(memory); }

  Tiled valid() const {
    Tiled t;
    t.address = memory;
    return t;
  }

  // Encodes `t`: CUDA_ERROR_INVALID_VALUE with a stderr line containing `why`.
  void refused(const Tiled& t, const std::string& why) {
    INFO(why);
    alignas(64) CUtensorMap m{};
    swcu::test::StderrCapture err;
    SWCU_TEST_CHECK_RESULT(t.encode(&m), CUDA_ERROR_INVALID_VALUE);
    const std::string text = err.finish();
    INFO(text);
    CHECK(text.find("swcuda: cuTensorMapEncodeTiled: ") != std::string::npos);
    CHECK(text.find(why) != std::string::npos);
  }
};

}  // namespace

TEST_SUITE("tensor maps") {
  TEST_CASE_FIXTURE(TensorMapTest, "a tiled map that meets cuda.h's requirements is made") {
    alignas(64) CUtensorMap m{};
    SWCU_TEST_REQUIRE_SUCCESS(valid().encode(&m));
    // rank 1 has no strides; rank 5 uses every array; no swizzle needs 16-byte box rows only
    Tiled one = valid();
    one.rank = 1;
    one.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    one.box[0] = 256;
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeTiled(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, reinterpret_cast<void*>(one.address), one.dims,
            nullptr, one.box, one.steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_SUCCESS);
    Tiled five = valid();
    five.rank = 5;
    SWCU_TEST_CHECK_RESULT(five.encode(&m), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(TensorMapTest, "each requirement of cuTensorMapEncodeTiled is checked") {
    Tiled t = valid();
    t.type = 40;
    refused(t, "tensorDataType 40 is not a CUtensorMapDataType");
    t = valid();
    t.type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    refused(t, "is a packed sub-byte type");
    t = valid();
    t.rank = 6;
    refused(t, "tensorRank is 6; it must be 1..5");
    t = valid();
    t.address += 8;
    refused(t, "globalAddress is not 16-byte aligned");
    t = valid();
    t.dims[1] = 0;
    refused(t, "globalDim[1] is 0; it must be 1..2^32");
    t = valid();
    t.strides[0] = 264;
    refused(t, "globalStrides[0] is 264; it must be a multiple of 16 below 2^40");
    t = valid();
    t.strides[0] = 128;
    refused(t, "globalStrides[0] is 128, less than the 256 bytes of the dimension below it");
    t = valid();
    t.box[1] = 257;
    refused(t, "boxDim[1] is 257; it must be 1..256");
    t = valid();
    t.box[0] = 2;
    t.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    refused(t,
            "boxDim[0] * the element size is 8 bytes; without interleave it must be a "
            "multiple of 16");
    t = valid();
    t.box[0] = 64;
    refused(t,
            "the box's inner dimension (boxDim[0]) is 256 bytes, more than the 128-byte "
            "swizzle span");
    t = valid();
    t.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    refused(t, "more than the 32-byte swizzle span");
    t = valid();
    t.steps[1] = 9;
    refused(t, "elementStrides[1] is 9; it must be 1..8");
    t = valid();
    t.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    refused(t, "an interleaved layout needs tensorRank 3 or more (it is 2)");
    t = valid();
    t.rank = 3;
    t.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    refused(t, "CU_TENSOR_MAP_INTERLEAVE_32B needs CU_TENSOR_MAP_SWIZZLE_32B");
    t = valid();
    t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B;
    refused(t, "needs a device of compute capability 10.0");
    t = valid();
    t.l2 = 9;
    refused(t, "l2Promotion 9 is not a CUtensorMapL2promotion");
    t = valid();
    t.type = CU_TENSOR_MAP_DATA_TYPE_INT32;
    t.fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    refused(t, "needs a floating-point tensorDataType");
    // the object itself: 64-byte aligned, not NULL
    alignas(64) unsigned char space[192] = {};
    swcu::test::StderrCapture err;
    SWCU_TEST_CHECK_RESULT(valid().encode(reinterpret_cast<CUtensorMap*>(space + 16)),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(valid().encode(nullptr), CUDA_ERROR_INVALID_VALUE);
    const std::string text = err.finish();
    CHECK(text.find("tensorMap is not 64-byte aligned") != std::string::npos);
    CHECK(text.find("tensorMap is NULL") != std::string::npos);
  }

  TEST_CASE_FIXTURE(TensorMapTest, "im2col maps and their corner ranges") {
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[4] = {16, 8, 8, 2};  // C, W, H, N
    const cuuint64_t strides[3] = {64, 512, 4096};
    const cuuint32_t steps[4] = {1, 1, 1, 1};
    const int lower[2] = {-1, -1}, upper[2] = {-1, -1};
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2col(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            lower, upper, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_SUCCESS);
    // rank 4: two offsets in -128..127; rank 2 is too small for im2col
    const int far[2] = {-129, 0};
    swcu::test::StderrCapture err;
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2col(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            far, upper, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2col(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(memory), dims, strides,
            lower, upper, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2col(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            lower, upper, 257, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2colWide(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            -1, 40000, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    // cuda.h: the bounding box "must have non-zero area"; along H it spans 5 .. 8 - 1 - 4 = 3
    const int empty_lower[2] = {-1, 5}, empty_upper[2] = {-1, -4};
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                      reinterpret_cast<void*>(memory), dims, strides, empty_lower,
                                      empty_upper, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2colWide(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            4, -5, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
            CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_ERROR_INVALID_VALUE);
    const std::string text = err.finish();
    CHECK(text.find("cuTensorMapEncodeIm2col: the pixel box is empty in dimension 2 (globalDim 8, "
                    "corners 5 and -4); it must have non-zero area") != std::string::npos);
    CHECK(text.find("cuTensorMapEncodeIm2colWide: the pixel box is empty along W") !=
          std::string::npos);
    CHECK(text.find("cuTensorMapEncodeIm2col: a pixel box corner offset is -129; with tensorRank "
                    "4 it must be -128..127") != std::string::npos);
    CHECK(text.find("cuTensorMapEncodeIm2col: tensorRank is 2; it must be 3..5") !=
          std::string::npos);
    CHECK(text.find("channelsPerPixel is 257; it must be 1..256") != std::string::npos);
    CHECK(text.find("cuTensorMapEncodeIm2colWide: a pixel box corner width is 40000") !=
          std::string::npos);
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapEncodeIm2colWide(
            &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(memory), dims, strides,
            -1, 1, 16, 64, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128, CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(TensorMapTest, "cuTensorMapReplaceAddress keeps the map's alignment rules") {
    alignas(64) CUtensorMap m{};
    SWCU_TEST_REQUIRE_SUCCESS(valid().encode(&m));
    SWCU_TEST_CHECK_RESULT(
        mod().cuTensorMapReplaceAddress(&m, reinterpret_cast<void*>(memory + 4096)), CUDA_SUCCESS);
    swcu::test::StderrCapture err;
    SWCU_TEST_CHECK_RESULT(mod().cuTensorMapReplaceAddress(&m, reinterpret_cast<void*>(memory + 8)),
                           CUDA_ERROR_INVALID_VALUE);
    alignas(64) CUtensorMap blank{};
    SWCU_TEST_CHECK_RESULT(mod().cuTensorMapReplaceAddress(&blank, reinterpret_cast<void*>(memory)),
                           CUDA_ERROR_INVALID_VALUE);
    const std::string text = err.finish();
    CHECK(text.find("globalAddress is not 16-byte aligned") != std::string::npos);
    CHECK(text.find("tensorMap holds no map cuTensorMapEncode* made") != std::string::npos);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "encoding a tensor map needs a current context") {
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[1] = {64};
    const cuuint32_t box[1] = {16}, steps[1] = {1};
    alignas(16) static float data[64];
    SWCU_TEST_CHECK_RESULT(mod().cuTensorMapEncodeTiled(
                               &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, data, dims, nullptr, box,
                               steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                           CUDA_ERROR_INVALID_CONTEXT);
  }
}
