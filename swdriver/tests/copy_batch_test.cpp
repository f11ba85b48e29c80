// Batches of copies: cuMemcpyBatchAsync and cuMemcpy3DBatchAsync, their attributes and the
// validation cuda.h documents, each batch one stream operation.
#include <cstdint>
#include <numeric>
#include <vector>

#include "array_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUmemcpyAttributes attributes(CUmemcpySrcAccessOrder order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM) {
  CUmemcpyAttributes a{};
  a.srcAccessOrder = order;
  return a;
}

CUmemcpy3DOperand pointer(const void* p, std::size_t row = 0, std::size_t layer = 0) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  o.op.ptr.ptr = reinterpret_cast<CUdeviceptr>(p);
  o.op.ptr.rowLength = row;
  o.op.ptr.layerHeight = layer;
  return o;
}

CUmemcpy3DOperand array(CUarray a, std::size_t x = 0, std::size_t y = 0, std::size_t z = 0) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  o.op.array.array = a;
  o.op.array.offset = {x, y, z};
  return o;
}

}  // namespace

TEST_SUITE("batch copies") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuMemcpyBatchAsync copies every pair, one operation") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const auto a = swcu::test::iota_words(64), b = swcu::test::iota_words(32, 500);
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 96 * 4));
    std::vector<std::uint32_t> out(96, 0);
    // Two copies into the device (the second with a source read during the call), one back.
    CUdeviceptr dsts[] = {dev, dev + 64 * 4};
    CUdeviceptr srcs[] = {reinterpret_cast<CUdeviceptr>(a.data()),
                          reinterpret_cast<CUdeviceptr>(b.data())};
    std::size_t sizes[] = {64 * 4, 32 * 4};
    CUmemcpyAttributes attrs[] = {attributes(),
                                  attributes(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)};
    std::size_t idxs[] = {0, 1};
    ctl.reset_call_counts();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, idxs, 2, s));
    CHECK(ctl.call_count("cuMemcpyBatchAsync_v2") == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(out.data(), dev, 96 * 4));
    for (std::size_t i = 0; i < 96; ++i) CHECK(out[i] == (i < 64 ? a[i] : b[i - 64]));
    // What cuda.h rules out: CUDA_ERROR_INVALID_VALUE.
    std::size_t bad_first[] = {1, 1};
    std::size_t not_increasing[] = {0, 0};
    std::size_t past_count[] = {0, 2};
    CUmemcpyAttributes invalid_order[] = {attributes(CU_MEMCPY_SRC_ACCESS_ORDER_INVALID)};
    CUmemcpyAttributes bad_flags[] = {attributes()};
    bad_flags[0].flags = 4;
    const auto bad = CUDA_ERROR_INVALID_VALUE;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, bad_first, 2, s),
                           bad);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, not_increasing, 2, s), bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, past_count, 2, s),
                           bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, attrs, idxs, 2, s),
                           bad);  // numAttrs > count
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, invalid_order, idxs, 1, s), bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, bad_flags, idxs, 1, s),
                           bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 0, attrs, idxs, 0, s), bad);
    // "Must not be legacy NULL stream."
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, idxs, 2, nullptr),
                           bad);
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 2, attrs, idxs, 2, CU_STREAM_LEGACY), bad);
    // A copy past its allocation fails the batch; nothing is copied.
    std::size_t too_big[] = {64 * 4, 64 * 4};
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, too_big, 2, attrs, idxs, 2, s),
                           bad);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuMemcpy3DBatchAsync mixes pointers and arrays") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray arr = swcu::test::make_array(6, 4, 2);
    const auto input = swcu::test::iota_words(6 * 4 * 2);
    std::vector<std::uint32_t> box(3 * 2 * 2, 0);
    // Host into the whole array (extents in elements), then a 3x2x2 box at (2, 1, 0) back, in
    // one batch (the batch runs in list order here).
    CUDA_MEMCPY3D_BATCH_OP ops[2]{};
    ops[0].src = pointer(input.data());
    ops[0].dst = array(arr);
    ops[0].extent = {6, 4, 2};
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    ops[1].src = array(arr, 2, 1, 0);
    ops[1].dst = pointer(box.data());
    ops[1].extent = {3, 2, 2};
    ops[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DBatchAsync_v2(2, ops, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (std::size_t z = 0; z < 2; ++z) {
      for (std::size_t y = 0; y < 2; ++y) {
        for (std::size_t x = 0; x < 3; ++x) {
          CHECK(box[(z * 2 + y) * 3 + x] == input[(z * 4 + y + 1) * 6 + x + 2]);
        }
      }
    }
    // Pointer to pointer with a row length: bytes (element size 1).
    std::vector<unsigned char> src(4 * 10), dst(4 * 3, 0);
    std::iota(src.begin(), src.end(), static_cast<unsigned char>(0));
    CUDA_MEMCPY3D_BATCH_OP p2p{};
    p2p.src = pointer(src.data(), 10);
    p2p.dst = pointer(dst.data());
    p2p.extent = {3, 4, 1};
    p2p.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DBatchAsync_v2_ptsz(1, &p2p, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (std::size_t y = 0; y < 4; ++y) {
      for (std::size_t x = 0; x < 3; ++x) CHECK(dst[y * 3 + x] == src[y * 10 + x]);
    }
    // The documented refusals.
    const auto bad = CUDA_ERROR_INVALID_VALUE;
    const struct {
      void (*change)(CUDA_MEMCPY3D_BATCH_OP&);
      const char* what;
    } cases[] = {
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.extent.depth = 0; }, "a zero extent"},
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.op.ptr.rowLength = 2; }, "rowLength < width"},
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.op.ptr.layerHeight = 3; }, "layerHeight < height"},
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID; },
         "no source access order"},
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.flags = 2; }, "an unknown flag"},
        {[](CUDA_MEMCPY3D_BATCH_OP& o) { o.dst.type = static_cast<CUmemcpy3DOperandType>(7); },
         "an unknown operand type"},
    };
    for (const auto& c : cases) {
      INFO(c.what);
      CUDA_MEMCPY3D_BATCH_OP op = p2p;
      op.src.op.ptr.layerHeight = 4;
      c.change(op);
      SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(1, &op, 0, s), bad);
    }
    CUDA_MEMCPY3D_BATCH_OP outside = ops[1];
    outside.src = array(arr, 4, 0, 0);  // x 4 + width 3 > 6
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(1, &outside, 0, s), bad);
    // Two arrays of different element sizes.
    const CUarray wide = swcu::test::make_array(6, 4, 2, 2);
    CUDA_MEMCPY3D_BATCH_OP mismatch{};
    mismatch.src = array(arr);
    mismatch.dst = array(wide);
    mismatch.extent = {1, 1, 1};
    mismatch.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(1, &mismatch, 0, s), bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(1, ops, 1, s), bad);  // flags must be 0
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(0, ops, 0, s), bad);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(1, ops, 0, nullptr), bad);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(wide));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(arr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
