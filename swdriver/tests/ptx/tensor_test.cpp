// cp.async.bulk.tensor in hand-written PTX (PTX ISA 9.0 "cp.async.bulk.tensor",
// "cp.async.bulk.prefetch.tensor", "prefetch"): a tensor map in global memory (the ISA allows
// .param, .const and .global maps through a generic address), the prefetches that take a map,
// the forms the decoder refuses with their line (im2col ones included), an im2col load and
// prefetch, and copies whose dimension or mode is not their map's.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;

struct TensorPtxTest : PtxTest {
  // A rank-1 map of 64 u32 at `data`, boxes of 16, copied to device memory at `where`.
  void put_map(CUdeviceptr where, CUdeviceptr data) {
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[1] = {64};
    const cuuint32_t box[1] = {16}, steps[1] = {1};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeTiled(
        &m, CU_TENSOR_MAP_DATA_TYPE_UINT32, 1, reinterpret_cast<void*>(data), dims, nullptr, box,
        steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(where, &m, sizeof m));
  }
};

// Thread 0 loads the box at coordinate %in's word 32 (the word after the map: 56, so 8 of its 16
// elements lie outside the tensor) into shared memory through the map at %in, waits for the
// mbarrier, and writes the 16 words to %out.
const std::string kLoad = R"(
  .shared .align 128 .b8 box[64];
  .shared .align 8 .b64 bar;
  .reg .b32 %c, %r, %i;
  .reg .b64 %a, %s;
  .reg .pred %p, %done;
  setp.ne.u32 %p, %tx, 0;
  @%p bra END;
  mbarrier.init.shared::cta.b64 [bar], 1;
  ld.global.u32 %c, [%in+128];
  prefetch.tensormap [%in];
  cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%in, {%c}];
  cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [box], [%in, {%c}], [bar];
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 64;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %done, [bar], 0;
  @!%done bra WAIT;
  mov.u32 %i, 0;
COPY:
  mul.wide.u32 %a, %i, 4;
  mov.u64 %s, box;
  add.u64 %s, %s, %a;
  ld.shared.u32 %r, [%s];
  add.u64 %a, %a, %out;
  st.global.u32 [%a], %r;
  add.u32 %i, %i, 1;
  setp.lt.u32 %p, %i, 16;
  @%p bra COPY;
END:
)";

}  // namespace

