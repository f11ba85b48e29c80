// The JIT linker (swdriver/src/module/link.cpp): cuLink* merge PTX inputs into one PTX module,
// which cuModuleLoadData loads; LTO-IR goes through nvJitLink; SASS-only inputs are refused.
#include <cstring>
#include <string>
#include <vector>

#include "module_support.hpp"

namespace {

using swcu::test::mod;

// A kernel that calls an external device function, and the input that defines it. Both have
// an internal global named $str (as nvcc's string literals are), which the merge renames.
const std::string kCaller = R"(
.version 8.0
.target sm_80
.address_size 64

.extern .func  (.param .b32 func_retval0) link_twice
(
	.param .b32 link_twice_param_0
)
;
.global .align 1 .b8 $str[3] = {65, 66};

.visible .entry link_add(
	.param .u64 link_add_param_0
)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [link_add_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r2, [%rd4];
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r2;
	.param .b32 retval0;
	call.uni (retval0), link_twice, (param0);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 0
	add.s32 	%r3, %r3, 1;
	st.global.u32 	[%rd4], %r3;
	ret;
}
)";

const std::string kCallee = R"(
.version 9.0
.target sm_90
.address_size 64

.global .align 1 .b8 $str[3] = {67, 68};

.visible .func  (.param .b32 func_retval0) link_twice(
	.param .b32 link_twice_param_0
)
{
	.reg .b32 	%r<3>;

	ld.param.u32 	%r1, [link_twice_param_0];
	shl.b32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
)";

// Defines the function the LTO-IR kernel (kernels/link_lto.cu) calls: x + 7.
const std::string kOffset = R"(
.version 9.0
.target sm_90
.address_size 64

.visible .func  (.param .b32 func_retval0) link_offset(
	.param .b32 link_offset_param_0
)
{
	.reg .b32 	%r<3>;

	ld.param.u32 	%r1, [link_offset_param_0];
	add.s32 	%r2, %r1, 7;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
)";

// A kernel calling vprintf, a driver built-in that stays unresolved.
const std::string kPrinter = R"(
.version 9.0
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[4] = {104, 105, 10};

.visible .entry link_print()
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;

	mov.u64 	%rd1, $str;
	cvta.global.u64 	%rd2, %rd1;
	{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	ld.param.b32 	%r1, [retval0+0];
	} // callseq 0
	ret;
}
)";

// A link state with 4 KiB info and error logs.
struct Link {
  Link() {
    options = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
               CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    values = {info, reinterpret_cast<void*>(std::uintptr_t{sizeof info}), error,
              reinterpret_cast<void*>(std::uintptr_t{sizeof error})};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuLinkCreate_v2(
        static_cast<unsigned>(options.size()), options.data(), values.data(), &state));
  }
  ~Link() {
    if (state != nullptr) swcu::test::api().cuLinkDestroy(state);
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  CUresult add(CUjitInputType type, const std::string& bytes, const char* name) {
    return swcu::test::api().cuLinkAddData_v2(
        state, type, const_cast<char*>(bytes.c_str()),
        type == CU_JIT_INPUT_PTX ? bytes.size() + 1 : bytes.size(), name, 0, nullptr, nullptr);
  }
  CUresult complete() { return swcu::test::api().cuLinkComplete(state, &image, &size); }
  [[nodiscard]] std::string text() const { return static_cast<const char*>(image); }
  [[nodiscard]] std::size_t error_size() const {
    return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(values[3]));
  }

  CUlinkState state = nullptr;
  std::vector<CUjit_option> options;
  std::vector<void*> values;
  char info[4096] = {};
  char error[4096] = {};
  void* image = nullptr;
  std::size_t size = 0;
};

