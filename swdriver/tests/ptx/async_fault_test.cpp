// Faults of asynchronous copies and mbarriers. The PTX ISA leaves using an mbarrier before
// mbarrier.init (or after mbarrier.inval), arriving more often than a phase expects, a tx-count
// out of range and a test_wait on a state no arrive returned undefined; the software driver
// ends the launch with CUDA_ERROR_ILLEGAL_INSTRUCTION and a message naming the PTX line. A
// cp.async from or to a bad address is CUDA_ERROR_ILLEGAL_ADDRESS when it is issued (a GPU
// reports it at some later point), a misaligned one CUDA_ERROR_MISALIGNED_ADDRESS; a try_wait
// whose phase can never complete is a deadlock (CUDA_ERROR_LAUNCH_FAILED). Malformed forms
// fail to load with their line. Every launch fault is sticky, as on a GPU.
#include <algorithm>
#include <cstdint>
#include <string>

#include "ptx_support.hpp"

namespace {

using ptxt::PtxTest;

const char* const kShared = ".shared .align 16 .b8 sbuf[256];\n.shared .align 8 .b64 bar;\n";

struct AsyncFaultTest : PtxTest {
  /// Launches kernel "k" of `body` on one block of `threads` with (out, in) = (p, p); returns what
  /// cuCtxSynchronize returns, with stderr in `err`.
  CUresult fault(const std::string& body, unsigned threads = 1) {
    text = ptxt::kernel(body, kShared);
    loaded = load(text);
    const CUfunction f = function(loaded, "k");
    CUdeviceptr a = alloc(256), b = a;
    void* params[] = {&a, &b};
    swcu::test::StderrCapture capture;
    const CUresult launched =
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
    const CUresult synced = launched == CUDA_SUCCESS ? cu.cuCtxSynchronize() : launched;
    err = capture.finish();
    return synced;
  }
  /// The message names the kernel, the PTX line of `needle` and `what`; the context is broken.
  void check(const std::string& needle, const std::string& what, CUresult code) {
    INFO("stderr: ", err);
    CHECK(err.find("kernel k, PTX line " + std::to_string(ptxt::line_of(text, needle))) !=
          std::string::npos);
    CHECK(err.find(what) != std::string::npos);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), code);
  }
  std::string text;
  std::string err;
};

}  // namespace

TEST_SUITE("ptx.fault") {
  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: an mbarrier used before mbarrier.init") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .b64 %state;
  mbarrier.arrive.shared.b64 %state, [bar];
)"),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    check("mbarrier.arrive", "must be initialized with mbarrier.init",
          CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: an mbarrier used after mbarrier.inval") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .pred %p;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.inval.shared.b64 [bar];
  mbarrier.test_wait.parity.shared.b64 %p, [bar], 0;
)"),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    check("mbarrier.test_wait", "no mbarrier object", CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: more arrivals than a phase expects") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  mbarrier.init.shared.b64 [bar], 2;
  mbarrier.arrive.shared.b64 _, [bar], 3;
)"),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    check("mbarrier.arrive", "more arrivals than mbarrier.init expected",
          CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a test_wait on a state no arrive returned") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .pred %p;
  .reg .b64 %state;
  mov.u64 %state, 0;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.test_wait.shared.b64 %p, [bar], %state;
)"),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    check("mbarrier.test_wait", "which no mbarrier.arrive returned",
          CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: an mbarrier at a global address") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  mbarrier.init.b64 [%out], 1;
)"),
                           CUDA_ERROR_ILLEGAL_ADDRESS);
    check("mbarrier.init", "not a shared memory address", CUDA_ERROR_ILLEGAL_ADDRESS);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a try_wait whose phase never completes") {
    // 32 threads, 64 expected arrivals: every thread waits for a phase that cannot complete.
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .pred %p, %first;
  setp.eq.u32 %first, %tx, 0;
  @%first mbarrier.init.shared.b64 [bar], 64;
  bar.sync 0;
  mbarrier.arrive.shared.b64 _, [bar];
