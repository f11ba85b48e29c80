// Malformed, unsupported and misused warp-level matrix instructions. A form the PTX ISA 9.0 does
// not define (wrong operand counts, register widths, type combinations, layouts) fails to load
// with CUDA_ERROR_INVALID_PTX and its line in the log, as ptxas refuses it. Valid forms the
// interpreter does not run (wgmma, sub-byte and fp8 mma, sparse mma, the sm_100 ldmatrix shapes)
// load, and their launch is CUDA_ERROR_NOT_SUPPORTED naming them. What the ISA leaves undefined
// at run time (a partial warp, exited lanes, a divergent guard, misaligned or non-uniform wmma
// addresses, ldmatrix outside shared memory) ends the launch with a sticky error and a message.
#include <algorithm>
#include <cstdint>
#include <string>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;

// Registers for the bodies below.
const char* kRegs = R"(
  .reg .b32 %r<16>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<8>;
  .reg .pred %p;
)";

struct MatrixFaultTest : PtxTest {
  /// Launches kernel k of `body` on one block of `threads` with out = in = a 4 KiB buffer
  /// (zeros); returns what the synchronization returns, with stderr in `err`.
  CUresult launch(const std::string& body, unsigned threads = 32, const std::string& prelude = "") {
    loaded = load_logged(ptxt::kernel(kRegs + body, prelude));
    const CUdeviceptr p = alloc(4096);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(p, 0, 4096));
    buffer = p;
    CUdeviceptr a = p, b = p;
    void* params[] = {&a, &b};
    swcu::test::StderrCapture capture;
    const CUresult launched = swcu::test::mod().cuLaunchKernel(
        function(loaded, "k"), 1, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
    const CUresult synced = launched == CUDA_SUCCESS ? cu.cuCtxSynchronize() : launched;
    err = capture.finish();
    return synced;
  }
  void expect_message(const std::string& part) {
    INFO("stderr: ", err);
    CHECK(err.find(part) != std::string::npos);
    CHECK(err.find("PTX line") != std::string::npos);
  }
  std::string err;
  CUdeviceptr buffer = 0;  ///< the last launch's buffer
};

const char* kMma =
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
    "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};";

}  // namespace

