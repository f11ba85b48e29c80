// NVRTC programs and the nvJitLink linker. They need no driver and no GPU, so these tests run
// in the unit lane for real.
#include "cuwrap/rtc.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rtc = cuwrap::rtc;

namespace {

constexpr std::string_view saxpy_source = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
)";

bool is_elf(std::span<const std::byte> image) {
  constexpr unsigned char magic[] = {0x7f, 'E', 'L', 'F'};
  return image.size() > sizeof magic &&
         std::equal(std::begin(magic), std::end(magic), image.begin(),
                    [](unsigned char m, std::byte b) { return std::byte{m} == b; });
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Two halves of a separately compiled program: a kernel and the device function it calls.
constexpr std::string_view caller_source = R"(
extern __device__ float twice(float v);
extern "C" __global__ void apply(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
)";
constexpr std::string_view callee_source = R"(
__device__ float twice(float v) { return 2.0f * v; }
)";

rtc::compiled_program lto(std::string_view source, std::string_view name) {
  rtc::program prog{source, name};
  return prog.compile({.arch = "sm_90", .relocatable_device_code = true, .lto = true});
}

// Checks that `operation` on a moved-from compiled_program throws cuwrap::usage_error naming
// `name` and the line of the check (the operations below are one line each).
template <class F>
void check_moved_from_output(const std::string& name, F&& operation,
                             std::source_location test = std::source_location::current()) {
  CAPTURE(name);
  const std::string_view path = test.file_name();
  const auto file = std::string{path.substr(path.rfind('/') + 1)};  // what() names the file only
  try {
    operation();
    FAIL("no cuwrap::usage_error");
  } catch (const cuwrap::usage_error& e) {
    CHECK(std::string{e.what()} == "cuwrap::rtc::compiled_program::" + name +
                                       ": this rtc::compiled_program was moved from (or "
                                       "released) at " +
                                       file + ":" + std::to_string(test.line()));
    CHECK(e.where().line() == test.line());
  }
}

}  // namespace

static_assert(!std::is_copy_constructible_v<rtc::program> &&
              !std::is_copy_assignable_v<rtc::program> &&
              std::is_nothrow_move_constructible_v<rtc::program>);
static_assert(!std::is_copy_constructible_v<rtc::linker> &&
              !std::is_copy_assignable_v<rtc::linker> &&
              std::is_nothrow_move_constructible_v<rtc::linker>);
static_assert(std::is_base_of_v<cuwrap::error, cuwrap::rtc::rtc_error>);
static_assert(std::is_nothrow_copy_constructible_v<cuwrap::rtc::rtc_error>);

