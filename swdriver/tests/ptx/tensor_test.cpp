// cp.async.bulk.tensor in hand-written PTX (PTX ISA 9.0 "cp.async.bulk.tensor",
// "cp.async.bulk.prefetch.tensor", "prefetch"): a tensor map in global memory (the ISA allows
// .param, .const and .global maps through a generic address), the prefetches that take a map,
// the forms the decoder refuses with their line, the im2col forms the interpreter does not run
// yet, and a copy whose dimension is not its map's.
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

  TEST_CASE_FIXTURE(TensorPtxTest, "ptx.tensor: the im2col forms are not run yet") {
    const std::string body = R"(
  .shared .align 128 .b8 box[64];
  .shared .align 8 .b64 bar;
  .reg .b32 %c;
  .reg .b16 %o;
  mov.u32 %c, 0;
  mov.u16 %o, 0;
  cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [box], [%in, {%c, %c, %c}], [bar], {%o};
)";
    loaded = load_logged(ptxt::kernel(body));
    const CUfunction f = function(loaded, "k");
    CUdeviceptr a = alloc(256), b = a;
    void* params[] = {&a, &b};
    swcu::test::StderrCapture capture;
    SWCU_TEST_CHECK_RESULT(
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
        CUDA_ERROR_NOT_SUPPORTED);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("cp.async.bulk.tensor.3d.shared::cluster.global.im2col") != std::string::npos);
    CHECK(err.find("which the software driver does not run yet") != std::string::npos);
  }
}
