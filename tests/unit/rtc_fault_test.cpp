// Failures of NVRTC inside rtc::program: a compile error, out-of-memory, and a sweep that fails
// every NVRTC call a program makes in turn. cuwrap::rtc calls NVRTC directly (no table to
// swap), so this file interposes the NVRTC functions cuwrap uses: the executable's definitions
// below take the place of libnvrtc's for cuwrap's calls, count programs created and destroyed,
// fail a chosen call, and otherwise call the real function (dlsym(RTLD_NEXT)).
//
// nvJitLink cannot be interposed the same way without naming its versioned symbols
// (__nvJitLinkCreate_13_0: the suffix changes with the toolkit), so the linker's failures are
// the real ones nvJitLink gives (an unknown option, an undefined function).
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cuwrap/rtc.hpp"

namespace rtc = cuwrap::rtc;

namespace {

// What the interposed NVRTC functions count, and the one call they fail.
struct nvrtc_calls {
  std::map<std::string, int> made;  // calls per function since the last reset()
  int created = 0;                  // programs nvrtcCreateProgram made
  int destroyed = 0;                // programs nvrtcDestroyProgram destroyed
  std::string fail_function;        // fail call number fail_call of this function...
  int fail_call = 0;
  nvrtcResult fail_with = NVRTC_SUCCESS;  // ...with this code, without calling NVRTC

  void reset() {
    made.clear();
    fail_function.clear();
    fail_call = 0;
  }
  [[nodiscard]] int live() const { return created - destroyed; }
  // Counts a call of `function`; returns the code to fail it with, if it is the chosen one.
  std::optional<nvrtcResult> enter(const char* function) {
    const int n = ++made[function];
    if (function == fail_function && n == fail_call) return fail_with;
    return std::nullopt;
  }
};

nvrtc_calls calls;

template <class F>
F real_function(const char* name) {
  void* const symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "rtc_fault_test: libnvrtc has no %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(symbol);  // NOLINT: dlsym's result is the function
}

}  // namespace

// The interposers. Each counts the call, fails it if chosen, else calls NVRTC.
#define CUWRAP_INTERPOSE_NVRTC(name, parameters, arguments)         \
  extern "C" nvrtcResult name parameters {                          \
    static const auto real = real_function<decltype(&name)>(#name); \
    if (const auto injected = calls.enter(#name)) return *injected; \
    return real arguments;                                          \
  }

extern "C" nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name,
                                          int numHeaders, const char* const* headers,
                                          const char* const* includeNames) {
  static const auto real = real_function<decltype(&nvrtcCreateProgram)>("nvrtcCreateProgram");
  if (const auto injected = calls.enter("nvrtcCreateProgram")) return *injected;
  const nvrtcResult r = real(prog, src, name, numHeaders, headers, includeNames);
  if (r == NVRTC_SUCCESS && *prog != nullptr) ++calls.created;
  return r;
}

extern "C" nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  static const auto real = real_function<decltype(&nvrtcDestroyProgram)>("nvrtcDestroyProgram");
  const bool had_program = prog != nullptr && *prog != nullptr;
  if (const auto injected = calls.enter("nvrtcDestroyProgram")) return *injected;
  const nvrtcResult r = real(prog);
  if (r == NVRTC_SUCCESS && had_program) ++calls.destroyed;
  return r;
}

CUWRAP_INTERPOSE_NVRTC(nvrtcAddNameExpression,
                       (nvrtcProgram prog, const char* const name_expression),
                       (prog, name_expression))
CUWRAP_INTERPOSE_NVRTC(nvrtcCompileProgram,
                       (nvrtcProgram prog, int numOptions, const char* const* options),
                       (prog, numOptions, options))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t* size), (prog, size))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetProgramLog, (nvrtcProgram prog, char* log), (prog, log))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetPTXSize, (nvrtcProgram prog, size_t* size), (prog, size))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetPTX, (nvrtcProgram prog, char* ptx), (prog, ptx))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetCUBINSize, (nvrtcProgram prog, size_t* size), (prog, size))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetCUBIN, (nvrtcProgram prog, char* cubin), (prog, cubin))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetLTOIRSize, (nvrtcProgram prog, size_t* size), (prog, size))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetLTOIR, (nvrtcProgram prog, char* ir), (prog, ir))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetLoweredName,
                       (nvrtcProgram prog, const char* const name_expression,
                        const char** lowered_name),
                       (prog, name_expression, lowered_name))

#undef CUWRAP_INTERPOSE_NVRTC

namespace {

constexpr std::string_view fill_source = R"(
#include "params.h"
template <class T> __global__ void fill(T* out, T value) { out[threadIdx.x] = value * SCALE; }
)";

// Creates, compiles and reads a program with a header and a name expression: every NVRTC call
// rtc::program makes.
void compile_fill() {
  rtc::program prog{fill_source, "fill.cu", {{"params.h", "#define SCALE 2"}}};
  prog.add_name_expression("fill<int>");
  const auto out = prog.compile({.arch = "sm_90"});
  REQUIRE(out.has_cubin());
  REQUIRE(out.lowered_name("fill<int>").starts_with("_Z"));
}

}  // namespace

