// Faults in PTX kernels and how the driver reports them: illegal and misaligned addresses,
// trap, device assert, a barrier that can never complete, freed memory, malformed PTX, and
// instructions the interpreter does not support. Memory faults break the context (sticky).
#include <algorithm>
#include <cstdint>
#include <string>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;
using u32 = std::uint32_t;

// The module of ptxt::kernel(body, prelude) with its entry renamed to `name`.
std::string named_kernel(const std::string& name, const std::string& body,
                         const std::string& prelude = "") {
  std::string text = ptxt::kernel(body, prelude);
  const std::string entry = ".entry k(";
  text.replace(text.find(entry), entry.size(), ".entry " + name + "(");
  return text;
}

// A PTX byte-array initializer for a string, one element shorter than the array (as nvcc writes
// it: the NUL is implicit).
std::string str_global(const std::string& name, const std::string& s) {
  std::string init;
  for (const char c : s) {
    if (!init.empty()) init += ", ";
    init += std::to_string(static_cast<int>(static_cast<unsigned char>(c)));
  }
  return ".global .align 1 .b8 " + name + "[" + std::to_string(s.size() + 1) + "] = {" + init +
         "};\n";
}

struct FaultTest : PtxTest {
  /// Loads `text`, launches `name` on one block of `threads` with (out, in) = (p, p), and
  /// returns what cuCtxSynchronize returns; captures stderr meanwhile into `err`.
  CUresult fault(const std::string& text, const std::string& name, CUdeviceptr p,
                 unsigned threads = 1) {
    loaded = load(text);
    const CUfunction f = function(loaded, name.c_str());
    CUdeviceptr a = p, b = p;
    void* params[] = {&a, &b};
    swcu::test::StderrCapture capture;
    const CUresult launched =
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
    const CUresult synced = launched == CUDA_SUCCESS ? cu.cuCtxSynchronize() : launched;
    err = capture.finish();
    return synced;
  }
  /// After a sticky error: later calls in the context fail with the same code.
  void check_sticky(CUresult code) {
    CUdeviceptr p = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), code);
    SWCU_TEST_CHECK_RESULT(cu.cuMemAlloc_v2(&p, 16), code);
    CUmodule m = nullptr;
    SWCU_TEST_CHECK_RESULT(swcu::test::mod().cuModuleLoadData(&m, ptxt::kernel("").c_str()), code);
  }
  void check_message(const std::string& kernel) {
    INFO("stderr: ", err);
    CHECK(err.find(kernel) != std::string::npos);
    CHECK(err.find("line") != std::string::npos);
  }
  std::string err;
};

}  // namespace