TEST_SUITE("ptx.matrix_fault") {
  TEST_CASE_FIXTURE(
      PtxTest, "ptx.matrix_fault: malformed matrix instructions fail to load with their line") {
    const std::string cases[][2] = {
        // wrong operand counts
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2}, {%r0, %r1, %r2, %r3}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "operand d must be a vector of 4 registers, not 3"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "operand a must be a vector of 4 registers, not 3"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5};",
         "takes 4 operands, not 3"},
        {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "operand a must be a vector of 4 registers, not 2"},
        {"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3}, [%in];",
         "operand r must be a vector of 8 registers, not 4"},
        {"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
         "%f7}, "
         "{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, {%r8, %r9, %r10, %r11, %r12, %r13, %r14, "
         "%r15};",
         "takes 4 operands, not 3"},
        {"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1}, [%r2];",
         "operand r must be a vector of 4 registers, not 2"},
        {"ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, %r2;", "must be an address"},
        {"ldmatrix.sync.aligned.m8n8.shared.b16 {%r0}, [%r2];", "needs .x1, .x2 or .x4"},
        // register widths, types, layouts, qualifiers
        {"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%r0, %r1}, {%fd0}, {%fd1}, {%fd2, "
         "%fd3};",
         "operand d needs 64-bit registers"},
        {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32 {%r0, %r1}, {%r0, %r1, %r2, %r3}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};",
         ".dtype and .ctype must be the same"},
        {"mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "needs .row.col"},
        {"mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {%r0, %r1}, {%r0, %r1, %r2, %r3}, "
         "{%r4, %r5}, {%r6, %r7};",
         ".bf16 mma accumulates in .f32"},
        {"mma.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "needs .sync"},
        {"mma.sync.aligned.m16n8k16.row.col.frob.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "unknown modifier .frob"},
        {"mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
         ".satfinite is only for integer mma"},
        {"wmma.load.a.sync.aligned.row.m16n16k8.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, "
         "%r7}, [%in];",
         "not a valid combination"},
        {"movmatrix.sync.aligned.m8n8.b16 %r0, %r1;", "movmatrix needs .trans"},
        {"ldmatrix.sync.aligned.m8n8.x4.global.b16 {%r0, %r1, %r2, %r3}, [%in];", "needs .shared"},
    };
    for (const auto& c : cases) {
      const std::string text = ptxt::kernel(kRegs + std::string("  ") + c[0] + "\n");
      const int line = ptxt::line_of(text, c[0]);
      INFO(c[0], " at line ", line);
      const std::string log = ptxt::refused_ptx_log(text);
      INFO("log: ", log);
      CHECK(log.find("line " + std::to_string(line)) != std::string::npos);
      CHECK(log.find(c[1]) != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(
      PtxTest, "ptx.matrix_fault: valid forms it does not run load and their launch is refused") {
    const std::string cases[][2] = {
        {"wgmma.fence.sync.aligned;", "not wgmma"},
        {"mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%r0, %r1}, {%r2}, {%r3}, {%r4, %r5};",
         "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32"},
        {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
         "e4m3"},
        {"mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
         "{%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%f4, %f5, %f6, %f7}, %r8, 0;",
         "mma.sp"},
        {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0, %r1}, [%r2];", "m16n16"},
    };
    for (const auto& c : cases) {
      const std::string text = ptxt::kernel(kRegs + std::string("  ") + c[0] + "\n");
      INFO(c[0]);
      CUmodule m = load(text);
      const CUdeviceptr p = alloc(16);
      CUdeviceptr a = p, b = p;
      void* params[] = {&a, &b};
      swcu::test::StderrCapture capture;
      SWCU_TEST_CHECK_RESULT(swcu::test::mod().cuLaunchKernel(function(m, "k"), 1, 1, 1, 32, 1, 1,
                                                              0, nullptr, params, nullptr),
                             CUDA_ERROR_NOT_SUPPORTED);
      const std::string text_err = capture.finish();
      INFO("stderr: ", text_err);
      CHECK(text_err.find(c[1]) != std::string::npos);
      CHECK(text_err.find("PTX line " + std::to_string(ptxt::line_of(text, c[0]))) !=
            std::string::npos);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());  // not sticky
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
    }
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: mma in a warp of fewer than 32 threads") {
    SWCU_TEST_CHECK_RESULT(launch(std::string("  ") + kMma + "\n", 16),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    expect_message("needs all 32 threads of a warp, and this warp has 16");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: mma after some lanes exited") {
    const std::string body =
        "  setp.ge.u32 %p, %tx, 30;\n  @%p exit;\n  " + std::string(kMma) + "\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    expect_message("lanes 30,31 have exited");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: mma under a guard true in some lanes") {
    const std::string body = "  setp.lt.u32 %p, %tx, 8;\n  @%p " + std::string(kMma) + "\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    expect_message("guard true only in lanes 0,1,2,3,4,5,6,7");
  }

  // A predicated-off instruction does nothing, so it needs no warp to meet at it (nor a full one).
  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: a guard false in every lane skips mma") {
    const std::string body =
        "  setp.gt.u32 %p, %tx, 99;\n  @%p " + std::string(kMma) + "\n  st.global.u32 [%out], 5;\n";
    for (const unsigned threads : {32u, 16u}) {
      INFO(threads, " threads");
      SWCU_TEST_CHECK_RESULT(launch(body, threads), CUDA_SUCCESS);
      unsigned v = 0;
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&v, buffer, 4));
      CHECK(v == 5);
    }
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: lanes that diverged meet at mma") {
    // Odd lanes take a detour before the mma; the warp still computes it together.
    const std::string body = R"(
  and.b32 %r8, %tx, 1;
  setp.eq.u32 %p, %r8, 1;
  @%p bra $odd;
  bra $join;
$odd:
  add.u32 %r9, %r9, 1;
$join:
  )" + std::string(kMma) + "\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: a wmma row not aligned to 16 bytes") {
    // stride 20 halves: row 1 starts 40 bytes in
    const std::string body =
        "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, "
        "%r7}, [%in], 20;\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_MISALIGNED_ADDRESS);
    expect_message("row 1 starts at");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: wmma lanes with different addresses") {
    const std::string body = R"(
  .reg .b64 %q;
  mul.wide.u32 %q, %tx, 32;
  add.s64 %q, %in, %q;
  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%q];
)";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    expect_message("every lane must give the same p and stride");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest,
                    "ptx.matrix_fault: a wmma stride below the leading dimension") {
    const std::string body =
        "  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
        "%f7}, [%in], 8;\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    expect_message("stride 8 is less than the matrix's leading dimension 16");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: a wmma load past its allocation") {
    // rows 64 MiB apart: row 1 is far past the 4 KiB buffer
    const std::string body =
        "  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
        "%f7}, [%in], 16777216;\n";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_ADDRESS);
    expect_message("illegal address");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: ldmatrix from a global address") {
    const std::string body = R"(
  ldmatrix.sync.aligned.m8n8.x1.b16 {%r0}, [%in];
)";
    SWCU_TEST_CHECK_RESULT(launch(body), CUDA_ERROR_ILLEGAL_ADDRESS);
    expect_message("is not in shared memory");
  }

  TEST_CASE_FIXTURE(MatrixFaultTest, "ptx.matrix_fault: an ldmatrix row not aligned to 16 bytes") {
    const std::string body = R"(
  mov.u32 %r1, sm;
  add.u32 %r1, %r1, 8;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, [%r1];
)";
    SWCU_TEST_CHECK_RESULT(launch(body, 32, ".shared .align 16 .b8 sm[256];\n"),
                           CUDA_ERROR_MISALIGNED_ADDRESS);
    expect_message("misaligned address");
  }
}