TEST_SUITE("rtc") {
  TEST_CASE("the NVRTC interposers see cuwrap's calls and count programs") {
    calls.reset();
    const int live_before = calls.live();
    compile_fill();
    CHECK(calls.made["nvrtcCreateProgram"] == 1);
    CHECK(calls.made["nvrtcCompileProgram"] == 1);
    CHECK(calls.made["nvrtcGetLoweredName"] == 1);
    CHECK(calls.made["nvrtcDestroyProgram"] == 1);
    CHECK(calls.live() == live_before);
  }

  TEST_CASE("a compile error throws rtc_error with the log and destroys the program") {
    calls.reset();
    const int live_before = calls.live();
    {
      rtc::program prog{"__global__ void broken( { }", "broken.cu"};
      CHECK(calls.live() == live_before + 1);
      try {
        (void)prog.compile({.arch = "sm_90"});
        FAIL("a syntax error compiled");
      } catch (const cuwrap::rtc::rtc_error& e) {
        CHECK(e.code() == cuwrap::make_error_code(NVRTC_ERROR_COMPILATION));
        CHECK(e.log().find("broken.cu") != std::string::npos);
        CHECK(std::string{e.what()}.find("program broken.cu") != std::string::npos);
      }
    }
    CHECK(calls.live() == live_before);
  }

  TEST_CASE("NVRTC out of memory is cuwrap::errc::out_of_memory and leaves no program") {
    calls.reset();
    const int live_before = calls.live();
    calls.fail_function = "nvrtcCreateProgram";
    calls.fail_call = 1;
    calls.fail_with = NVRTC_ERROR_OUT_OF_MEMORY;
    try {
      rtc::program prog{fill_source, "fill.cu"};
      FAIL("the program was created");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::out_of_memory);
      CHECK(std::string{e.api()} == "nvrtcCreateProgram");
    }
    CHECK(calls.live() == live_before);
    calls.reset();
    // Out of memory while compiling: an rtc_error, and the program is destroyed with its owner.
    calls.fail_function = "nvrtcCompileProgram";
    calls.fail_call = 1;
    calls.fail_with = NVRTC_ERROR_OUT_OF_MEMORY;
    {
      rtc::program prog{fill_source, "fill.cu", {{"params.h", "#define SCALE 2"}}};
      CHECK_THROWS_AS((void)prog.compile({.arch = "sm_90"}), cuwrap::rtc::rtc_error);
    }
    CHECK(calls.live() == live_before);
    calls.reset();
  }

  TEST_CASE("fault sweep: every NVRTC call of a program fails in turn") {
    calls.reset();
    const int live_before = calls.live();
    compile_fill();
    const auto baseline = calls.made;
    REQUIRE(calls.live() == live_before);
    int points = 0;
    for (const auto& [function, count] : baseline) {
      if (function == "nvrtcDestroyProgram") continue;  // a destructor's: reported, not thrown
      for (int n = 1; n <= count; ++n) {
        CAPTURE(function);
        CAPTURE(n);
        calls.reset();
        calls.fail_function = function;
        calls.fail_call = n;
        calls.fail_with = NVRTC_ERROR_OUT_OF_MEMORY;
        std::string outcome = "no exception";
        bool right_code = false;
        try {
          compile_fill();
        } catch (const cuwrap::error& e) {
          right_code = e.code() == cuwrap::make_error_code(NVRTC_ERROR_OUT_OF_MEMORY);
          outcome = e.what();
        }
        CHECK_MESSAGE(right_code, "failing ", function, " call ", n, " gave: ", outcome);
        CHECK_MESSAGE(calls.live() == live_before, "failing ", function, " left a program");
        ++points;
      }
    }
    calls.reset();
    CHECK(points >= 10);  // create, name expression, compile, log, 3 outputs, lowered name
  }

  TEST_CASE("a failed link throws rtc_error with nvJitLink's error log") {
    // Real nvJitLink failures: an unknown option at creation, an undefined function at link.
    CHECK_THROWS_AS((rtc::linker{{.arch = "sm_90", .extra = {"-no-such-option"}}}),
                    cuwrap::rtc::rtc_error);
    rtc::program prog{
        "extern __device__ float missing(float);\n"
        "extern \"C\" __global__ void use(float* x) { x[0] = missing(x[0]); }\n",
        "use.cu"};
    const auto compiled = prog.compile({.arch = "sm_90", .relocatable_device_code = true});
    rtc::linker lk{{.arch = "sm_90"}};
    lk.add(compiled);
    try {
      (void)lk.link();
      FAIL("an undefined function linked");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(e.code().category() == cuwrap::nvjitlink_category());
      CHECK_FALSE(e.log().empty());
      CHECK(e.log() == lk.error_log());
    }
  }
}
