// Kernel conformance, compiled two more ways: conformance/*.cu through NVRTC at test time, and
// a hand-written NVVM IR kernel through libNVVM; both give PTX that the driver runs.
#include <nvrtc.h>
#include <nvvm.h>

#include <cmath>
#include <memory>
#include <numeric>

#include "conformance_checks.hpp"

namespace {

using conf::Conformance;

#define CONF_NVRTC_REQUIRE(call) REQUIRE_MESSAGE((call) == NVRTC_SUCCESS, #call)

// A program compiled by NVRTC, to PTX for compute_90.
struct Nvrtc {
  explicit Nvrtc(const std::string& source_name, const std::vector<std::string>& names = {}) {
    const std::string path = std::string(SWDRIVER_CONFORMANCE_SOURCE_DIR) + "/" + source_name;
    const std::string source = swcu::test::read_bytes(path);
    CONF_NVRTC_REQUIRE(
        nvrtcCreateProgram(&program, source.c_str(), path.c_str(), 0, nullptr, nullptr));
    for (const std::string& name : names)
      CONF_NVRTC_REQUIRE(nvrtcAddNameExpression(program, name.c_str()));
    // The toolkit's headers; cooperative_groups needs libcu++ (cccl/cuda/std).
    const std::string include = std::string("-I") + SWDRIVER_CUDA_INCLUDE_DIR;
    const std::string cccl = include + "/cccl";
    const char* options[] = {"--gpu-architecture=compute_90", "-std=c++17", include.c_str(),
                             cccl.c_str()};
    const nvrtcResult r = nvrtcCompileProgram(program, 4, options);
    std::size_t log_size = 0;
    nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) nvrtcGetProgramLog(program, log.data());
    REQUIRE_MESSAGE(r == NVRTC_SUCCESS, source_name, ": ", log);
    std::size_t size = 0;
    CONF_NVRTC_REQUIRE(nvrtcGetPTXSize(program, &size));
    ptx.resize(size);
    CONF_NVRTC_REQUIRE(nvrtcGetPTX(program, ptx.data()));
  }
  ~Nvrtc() { nvrtcDestroyProgram(&program); }
  Nvrtc(const Nvrtc&) = delete;
  Nvrtc& operator=(const Nvrtc&) = delete;

  /// The mangled name of a name expression given at construction.
  std::string lowered(const std::string& name) const {
    const char* out = nullptr;
    CONF_NVRTC_REQUIRE(nvrtcGetLoweredName(program, name.c_str(), &out));
    return out;
  }

  nvrtcProgram program = nullptr;
  std::string ptx;  // NUL-terminated
};

// NVVM IR (LLVM 7 text, typed pointers) of c[i] = a[i] * s + b[i] over global pointers.
constexpr const char* kNvvmIr = R"(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @nvvm_axpb(float addrspace(1)* %a, float addrspace(1)* %b, float addrspace(1)* %c, float %s, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %pa = getelementptr inbounds float, float addrspace(1)* %a, i64 %idx
  %pb = getelementptr inbounds float, float addrspace(1)* %b, i64 %idx
  %pc = getelementptr inbounds float, float addrspace(1)* %c, i64 %idx
  %va = load float, float addrspace(1)* %pa, align 4
  %vb = load float, float addrspace(1)* %pb, align 4
  %m = fmul float %va, %s
  %r = fadd float %m, %vb
  store float %r, float addrspace(1)* %pc, align 4
  br label %exit
exit:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, float addrspace(1)*, float, i32)* @nvvm_axpb, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
)";

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance, "conformance.nvrtc: reductions compiled by NVRTC") {
    const Nvrtc program("reduce.cu");
    const CUmodule m = load_image(program.ptx);
    conf::check_reduce_tree(*this, m);
    conf::check_reduce_shfl_down(*this, m);
    conf::check_reduce_shfl_xor(*this, m);
    conf::check_reduce_cg(*this, m);
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.nvrtc: scans compiled by NVRTC") {
    const Nvrtc program("scan.cu");
    const CUmodule m = load_image(program.ptx);
    conf::check_scan_hillis_steele(*this, m);
    conf::check_scan_warp(*this, m);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.nvrtc: co-resident and cooperative kernels compiled by NVRTC") {
    const Nvrtc coresident("coresident.cu");
    const CUmodule m = load_image(coresident.ptx);
    conf::check_scan_lookback(*this, m);
    conf::check_persistent_queue(*this, m);
    const Nvrtc cooperative("cooperative.cu");
    conf::check_grid_sync_reduce(*this, load_image(cooperative.ptx));
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.nvrtc: templated sorts by their lowered names") {
    const Nvrtc program("sort.cu", {"bitonic_sort<float>", "bitonic_sort<unsigned long long>"});
    const CUmodule m = load_image(program.ptx);
    const std::string f = program.lowered("bitonic_sort<float>");
    const std::string u = program.lowered("bitonic_sort<unsigned long long>");
    CHECK(f == "_Z12bitonic_sortIfEvPT_");
    conf::check_bitonic_int(*this, m);
    conf::check_bitonic_float(*this, m, f.c_str());
    conf::check_bitonic_u64(*this, m, u.c_str());
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.nvrtc: recursion local arrays and divergence compiled by NVRTC") {
    const Nvrtc program("control.cu");
    const CUmodule m = load_image(program.ptx);
    conf::check_recursion(*this, m);
    conf::check_local_array(*this, m);
    conf::check_divergent(*this, m);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.nvvm: a hand-written NVVM IR kernel compiled by libNVVM") {
    nvvmProgram program = nullptr;
    REQUIRE(nvvmCreateProgram(&program) == NVVM_SUCCESS);
    const std::unique_ptr<nvvmProgram, void (*)(nvvmProgram*)> guard(
        &program, [](nvvmProgram* p) { nvvmDestroyProgram(p); });
    const std::string ir = kNvvmIr;
    REQUIRE(nvvmAddModuleToProgram(program, ir.data(), ir.size(), "axpb") == NVVM_SUCCESS);
    const char* options[] = {"-arch=compute_90"};
    const nvvmResult r = nvvmCompileProgram(program, 1, options);
    std::size_t log_size = 0;
    nvvmGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) nvvmGetProgramLog(program, log.data());
    REQUIRE_MESSAGE(r == NVVM_SUCCESS, log);
    std::size_t size = 0;
    REQUIRE(nvvmGetCompiledResultSize(program, &size) == NVVM_SUCCESS);
    std::string ptx(size, '\0');
    REQUIRE(nvvmGetCompiledResult(program, ptx.data()) == NVVM_SUCCESS);
    const CUfunction f = function(load_image(ptx), "nvvm_axpb");
    constexpr int n = 1000;
    std::vector<float> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i) / 3.0f;
      b[i] = 1.0f - static_cast<float>(i) / 7.0f;
    }
    const float s = 1.1f;
    const CUdeviceptr da = upload(a);
    const CUdeviceptr db = upload(b);
    const CUdeviceptr dc = zeros<float>(n);
    run(f, {8}, {128}, 0, da, db, dc, s, n);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) {
      want[i] = std::fma(a[i], s, b[i]);  // libNVVM contracts by default (-fma=1)
    }
    conf::expect_equal(download<float>(dc, n), want, "a * s + b");
  }
}