// Runs `f` on one block of data.size() threads over a copy of `data` (parameters: the device
// pointer, then the element count, for kernels that take it); returns the data afterwards.
std::vector<int> run(CUfunction f, std::vector<int> data) {
  const swcu::test::Api& cu = swcu::test::api();
  CUdeviceptr d = 0;
  const std::size_t bytes = data.size() * sizeof(int);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, bytes));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(d, data.data(), bytes));
  int n = static_cast<int>(data.size());
  void* params[] = {&d, &n};
  SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, static_cast<unsigned>(data.size()), 1, 1,
                                              0, nullptr, params, nullptr),
                         CUDA_SUCCESS);
  SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_SUCCESS);
  SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(data.data(), d, bytes), CUDA_SUCCESS);
  SWCU_TEST_CHECK_RESULT(cu.cuMemFree_v2(d), CUDA_SUCCESS);
  return data;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE("link") {
  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "two PTX inputs link into one loadable PTX module") {
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCaller, "caller.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, "callee.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    REQUIRE(link.image != nullptr);
    const std::string text = link.text();
    CHECK_EQ(link.size, text.size() + 1);
    // One header: the newest version and target.
    CHECK_EQ(count(text, ".version"), 1u);
    CHECK_NE(text.find(".version 9.0"), std::string::npos);
    CHECK_NE(text.find(".target sm_90"), std::string::npos);
    CHECK_EQ(count(text, ".address_size"), 1u);
    // The declaration came before the definition: it became a prototype.
    CHECK_EQ(text.find(".extern .func"), std::string::npos);
    CHECK_NE(text.find(".visible .func  (.param .b32 func_retval0) link_twice\n"),
             std::string::npos);
    CHECK_NE(std::string(link.info).find("linked 2 PTX input(s)"), std::string::npos);
    CHECK_EQ(std::string(link.error), "");

    const CUmodule m = load(text);
    const CUfunction f = function(m, "link_add");
    CHECK_EQ(layout(f), std::vector<std::pair<std::size_t, std::size_t>>{{0, 8}});
    // The caller's kernel runs the callee's function: 2 * x + 1.
    CHECK_EQ(run(f, {1, 2, 3, 40}), std::vector<int>{3, 5, 7, 81});
    // Each input's internal $str was renamed apart.
    CUdeviceptr p = 0;
    std::size_t bytes = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "$str$swlink0"), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "$str$swlink1"), CUDA_SUCCESS);
    CHECK_EQ(bytes, 3u);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "$str"), CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "a definition before its extern declaration drops it") {
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCaller, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const std::string text = link.text();
    // The definition only (the later extern declaration was dropped).
    CHECK_EQ(count(text, ".func  (.param .b32 func_retval0) link_twice"), 1u);
    CHECK_NE(text.find("// ---- input: input 1"), std::string::npos);  // default names
    const CUmodule m = load(text);
    (void)function(m, "link_add");
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "internal functions of two inputs are kept apart") {
    // Each input has its own internal (static) helper and a kernel that calls it.
    const auto input = [](const std::string& kernel, int add) {
      return ".version 9.0\n.target sm_90\n.address_size 64\n"
             ".func (.param .b32 r) helper(.param .b32 x)\n{\n.reg .b32 %r<3>;\n"
             "ld.param.b32 %r1, [x];\nadd.s32 %r2, %r1, " +
             std::to_string(add) +
             ";\nst.param.b32 [r], %r2;\nret;\n}\n"
             ".visible .entry " +
             kernel +
             "(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n"
             "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n"
             "{\n.param .b32 a;\nst.param.b32 [a], %r1;\n.param .b32 b;\n"
             "call.uni (b), helper, (a);\nld.param.b32 %r2, [b];\n}\n"
             "st.global.u32 [%rd1], %r2;\nret;\n}\n";
    };
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, input("first", 1), "first.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, input("second", 2), "second.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const std::string text = link.text();
    CHECK_EQ(count(text, "helper$swlink0"), 2u);  // definition and call
    CHECK_EQ(count(text, "helper$swlink1"), 2u);
    CHECK_EQ(count(text, "helper,"), 0u);
    const CUmodule m = load(text);
    CHECK_EQ(names(m), std::vector<std::string>{"first", "second"});
    CHECK_EQ(run(function(m, "first"), {10}), std::vector<int>{11});
    CHECK_EQ(run(function(m, "second"), {10}), std::vector<int>{12});
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "debug file numbers of each input are kept apart") {
    // Line information (nvcc -lineinfo): each input numbers its files from 1.
    const auto input = [](const std::string& kernel, const std::string& file) {
      return ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry " + kernel +
             "()\n{\n\t.loc\t1 3 5\n\tret;\n}\n.file\t1 \"" + file + "\"\n";
    };
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, input("first", "a.cu"), "a.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, input("second", "b.cu"), "b.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const std::string text = link.text();
    CHECK_NE(text.find(".file\t1 \"a.cu\""), std::string::npos);
    CHECK_NE(text.find(".file\t1001 \"b.cu\""), std::string::npos);
    CHECK_NE(text.find(".loc\t1 3 5"), std::string::npos);
    CHECK_NE(text.find(".loc\t1001 3 5"), std::string::npos);
    const CUmodule m = load(text);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "a .visible definition wins over a .weak one") {
    std::string weak = kCallee;
    weak.replace(weak.find(".visible .func"), 8, ".weak");
    weak.replace(weak.find("$str"), 4, "$weak");
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, weak, "weak.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCaller, "caller.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, "callee.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const std::string text = link.text();
    CHECK_EQ(text.find(".weak"), std::string::npos);
    CHECK_EQ(count(text, "link_twice("), 1u);  // the .visible definition only
    const CUmodule m = load(text);
    CHECK_EQ(run(function(m, "link_add"), {5}), std::vector<int>{11});
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "the built-in vprintf may stay unresolved") {
    Link link;
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kPrinter, "printer.ptx"));
    std::string second = kPrinter;
    second.replace(second.find("link_print"), 10, "link_print2");
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, second, "printer2.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const std::string text = link.text();
    CHECK_EQ(count(text, ".extern .func  (.param .b32 func_retval0) vprintf"), 1u);
    const CUmodule m = load(text);
    (void)function(m, "link_print");
    (void)function(m, "link_print2");
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "a fatbin input gives its PTX and an ELF-only one is refused") {
    Link link;
    const std::string fatbin = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.fatbin"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_FATBINARY, fatbin, "sw_kernels.fatbin"));
    SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, "callee.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(link.complete());
    const CUmodule m = load(link.text());
    (void)function(m, "saxpy");
    (void)function(m, "calls_device_function");
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    Link sass;
    const std::string sm80 =
        swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels_sm80.fatbin"));
    SWCU_TEST_CHECK_RESULT(sass.add(CU_JIT_INPUT_FATBINARY, sm80, "sm80.fatbin"),
                           CUDA_ERROR_INVALID_IMAGE);
    const std::string error = sass.error;
    CHECK_NE(error.find("sm80.fatbin: the fatbin holds only SASS"), std::string::npos);
    CHECK_NE(error.find("the software driver runs PTX"), std::string::npos);
    CHECK_EQ(sass.error_size(), error.size());
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "cubins and SASS-only objects are refused with a reason") {
    Link link;
    const std::string cubin = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.cubin"));
    SWCU_TEST_CHECK_RESULT(link.add(CU_JIT_INPUT_CUBIN, cubin, "k.cubin"),
                           CUDA_ERROR_INVALID_IMAGE);
    CHECK_NE(std::string(link.error).find("k.cubin: a cubin is SASS"), std::string::npos);
    SWCU_TEST_CHECK_RESULT(link.add(CU_JIT_INPUT_OBJECT, cubin, "k.o"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_NE(std::string(link.error).find("k.o: no device code"), std::string::npos);
    // The error log accumulates: both lines are there.
    CHECK_NE(std::string(link.error).find("k.cubin"), std::string::npos);
    // Nothing was added: completing is an error.
    SWCU_TEST_CHECK_RESULT(link.complete(), CUDA_ERROR_INVALID_VALUE);
    CHECK_NE(std::string(link.error).find("nothing to link"), std::string::npos);
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "unresolved and duplicate symbols fail the link") {
    {
      Link link;
      SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCaller, "caller.ptx"));
      SWCU_TEST_CHECK_RESULT(link.complete(), CUDA_ERROR_INVALID_IMAGE);
      CHECK_NE(std::string(link.error).find("undefined reference to 'link_twice' in 'caller.ptx'"),
               std::string::npos);
      CHECK_EQ(link.image, nullptr);
    }
    {
      Link link;
      SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, "a.ptx"));
      SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kCallee, "b.ptx"));
      SWCU_TEST_CHECK_RESULT(link.complete(), CUDA_ERROR_INVALID_IMAGE);
      CHECK_NE(std::string(link.error)
                   .find("duplicate definition of 'link_twice' in 'a.ptx' and "
                         "'b.ptx'"),
               std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "bad input and bad calls get the documented codes") {
    CUlinkState state = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuLinkCreate_v2(0, nullptr, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkCreate_v2(1, nullptr, nullptr, &state),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLinkCreate_v2(0, nullptr, nullptr, &state));
    char ptx[] = "not PTX at all";
    SWCU_TEST_CHECK_RESULT(
        cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, nullptr, 4, "x", 0, nullptr, nullptr),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkAddData_v2(state, swcu::test::invalid_enum<CUjitInputType>(42),
                                               ptx, sizeof ptx, "x", 0, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, ptx, sizeof ptx, "x", 0, nullptr, nullptr),
        CUDA_ERROR_INVALID_PTX);
    // Per-input options may not name a log buffer.
    CUjit_option option = CU_JIT_ERROR_LOG_BUFFER;
    char buffer[16];
    void* value = buffer;
    std::string callee = kCallee;
    SWCU_TEST_CHECK_RESULT(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, callee.data(),
                                               callee.size() + 1, "x", 1, &option, &value),
                           CUDA_ERROR_INVALID_VALUE);
    option = CU_JIT_MAX_REGISTERS;
    value = reinterpret_cast<void*>(std::uintptr_t{32});
    SWCU_TEST_CHECK_RESULT(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, callee.data(),
                                               callee.size() + 1, "x", 1, &option, &value),
                           CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(
        cu.cuLinkAddFile_v2(state, CU_JIT_INPUT_PTX, "/no/such/file.ptx", 0, nullptr, nullptr),
        CUDA_ERROR_FILE_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(
        cu.cuLinkAddFile_v2(state, CU_JIT_INPUT_PTX, nullptr, 0, nullptr, nullptr),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkComplete(state, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    void* image = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLinkComplete(state, &image, nullptr));  // the size is optional
    void* again = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLinkComplete(state, &again, nullptr));
    CHECK_EQ(again, image);
    // Adding after completion is refused.
    SWCU_TEST_CHECK_RESULT(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, callee.data(),
                                               callee.size() + 1, "late", 0, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(ctl.live_handles(SWCU_LINK_STATE), 1u);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLinkDestroy(state));
    CHECK_EQ(ctl.live_handles(SWCU_LINK_STATE), 0u);
    // A destroyed or foreign handle.
    SWCU_TEST_CHECK_RESULT(cu.cuLinkDestroy(state), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkComplete(state, &image, nullptr), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, callee.data(),
                                               callee.size() + 1, "x", 0, nullptr, nullptr),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuLinkDestroy(reinterpret_cast<CUlinkState>(ptx)),
                           CUDA_ERROR_INVALID_HANDLE);
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "a PTX file links through cuLinkAddFile and the 5.5 ABI") {
    const auto create = swcu::test::proc<PFN_cuLinkCreate_v6050>("cuLinkCreate", 5050);
    const auto add_file = swcu::test::proc<PFN_cuLinkAddFile_v6050>("cuLinkAddFile", 5050);
    CHECK_EQ(swcu::test::exported_name(reinterpret_cast<const void*>(create)), "cuLinkCreate");
    CHECK_EQ(swcu::test::exported_name(reinterpret_cast<const void*>(add_file)), "cuLinkAddFile");
    CUlinkState state = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(create(0, nullptr, nullptr, &state));
    const std::string path = swcu::test::kernel_file("sw_kernels.ptx");
    SWCU_TEST_CHECK_RESULT(add_file(state, CU_JIT_INPUT_PTX, path.c_str(), 0, nullptr, nullptr),
                           CUDA_SUCCESS);
    void* image = nullptr;
    SWCU_TEST_CHECK_RESULT(swcu::test::api().cuLinkComplete(state, &image, nullptr), CUDA_SUCCESS);
    if (image != nullptr) {
      const CUmodule m = load(static_cast<const char*>(image));
      (void)function(m, "saxpy");
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    }
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuLinkDestroy(state));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "LTO-IR inputs become PTX through nvJitLink") {
    // The fatbin and link_lto_only.o hold only LTO-IR; link_lto.o also has PTX, taken as is.
    for (const char* file : {"link_lto.fatbin", "link_lto.o", "link_lto_only.o"}) {
      CAPTURE(file);
      Link link;
      const std::string lto = swcu::test::read_bytes(swcu::test::kernel_file(file));
      const CUjitInputType type =
          std::string(file).ends_with(".o") ? CU_JIT_INPUT_OBJECT : CU_JIT_INPUT_NVVM;
      SWCU_TEST_REQUIRE_SUCCESS(link.add(type, lto, file));
      SWCU_TEST_REQUIRE_SUCCESS(link.add(CU_JIT_INPUT_PTX, kOffset, "offset.ptx"));
      SWCU_TEST_REQUIRE_SUCCESS(link.complete());
      const CUmodule m = load(link.text());
      const CUfunction f = function(m, "link_lto_kernel");
      CHECK_EQ(layout(f), std::vector<std::pair<std::size_t, std::size_t>>{{0, 8}, {8, 4}});
      CHECK_EQ(run(f, {0, 1, -7, 10}), std::vector<int>{21, 24, 0, 51});  // (x + 7) * 3
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    }
  }

  TEST_CASE("cuLinkCreate needs a current context") {
    swcu::test::DriverTest t;
    CUlinkState state = nullptr;
    SWCU_TEST_CHECK_RESULT(t.cu.cuLinkCreate_v2(0, nullptr, nullptr, &state),
                           CUDA_ERROR_INVALID_CONTEXT);
  }
}

TEST_SUITE("env") {
  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "link: without nvJitLink an LTO-IR input is not supported") {
    Link link;
    const std::string lto = swcu::test::read_bytes(swcu::test::kernel_file("link_lto.fatbin"));
    SWCU_TEST_CHECK_RESULT(link.add(CU_JIT_INPUT_NVVM, lto, "lto.fatbin"),
                           CUDA_ERROR_NOT_SUPPORTED);
    const std::string error = link.error;
    CHECK_NE(error.find("lto.fatbin: LTO-IR needs nvJitLink"), std::string::npos);
    CHECK_NE(error.find("/nonexistent/libnvJitLink.so"), std::string::npos);
  }
}