TEST_SUITE("ptx.tensor") {
  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: a tensor map in global memory") {
    const CUdeviceptr data = alloc(64 * 4);
    std::vector<std::uint32_t> words(64);
    for (std::uint32_t i = 0; i < 64; ++i) words[i] = 1000 + i;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(data, words.data(), 64 * 4));
    const CUdeviceptr in = alloc(256);
    put_map(in, data);
    const std::uint32_t coordinate = 56;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(in + 128, &coordinate, 4));
    const CUdeviceptr out = alloc(16 * 4);
    SWCU_TEST_REQUIRE_SUCCESS(launch_status(ptxt::kernel(kLoad), out, in, {}, {32, 1, 1}));
    std::vector<std::uint32_t> got(16);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(got.data(), out, 16 * 4));
    for (std::uint32_t i = 0; i < 16; ++i) {
      INFO("element ", i);
      CHECK(got[i] == (56 + i < 64 ? 1000 + 56 + i : 0));  // zero outside the tensor
    }
  }

  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: a copy whose dimension is not its map's faults") {
    const CUdeviceptr in = alloc(256);
    put_map(in, alloc(256));
    const std::string body = R"(
  .shared .align 128 .b8 box[64];
  .shared .align 8 .b64 bar;
  .reg .b32 %c;
  mov.u32 %c, 0;
  mbarrier.init.shared::cta.b64 [bar], 1;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [box], [%in, {%c, %c}], [bar];
)";
    swcu::test::StderrCapture capture;
    SWCU_TEST_CHECK_RESULT(launch_status(ptxt::kernel(body), alloc(4), in),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("cp.async.bulk.tensor.2d.tile with a tiled tensor map of rank 1") !=
          std::string::npos);
  }

  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: malformed forms fail to load with their line") {
    const auto refused = [](const std::string& insn, const std::string& why) {
      const std::string text = ptxt::kernel(
          ".shared .align 128 .b8 box[64];\n"
          ".shared .align 8 .b64 bar;\n"
          ".reg .b32 %c;\n" +
          insn);
      const std::string log = ptxt::refused_ptx_log(text);
      INFO(insn, "\n", log);
      CHECK(log.find(why) != std::string::npos);
      CHECK(log.find("line " + std::to_string(ptxt::line_of(text, insn))) != std::string::npos);
    };
    refused(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c}], [bar];",
        "the tensor map operand needs 2 coordinates");
    refused("cp.async.bulk.tensor.1d.shared::cluster.global.tile [box], [%in, {%c}], [bar];",
            "a load needs .mbarrier::complete_tx::bytes");
    refused("cp.async.bulk.tensor.1d.global.shared::cta.tile [%in, {%c}], [box];",
            "a store needs .bulk_group");
    refused(
        "cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c}], [bar];",
        "needs a dimension (.1d to .5d)");
    refused(
        "cp.async.bulk.tensor.1d.shared::cta.global.tile.mbarrier::complete_tx::bytes."
        "multicast::cluster [box], [%in, {%c}], [bar], 3;",
        ".multicast::cluster copies to .shared::cluster");
  }

  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: malformed im2col forms fail to load") {
    const auto refused = [](const std::string& insn, const std::string& why) {
      const std::string text = ptxt::kernel(
          ".shared .align 128 .b8 box[64];\n"
          ".shared .align 8 .b64 bar;\n"
          ".reg .b32 %c;\n"
          ".reg .b16 %o;\n"
          ".reg .b32 %wide;\n" +
          insn);
      const std::string log = ptxt::refused_ptx_log(text);
      INFO(insn, "\n", log);
      CHECK(log.find(why) != std::string::npos);
      CHECK(log.find("line " + std::to_string(ptxt::line_of(text, insn))) != std::string::npos);
    };
    // PTX ISA: the im2col offsets are a vector of rank - 2 16-bit values
    refused(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c, %c, %c, %c}], [bar], {%o};",
        ".im2col.4d needs 2 im2col offsets");
    refused(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c, %c, %c}], [bar], {%wide};",
        "the im2col offsets must be 16-bit registers");
    refused(
        "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c, %c}], [bar], {%o};",
        ".im2col needs .3d, .4d or .5d");
    refused(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col_no_offs.mbarrier::complete_tx::"
        "bytes [box], [%in, {%c, %c, %c}], [bar];",
        ".im2col_no_offs is for stores");
    refused(
        "cp.async.bulk.tensor.3d.global.shared::cta.im2col.bulk_group [%in, {%c, %c, %c}], "
        "[box];",
        "a store takes .im2col_no_offs");
    refused(
        "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col.bulk_group "
        "[%in, {%c, %c, %c}], [box];",
        "a tensor reduction takes .im2col_no_offs");
    // .im2col::w and .im2col::w::128 are sm_100a (PTX ISA 8.6); the device is sm_90
    refused(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes "
        "[box], [%in, {%c, %c, %c}], [bar], {%o, %o};",
        ".im2col::w and .im2col::w::128 need sm_100a");
  }

  // A rank-3 NWC map of 4 channels x 6 pixels x 2 images of u32 (word = 100 * n + 10 * w + c),
  // pixel box -1 .. W - 1 (corners -1 and 0), 2 channels per pixel, 5 pixels per column.
  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: an im2col load and prefetch in PTX") {
    std::vector<std::uint32_t> words(4 * 6 * 2);
    for (std::uint32_t n = 0; n < 2; ++n) {
      for (std::uint32_t w = 0; w < 6; ++w) {
        for (std::uint32_t c = 0; c < 4; ++c) words[(n * 6 + w) * 4 + c] = 100 * n + 10 * w + c;
      }
    }
    const CUdeviceptr data = alloc(words.size() * 4);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(data, words.data(), words.size() * 4));
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[3] = {4, 6, 2}, strides[2] = {16, 96};
    const int lower[1] = {-1}, upper[1] = {0};
    const cuuint32_t steps[3] = {1, 1, 1};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeIm2col(
        &m, CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, reinterpret_cast<void*>(data), dims, strides, lower,
        upper, 2, 5, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    const CUdeviceptr in = alloc(128);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(in, &m, sizeof m));
    // channels 2..3 of the pixels from W = 4 of image 0 on, each read one pixel further (offset
    // 1): W 4, 5 (5 + 1 is outside: zeros), then the box wraps to W = -1 of image 1: W -1
    // (read at 0), 0, 1
    const std::string body = R"(
  .shared .align 128 .b8 box[40];
  .shared .align 8 .b64 bar;
  .reg .b32 %c, %w, %n, %r, %i;
  .reg .b16 %o;
  .reg .b64 %a, %s;
  .reg .pred %p, %done;
  mov.u32 %c, 2;
  mov.u32 %w, 4;
  mov.u32 %n, 0;
  mov.u16 %o, 1;
  mbarrier.init.shared::cta.b64 [bar], 1;
  cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%in, {%c, %w, %n}], {%o};
  cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [box], [%in, {%c, %w, %n}], [bar], {%o};
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 40;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %done, [bar], 0;
  @!%done bra WAIT;
  mov.u32 %i, 0;
COPY:
  mul.wide.u32 %a, %i, 4;
  mov.u64 %s, box;
  add.u64 %s, %s, %a;
  ld.shared.u32 %r, [%s];
  add.u64 %a, %a, %out;
  st.global.u32 [%a], %r;
  add.u32 %i, %i, 1;
  setp.lt.u32 %p, %i, 10;
  @%p bra COPY;
)";
    const CUdeviceptr out = alloc(40);
    SWCU_TEST_REQUIRE_SUCCESS(launch_status(ptxt::kernel(body), out, in));
    std::vector<std::uint32_t> got(10);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(got.data(), out, 40));
    const std::vector<std::uint32_t> want = {52, 53, 0, 0, 102, 103, 112, 113, 122, 123};
    CHECK(got == want);
  }

  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: a tile copy of an im2col map faults") {
    // the copy's mode must be the map's (PTX ISA: the tensor map's mode must match the
    // instruction's .load_mode; a GPU's behaviour is undefined, the software driver faults)
    const CUdeviceptr data = alloc(4 * 6 * 2 * 4);
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[3] = {4, 6, 2}, strides[2] = {16, 96};
    const int lower[1] = {0}, upper[1] = {0};
    const cuuint32_t steps[3] = {1, 1, 1};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeIm2col(
        &m, CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, reinterpret_cast<void*>(data), dims, strides, lower,
        upper, 4, 4, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    const CUdeviceptr in = alloc(128);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(in, &m, sizeof m));
    const std::string body = R"(
  .shared .align 128 .b8 box[64];
  .shared .align 8 .b64 bar;
  .reg .b32 %c;
  mov.u32 %c, 0;
  mbarrier.init.shared::cta.b64 [bar], 1;
  cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [box], [%in, {%c, %c, %c}], [bar];
)";
    swcu::test::StderrCapture capture;
    SWCU_TEST_CHECK_RESULT(launch_status(ptxt::kernel(body), alloc(4), in),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("cp.async.bulk.tensor.3d.tile with an im2col tensor map of rank 3") !=
          std::string::npos);
  }
}