TEST_SUITE("rtc") {
  TEST_CASE("SAXPY compiles to PTX with a visible saxpy entry") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    const auto out = prog.compile({.arch = "compute_90"});
    CHECK(contains(out.ptx(), ".visible .entry saxpy"));
    CHECK(contains(out.ptx(), ".target sm_90"));
    CHECK(out.ptx().back() != '\0');
    CHECK(out.name() == "saxpy.cu");
    CHECK(out.arch() == "compute_90");
    CHECK(out.log().empty());
    CHECK_FALSE(out.has_cubin());
    CHECK_FALSE(out.has_lto_ir());
  }

  TEST_CASE("compiling for sm_90 gives a cubin that starts with the ELF magic") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    const auto out = prog.compile({.arch = "sm_90"});
    REQUIRE(out.has_cubin());
    CHECK(is_elf(out.cubin()));
    CHECK(out.has_ptx());
  }

  TEST_CASE("a syntax error throws rtc_error whose log names the error line") {
    rtc::program prog{"__global__ void broken(int* p) {\n  int x = 1\n  *p = x;\n}\n", "broken.cu"};
    try {
      (void)prog.compile();
      FAIL("compile() did not throw");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(contains(e.log(), "broken.cu(3): error"));
      CHECK(e.code() == cuwrap::make_error_code(NVRTC_ERROR_COMPILATION));
      CHECK(e.code() == cuwrap::errc::compilation_failed);
      CHECK(std::string_view{e.api()} == "nvrtcCompileProgram");
      const std::string_view what = e.what();
      CHECK(contains(what, "nvrtcCompileProgram(program broken.cu)"));
      CHECK(contains(what, "NVRTC_ERROR_COMPILATION"));
      CHECK(contains(what, "rtc_test.cpp"));
      CHECK(contains(what, "\nbroken.cu(3): error"));
    }
  }

  TEST_CASE("an unknown option throws rtc_error naming the option") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    CHECK_THROWS_WITH_AS((void)prog.compile({"-no-such-option"}),
                         doctest::Contains("-no-such-option"), cuwrap::rtc::rtc_error);
  }

  TEST_CASE("template kernels with name expressions give mangled names that appear in the PTX") {
    rtc::program prog{"template <class T> __global__ void fill(T* p, T v) { p[threadIdx.x] = v; }",
                      "fill.cu"};
    prog.add_name_expression("fill<int>");
    prog.add_name_expression("fill<float>");
    const auto out = prog.compile({.arch = "compute_90"});
    const auto& as_int = out.lowered_name("fill<int>");
    const auto& as_float = out.lowered_name("fill<float>");
    CHECK(as_int.starts_with("_Z"));
    CHECK(as_int != as_float);
    CHECK(contains(out.ptx(), ".entry " + as_int));
    CHECK(contains(out.ptx(), ".entry " + as_float));
    REQUIRE(out.lowered_names().size() == 2);
    CHECK(out.lowered_names()[0].first == "fill<int>");
  }

  TEST_CASE("the lowered name of an expression that was not added names the expression") {
    rtc::program prog{"template <class T> __global__ void fill(T* p) { *p = T{}; }", "fill.cu"};
    prog.add_name_expression("fill<int>");
    const auto out = prog.compile();
    CHECK_THROWS_WITH_AS((void)out.lowered_name("fill<double>"),
                         doctest::Contains("\"fill<double>\" in program fill.cu: not added"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)out.lowered_name("fill<double>"),
                         doctest::Contains("added: \"fill<int>\""), cuwrap::error);
  }

  TEST_CASE("adding a name expression after compiling throws") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    (void)prog.compile();
    try {
      prog.add_name_expression("saxpy");
      FAIL("add_name_expression() did not throw");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::make_error_code(NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION));
      CHECK(contains(e.what(), "\"saxpy\" in program saxpy.cu"));
    }
  }

  TEST_CASE("headers passed by name are found by #include") {
    constexpr std::string_view source = R"(
#include "scale.h"
#include <limits.cuh>
extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= factor * limit; }
)";
    rtc::program prog{source,
                      "scale.cu",
                      {{"scale.h", "constexpr float factor = 3.0f;"},
                       {"limits.cuh", "constexpr float limit = 5.0f;"}}};
    CHECK(contains(prog.compile().ptx(), ".visible .entry scale"));

    rtc::program missing{source, "scale.cu"};
    CHECK_THROWS_WITH_AS((void)missing.compile(), doctest::Contains("scale.h"),
                         cuwrap::rtc::rtc_error);

    const std::vector<rtc::header> headers{{"scale.h", "constexpr float factor = 3.0f;"},
                                           {"limits.cuh", "constexpr float limit = 5.0f;"}};
    rtc::program from_vector{source, "scale.cu", headers};
    CHECK(from_vector.compile().has_ptx());
  }

  TEST_CASE("asking for a cubin after compiling for a virtual architecture names the problem") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    const auto out = prog.compile({.arch = "compute_90"});
    CHECK_THROWS_WITH_AS((void)out.cubin(),
                         doctest::Contains("compiled for compute_90, a virtual architecture"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)out.lto_ir(), doctest::Contains("compile with -dlto"),
                         cuwrap::error);
    rtc::program default_prog{saxpy_source, "saxpy.cu"};
    const auto default_arch = default_prog.compile();
    CHECK_THROWS_WITH_AS((void)default_arch.cubin(),
                         doctest::Contains("NVRTC's default architecture"), cuwrap::error);
  }

  TEST_CASE("typed options become NVRTC flags") {
    const rtc::compile_options options{.arch = "sm_90",
                                       .standard = "c++17",
                                       .generate_line_info = true,
                                       .generate_debug_info = true,
                                       .relocatable_device_code = true,
                                       .lto = true,
                                       .defines = {"N=4", "FAST"},
                                       .include_paths = {"/opt/include"},
                                       .extra = {"--use_fast_math"}};
    CHECK(options.to_strings() == std::vector<std::string>{"-arch=sm_90", "-std=c++17", "-lineinfo",
                                                           "-G", "-rdc=true", "-dlto", "-DN=4",
                                                           "-DFAST", "-I/opt/include",
                                                           "--use_fast_math"});
    CHECK(rtc::compile_options{}.to_strings().empty());
  }

  TEST_CASE("defines and the language standard reach the compiler") {
    constexpr std::string_view source = R"(
#if __cplusplus < 201703L || SCALE != 3
#error "needs -std=c++17 and -DSCALE=3"
#endif
extern "C" __global__ void k(int* p) { if constexpr (SCALE == 3) { *p = SCALE; } }
)";
    rtc::program prog{source, "defines.cu"};
    CHECK_THROWS_WITH_AS((void)prog.compile({.standard = "c++17"}),
                         doctest::Contains("needs -std=c++17"), cuwrap::rtc::rtc_error);
    // A failed compilation may be retried with other options.
    CHECK(prog.compile({.standard = "c++17", .defines = {"SCALE=3"}}).has_ptx());
  }

  TEST_CASE("flags given as strings work like typed options") {
    rtc::program a{saxpy_source, "saxpy.cu"};
    const auto from_list = a.compile({"-arch=sm_90", "-std=c++17"});
    CHECK(from_list.arch() == "sm_90");
    CHECK(is_elf(from_list.cubin()));
    rtc::program b{saxpy_source, "saxpy.cu"};
    const std::vector<std::string> flags{"--gpu-architecture", "compute_90"};
    const auto from_vector = b.compile(flags);
    CHECK(from_vector.arch() == "compute_90");
    CHECK_FALSE(from_vector.has_cubin());
    rtc::program c{saxpy_source, "saxpy.cu"};
    CHECK(c.compile({}).arch().empty());
  }

  TEST_CASE("a program compiles once, because NVRTC would mix two compilations' outputs") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    CHECK(prog.compile({.arch = "sm_90"}).has_cubin());
    CHECK_THROWS_WITH_AS((void)prog.compile({.arch = "compute_90"}),
                         doctest::Contains("program saxpy.cu was already compiled"), cuwrap::error);
  }

  TEST_CASE("compiling with -dlto gives LTO-IR and no PTX or cubin") {
    const auto out = lto(callee_source, "callee.cu");
    CHECK(out.has_lto_ir());
    CHECK_FALSE(out.lto_ir().empty());
    CHECK_FALSE(out.has_ptx());
    CHECK_FALSE(out.has_cubin());
    CHECK_THROWS_WITH_AS((void)out.ptx(), doctest::Contains("with -dlto to LTO-IR"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)out.cubin(), doctest::Contains("link the LTO-IR"), cuwrap::error);
  }

  TEST_CASE("two LTO-IR programs link into a cubin for sm_90") {
    const auto caller = lto(caller_source, "caller.cu");
    const auto callee = lto(callee_source, "callee.cu");
    rtc::linker lk{{.arch = "sm_90", .lto = true, .optimization_level = 3}};
    lk.add(caller);
    lk.add(rtc::input_type::lto_ir, callee.lto_ir(), "callee.cu");
    const auto cubin = lk.link();
    CHECK(is_elf(cubin));
    CHECK(lk.error_log().empty());
  }

  TEST_CASE("an undefined external function makes the link throw rtc_error with the log") {
    const auto caller = lto(caller_source, "caller.cu");
    rtc::linker lk{"-arch=sm_90", "-lto"};
    lk.add(caller);
    try {
      (void)lk.link();
      FAIL("link() did not throw");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(contains(e.log(), "Unresolved extern function"));
      CHECK(contains(e.log(), "twice"));
      CHECK(e.code() == cuwrap::errc::compilation_failed);
      CHECK(contains(e.what(), "nvJitLinkComplete(linking caller.cu)"));
      CHECK(contains(e.what(), "\nptxas fatal"));
    }
    CHECK(contains(lk.log(), "Unresolved extern function"));
  }

  TEST_CASE("PTX links into a cubin") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    const auto out = prog.compile({.arch = "compute_90"});

    rtc::linker from_text{{.arch = "sm_90"}};
    from_text.add(rtc::input_type::ptx, std::string_view{out.ptx()}, "saxpy.ptx");
    CHECK(is_elf(from_text.link()));

    rtc::linker from_program{{.arch = "sm_90"}};
    from_program.add(out);
    CHECK(is_elf(from_program.link()));
  }

  TEST_CASE("input of the wrong type throws rtc_error with nvJitLink's error log") {
    rtc::linker lk{{.arch = "sm_90"}};
    try {
      lk.add(rtc::input_type::ptx, std::string_view{"this is not PTX"}, "junk.ptx");
      FAIL("add() did not throw");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(contains(e.what(), "nvJitLinkAddData(PTX junk.ptx)"));
      CHECK(contains(e.log(), "does not match type"));
    }
    const auto callee = lto(callee_source, "callee.cu");
    CHECK_THROWS_WITH_AS(lk.add(callee), doctest::Contains("without LTO enabled (-lto)"),
                         cuwrap::rtc::rtc_error);
  }

  TEST_CASE("a linker without an arch or with an unknown option throws rtc_error") {
    CHECK_THROWS_WITH_AS(rtc::linker{rtc::link_options{}},
                         doctest::Contains("nvJitLinkCreate(options none): missing arch"),
                         cuwrap::rtc::rtc_error);
    try {
      rtc::linker lk{"-arch=sm_90", "-no-such-option"};
      FAIL("the linker was created");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(e.code() == cuwrap::make_error_code(NVJITLINK_ERROR_UNRECOGNIZED_OPTION));
      CHECK(contains(e.log(), "-no-such-option"));
      CHECK(contains(e.what(), "nvJitLinkCreate(options -arch=sm_90 -no-such-option)"));
    }
  }

  TEST_CASE("typed link options become nvJitLink flags") {
    const rtc::link_options options{.arch = "sm_90",
                                    .lto = true,
                                    .optimization_level = 3,
                                    .generate_debug_info = true,
                                    .generate_line_info = true,
                                    .max_registers = 64,
                                    .extra = {"-verbose"}};
    CHECK(options.to_strings() == std::vector<std::string>{"-arch=sm_90", "-lto", "-O3", "-g",
                                                           "-lineinfo", "-maxrregcount=64",
                                                           "-verbose"});
  }

  TEST_CASE("moved-from programs and linkers are empty and adopt takes ownership") {
    rtc::program a{saxpy_source, "saxpy.cu"};
    a.add_name_expression("saxpy");
    const auto handle = a.get();
    rtc::program b{std::move(a)};
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
    CHECK(b.get() == handle);
    CHECK(b.name() == "saxpy.cu");
    rtc::program c{"__global__ void other() {}", "other.cu"};
    c = std::move(b);
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(c.get() == handle);
    CHECK(c.compile().lowered_name("saxpy") == "saxpy");
    auto adopted = rtc::program::adopt(c.release(), "adopted.cu");
    CHECK(c.empty());
    CHECK(adopted.get() == handle);

    rtc::linker l1{{.arch = "sm_90"}};
    const auto link_handle = l1.get();
    rtc::linker l2{std::move(l1)};
    CHECK(l1.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(l2.get() == link_handle);
    rtc::linker l3{{.arch = "sm_90"}};
    l3 = std::move(l2);
    CHECK(l2.empty());  // NOLINT(bugprone-use-after-move)
    auto adopted_linker = rtc::linker::adopt(l3.release());
    CHECK(adopted_linker.get() == link_handle);
    CHECK(l3.empty());
  }

  TEST_CASE("every accessor of a moved-from compiled_program throws usage_error") {
    rtc::program prog{saxpy_source, "saxpy.cu"};
    prog.add_name_expression("saxpy");
    rtc::compiled_program a = prog.compile({.arch = "sm_90"});
    const rtc::compiled_program b{std::move(a)};
    // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is what is tested
    CHECK(a.moved_from());
    CHECK_FALSE(b.moved_from());
    CHECK(b.has_ptx());
    CHECK(b.has_cubin());
    CHECK_FALSE(a.has_ptx());
    CHECK_FALSE(a.has_cubin());
    CHECK_FALSE(a.has_lto_ir());
    check_moved_from_output("name", [&] { (void)a.name(); });
    check_moved_from_output("arch", [&] { (void)a.arch(); });
    check_moved_from_output("log", [&] { (void)a.log(); });
    check_moved_from_output("ptx", [&] { (void)a.ptx(); });
    check_moved_from_output("cubin", [&] { (void)a.cubin(); });
    check_moved_from_output("lto_ir", [&] { (void)a.lto_ir(); });
    check_moved_from_output("lowered_name", [&] { (void)a.lowered_name("saxpy"); });
    check_moved_from_output("lowered_names", [&] { (void)a.lowered_names(); });
    // A copy of a moved-from one holds nothing either; assigning a whole one makes it whole.
    const rtc::compiled_program copy = a;
    CHECK(copy.moved_from());
    rtc::compiled_program c = b;
    rtc::compiled_program d{std::move(c)};
    c = d;
    CHECK_FALSE(c.moved_from());
    CHECK(c.ptx() == b.ptx());
    CHECK(c.lowered_name("saxpy") == "saxpy");
    auto& same = d;
    d = std::move(same);  // a self-move keeps the value
    CHECK_FALSE(d.moved_from());
    // The linker refuses it as an argument, naming it, before nvJitLink sees it.
    rtc::linker lk{{.arch = "sm_90"}};
    CHECK_THROWS_WITH_AS(
        lk.add(a),
        doctest::Contains("cuwrap::rtc::linker::add: the compiled_program was moved from"),
        cuwrap::usage_error);
    // NOLINTEND(bugprone-use-after-move)
  }

  TEST_CASE("compiled programs are values that outlive their program") {
    rtc::compiled_program copy = [] {
      rtc::program prog{saxpy_source, "saxpy.cu"};
      return prog.compile({.arch = "sm_90"});
    }();
    const auto again = copy;
    CHECK(again.ptx() == copy.ptx());
    CHECK(is_elf(again.cubin()));
  }

  TEST_CASE("NVRTC and nvJitLink report their versions and architectures") {
    const auto nvrtc = rtc::nvrtc_version();
    const auto jitlink = rtc::nvjitlink_version();
    CHECK(nvrtc >= rtc::version{12, 0});
    CHECK(jitlink >= rtc::version{12, 0});
    const auto archs = rtc::supported_archs();
    CHECK(std::find(archs.begin(), archs.end(), 90) != archs.end());
    CHECK(rtc::real_arch({9, 0}) == "sm_90");
    CHECK(rtc::virtual_arch({8, 6}) == "compute_86");
  }

  TEST_CASE("NVRTC and nvJitLink statuses are error codes that check() throws") {
    CHECK(cuwrap::make_error_code(NVRTC_ERROR_COMPILATION).category() == cuwrap::nvrtc_category());
    CHECK(cuwrap::make_error_code(NVJITLINK_ERROR_PTX_COMPILE) == cuwrap::errc::compilation_failed);
    CHECK_NOTHROW(cuwrap::check(NVRTC_SUCCESS, "nvrtcVersion"));
    CHECK_NOTHROW(cuwrap::check(NVJITLINK_SUCCESS, "nvJitLinkVersion"));
    CHECK_THROWS_AS(cuwrap::check(NVRTC_ERROR_OUT_OF_MEMORY, "nvrtcCompileProgram"),
                    cuwrap::out_of_memory);
    CHECK_THROWS_WITH_AS(
        cuwrap::check(NVJITLINK_ERROR_MISSING_ARCH, "nvJitLinkCreate"),
        doctest::Contains("nvJitLinkCreate: missing arch (NVJITLINK_ERROR_MISSING_ARCH)"),
        cuwrap::error);
  }

  TEST_CASE("an rtc_error quotes only the first lines of a long log") {
    std::string log;
    for (int line = 1; line <= 25; ++line) {
      log += "line " + std::to_string(line) + "\n";
    }
    const cuwrap::rtc::rtc_error e{cuwrap::make_error_code(NVRTC_ERROR_COMPILATION),
                                   "nvrtcCompileProgram",
                                   "program long.cu",
                                   log,
                                   {}};
    const std::string_view what = e.what();
    CHECK(what.starts_with(
        "nvrtcCompileProgram(program long.cu): compilation (NVRTC_ERROR_COMPILATION)\nline 1\n"));
    CHECK(contains(what, "\nline 10\n"));
    CHECK_FALSE(contains(what, "line 11"));
    CHECK(what.ends_with("[15 more lines in log()]"));
    const auto copy = e;
    CHECK(&copy.log() == &e.log());
    CHECK(e.log() == log);
  }
}