TEST_SUITE("ptx.fault") {
  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: an out-of-bounds global store is an illegal address") {
    const CUdeviceptr p = alloc(16);
    const std::string text = named_kernel("oob_store", R"(
  .reg .b32 %v;
  mov.u32 %v, 1;
  st.global.u32 [%out+4096], %v;
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "oob_store", p + 0x10000000), CUDA_ERROR_ILLEGAL_ADDRESS);
    check_message("oob_store");
    check_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
  }

  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: a store through a null pointer is an illegal address") {
    const std::string text = named_kernel("null_store", R"(
  .reg .b32 %v;
  .reg .b64 %z;
  mov.u32 %v, 1;
  mov.u64 %z, 0;
  st.global.u32 [%z], %v;
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "null_store", alloc(16)), CUDA_ERROR_ILLEGAL_ADDRESS);
    check_message("null_store");
  }

  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: a misaligned load is a misaligned address") {
    const std::string text = named_kernel("misaligned", R"(
  .reg .b32 %v;
  ld.global.u32 %v, [%in+1];
  st.global.u32 [%out], %v;
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "misaligned", alloc(16)), CUDA_ERROR_MISALIGNED_ADDRESS);
    check_message("misaligned");
    check_sticky(CUDA_ERROR_MISALIGNED_ADDRESS);
  }

  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: trap fails the launch") {
    const std::string text = named_kernel("traps", R"(
  .reg .pred %p;
  setp.eq.u32 %p, %tx, 1;
  @%p trap;
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "traps", alloc(16), 4), CUDA_ERROR_LAUNCH_FAILED);
    check_message("traps");
    check_sticky(CUDA_ERROR_LAUNCH_FAILED);
  }

  TEST_CASE_FIXTURE(FaultTest,
                    "ptx.fault: cudaGraphSetConditional outside a graph launch fails the launch") {
    // The device runtime's cudaGraphSetConditional (cuda_device_runtime_api.h) sets a
    // condition of the graph launch the kernel runs in; a kernel launched on a stream has none.
    // A GPU's behaviour is undefined there; the software driver stops the kernel (a trap).
    const std::string prelude =
        ".extern .func cudaGraphSetConditional (.param .b64 p0, .param .b32 p1);\n";
    const std::string text = named_kernel("sets", R"(
  .reg .b64 %h;
  .reg .b32 %v;
  mov.b64 %h, 1;
  mov.b32 %v, 1;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %h;
  .param .b32 param1;
  st.param.b32 [param1+0], %v;
  call.uni cudaGraphSetConditional, (param0, param1);
  }
)",
                                          prelude);
    SWCU_TEST_CHECK_RESULT(fault(text, "sets", alloc(16)), CUDA_ERROR_LAUNCH_FAILED);
    check_message("sets");
    CHECK(err.find("cudaGraphSetConditional(1, 1): the kernel does not run as a node of a graph "
                   "launch") != std::string::npos);
    check_sticky(CUDA_ERROR_LAUNCH_FAILED);
  }

  TEST_CASE_FIXTURE(FaultTest,
                    "ptx.fault: __assertfail prints the assertion and fails the launch") {
    const std::string prelude =
        ".extern .func __assertfail (.param .b64 p0, .param .b64 p1, .param .b32 p2, "
        ".param .b64 p3, .param .b64 p4);\n" +
        str_global("$str", "x > 0") + str_global("$str1", "check.cu") +
        str_global("__unnamed_1", "void kassert(int *)");
    const std::string body = R"(
  .reg .b64 %e, %f, %fn;
  mov.u64 %e, $str;
  cvta.global.u64 %e, %e;
  mov.u64 %f, $str1;
  cvta.global.u64 %f, %f;
  mov.u64 %fn, __unnamed_1;
  cvta.global.u64 %fn, %fn;
  {
    .param .b64 param0;
    .param .b64 param1;
    .param .b32 param2;
    .param .b64 param3;
    .param .b64 param4;
    st.param.b64 [param0], %e;
    st.param.b64 [param1], %f;
    st.param.b32 [param2], 7;
    st.param.b64 [param3], %fn;
    st.param.b64 [param4], 1;
    call.uni __assertfail, (param0, param1, param2, param3, param4);
  }
  st.global.u32 [%out], 1;
)";
    const CUdeviceptr p = alloc(16);
    SWCU_TEST_CHECK_RESULT(fault(named_kernel("kassert", body, prelude), "kassert", p),
                           CUDA_ERROR_ASSERT);
    INFO("stderr: ", err);
    CHECK(err.find("check.cu:7: void kassert(int *): block: [0,0,0], thread: [0,0,0] "
                   "Assertion `x > 0` failed.") != std::string::npos);
    check_sticky(CUDA_ERROR_ASSERT);
  }

  TEST_CASE_FIXTURE(FaultTest,
                    "ptx.fault: a barrier that can never complete fails and does not hang") {
    // Warp 0 waits at barrier 0 and warp 1 at barrier 1: neither can complete.
    const std::string text = named_kernel("stuck", R"(
  .reg .pred %first;
  setp.lt.u32 %first, %tx, 32;
  @%first bra $a;
  bar.sync 1;
  bra $end;
$a:
  bar.sync 0;
$end:
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "stuck", alloc(16), 64), CUDA_ERROR_LAUNCH_FAILED);
    check_message("stuck");
  }

  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: an out-of-bounds shared access is an illegal address") {
    const std::string text = named_kernel("oob_shared", R"(
  .reg .b32 %a, %v;
  mov.u32 %a, small;
  add.u32 %a, %a, 0x100000;
  ld.shared.u32 %v, [%a];
  st.global.u32 [%out], %v;
)",
                                          ".shared .align 4 .b32 small[4];\n");
    SWCU_TEST_CHECK_RESULT(fault(text, "oob_shared", alloc(16)), CUDA_ERROR_ILLEGAL_ADDRESS);
    check_message("oob_shared");
  }

  TEST_CASE_FIXTURE(FaultTest, "ptx.fault: reading freed memory is an illegal address") {
    const CUdeviceptr p = alloc(64);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    const std::string text = named_kernel("use_after_free", R"(
  .reg .b32 %v;
  ld.global.u32 %v, [%in];
  st.global.u32 [%out], %v;
)");
    SWCU_TEST_CHECK_RESULT(fault(text, "use_after_free", p), CUDA_ERROR_ILLEGAL_ADDRESS);
    check_message("use_after_free");
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.fault: malformed PTX is refused with the line in the log") {
    const std::string cases[][2] = {
        {"  frobnicate.u32 %tx, %tx;\n", "frobnicate"},
        {"  add.u32 %nosuchreg, %tx, 1;\n", "%nosuchreg"},
        {"  bra $nowhere;\n", "$nowhere"},
        {"  not %tx, 4;\n", "not %tx, 4"},                    // no type (found by fuzzing)
        {"  add.u32 7, %tx, 1;\n", "add.u32 7"},              // an immediate destination
        {"  setp.eq.u32 %tx, %tx, 1;\n", "setp.eq.u32 %tx"},  // setp into a .b32 register
        {"  vote.sync.ballot.b32;\n", "vote.sync.ballot"},    // no operands (found by fuzzing)
        {"  brx.idx %tx, [%out];\n", "brx.idx"},              // no table (found by fuzzing)
        {"  bra [%out];\n", "bra [%out]"},                    // an address, not a label
    };
    for (const auto& c : cases) {
      const std::string text = ptxt::kernel(c[0]);
      const int line = ptxt::line_of(text, c[1]);
      INFO(c[1], " at line ", line);
      const std::string log = ptxt::refused_ptx_log(text);
      INFO("log: ", log);
      CHECK(log.find(std::to_string(line)) != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.fault: unsupported instructions load but do not launch") {
    const std::string bodies[] = {
        R"(
  .reg .b32 %a<4>, %b<2>, %c<4>, %d<4>;
  mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%d0, %d1}, {%a0}, {%b0}, {%c0, %c1};
)",
        R"(
  .reg .b32 %s, %c;
  mov.u32 %s, buf;
  mov.u32 %c, 0;
  cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes [%s], [%in, {%c, %c, %c, %c, %c}], [%s];
)",
        R"(
  .reg .f32 %x, %r<4>;
  mov.f32 %x, 0f00000000;
  tex.1d.v4.f32.f32 {%r0, %r1, %r2, %r3}, [tref, {%x}];
)",
    };
    const std::string prelude = ".shared .align 16 .b8 buf[16];\n.global .texref tref;\n";
    for (const std::string& body : bodies) {
      INFO(body);
      CUmodule m = load(ptxt::kernel(body, prelude));
      const CUdeviceptr p = alloc(16);
      CUdeviceptr a = p, b = p;
      void* params[] = {&a, &b};
      SWCU_TEST_CHECK_RESULT(swcu::test::mod().cuLaunchKernel(function(m, "k"), 1, 1, 1, 32, 1, 1,
                                                              0, nullptr, params, nullptr),
                             CUDA_ERROR_NOT_SUPPORTED);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());  // not sticky
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
    }
  }
}