$wait:
  mbarrier.try_wait.parity.shared.b64 %p, [bar], 0;
  @!%p bra $wait;
)",
                                 32),
                           CUDA_ERROR_LAUNCH_FAILED);
    check("mbarrier.try_wait", "deadlock", CUDA_ERROR_LAUNCH_FAILED);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a cp.async from a bad address faults when issued") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .b32 %s;
  mov.u32 %s, sbuf;
  cp.async.cg.shared.global [%s], [%in+0x10000000], 16;
  cp.async.wait_all;
)"),
                           CUDA_ERROR_ILLEGAL_ADDRESS);
    check("cp.async.cg", "illegal address: load of 16 bytes", CUDA_ERROR_ILLEGAL_ADDRESS);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a cp.async past the end of shared memory") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .b32 %s;
  mov.u32 %s, sbuf;
  cp.async.ca.shared.global [%s+4096], [%in], 4;
)"),
                           CUDA_ERROR_ILLEGAL_ADDRESS);
    check("cp.async.ca", "(shared;", CUDA_ERROR_ILLEGAL_ADDRESS);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a misaligned cp.async") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .b32 %s;
  mov.u32 %s, sbuf;
  cp.async.cg.shared.global [%s], [%in+4], 16;
)"),
                           CUDA_ERROR_MISALIGNED_ADDRESS);
    check("cp.async.cg", "misaligned", CUDA_ERROR_MISALIGNED_ADDRESS);
  }

  TEST_CASE_FIXTURE(AsyncFaultTest, "ptx.fault: a cp.async.bulk size not a multiple of 16") {
    SWCU_TEST_CHECK_RESULT(fault(R"(
  .reg .b32 %s, %b;
  mov.u32 %s, sbuf;
  mov.u32 %b, bar;
  mbarrier.init.shared.b64 [bar], 1;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%in], 24, [%b];
)"),
                           CUDA_ERROR_MISALIGNED_ADDRESS);
    check("cp.async.bulk", "must be multiples of 16", CUDA_ERROR_MISALIGNED_ADDRESS);
  }

  TEST_CASE_FIXTURE(PtxTest, "ptx.fault: malformed asynchronous-copy and mbarrier forms") {
    const std::string cases[][2] = {
        {"  setmaxnreg.inc.sync.aligned.u32 20;\n", "setmaxnreg"},
        {"  setmaxnreg.sync.aligned.u32 64;\n", "setmaxnreg"},
        {"  cp.async.ca.shared.global [sbuf], [%in], 12;\n", "cp.async.ca"},
        {"  cp.async.cg.shared.global [sbuf], [%in], 8;\n", "cp.async.cg"},
        {"  cp.async.ca.shared.global [sbuf], [%in], 4, 8;\n", "cp.async.ca"},
        {"  mbarrier.try_wait.shared.b64 %tx, [bar], 0;\n", "mbarrier.try_wait"},
        {"  mbarrier.test_wait.shared.b64 %p, [bar], %rd_t, 100;\n", "mbarrier.test_wait"},
        {"  mbarrier.arrive.shared::cluster.b64 %rd_t, [bar];\n", "mbarrier.arrive"},
        {"  mbarrier.init.shared.b64 [bar];\n", "mbarrier.init"},
        {"  mbarrier.frobnicate.shared.b64 [bar];\n", "mbarrier.frobnicate"},
        {"  cp.async.bulk.global.shared::cta [%out], [sbuf], 16;\n", "cp.async.bulk"},
        // a label is visible only in its { } block (as ptxas scopes it)
        {"  {\n  INNER:\n  }\n  bra INNER;\n", "bra INNER"},
    };
    for (const auto& c : cases) {
      const std::string text = ptxt::kernel("  .reg .pred %p;\n" + c[0], kShared);
      const int line = ptxt::line_of(text, c[1]);
      INFO(c[0], " at line ", line);
      const std::string log = ptxt::refused_ptx_log(text);
      INFO("log: ", log);
      CHECK(log.find("line " + std::to_string(line)) != std::string::npos);
    }
  }
}
