// Failures of NVRTC inside rtc::program and of nvJitLink inside rtc::linker: compile and link
// errors, out-of-memory, and sweeps that fail every call a program or a link makes in turn.
// cuwrap::rtc calls both libraries directly (no table to swap), so this file interposes the
// functions cuwrap uses: the executable's definitions below take the place of the libraries'
// for cuwrap's calls, count handles created and destroyed, fail a chosen call, and otherwise
// call the real function (dlsym(RTLD_NEXT)). nvJitLink.h's functions are static inline
// wrappers of versioned symbols (__nvJitLinkCreate_13_0); the build passes the suffix of the
// toolkit's header as CUWRAP_NVJITLINK_SUFFIX.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include "cuwrap/rtc.hpp"

namespace rtc = cuwrap::rtc;

namespace {

// What the interposed functions of one library count, and the one call they fail.
template <class Result>
struct library_calls {
  std::map<std::string, int> made;  // calls per function since the last reset()
  int created = 0;                  // handles the create function made
  int destroyed = 0;                // handles the destroy function destroyed
  std::string fail_function;        // fail call number fail_call of this function...
  int fail_call = 0;
  Result fail_with{};  // ...with this code, without calling the library

  void reset() {
    made.clear();
    fail_function.clear();
    fail_call = 0;
  }
  [[nodiscard]] int live() const { return created - destroyed; }
  // Counts a call of `function`; returns the code to fail it with, if it is the chosen one.
  std::optional<Result> enter(const char* function) {
    const int n = ++made[function];
    if (function == fail_function && n == fail_call) return fail_with;
    return std::nullopt;
  }
};

library_calls<nvrtcResult> calls;           // NVRTC's
library_calls<nvJitLinkResult> link_calls;  // nvJitLink's

template <class F>
F real_function(const char* name) {
  void* const symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "rtc_fault_test: no library defines %s\n", name);
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
CUWRAP_INTERPOSE_NVRTC(nvrtcVersion, (int* major, int* minor), (major, minor))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetNumSupportedArchs, (int* count), (count))
CUWRAP_INTERPOSE_NVRTC(nvrtcGetSupportedArchs, (int* archs), (archs))

#undef CUWRAP_INTERPOSE_NVRTC

// nvJitLink's exported name for `name`: __nvJitLinkCreate_13_0 for Create.
#define CUWRAP_NVJITLINK_CAT2(a, b) a##b
#define CUWRAP_NVJITLINK_CAT(a, b) CUWRAP_NVJITLINK_CAT2(a, b)
#define CUWRAP_NVJITLINK_SYMBOL(name) \
  CUWRAP_NVJITLINK_CAT(__nvJitLink##name##_, CUWRAP_NVJITLINK_SUFFIX)
#define CUWRAP_STRING2(x) #x
#define CUWRAP_STRING(x) CUWRAP_STRING2(x)

extern "C" nvJitLinkResult CUWRAP_NVJITLINK_SYMBOL(Create)(nvJitLinkHandle* handle,
                                                           uint32_t numOptions,
                                                           const char* const* options) {
  static const auto real = real_function<decltype(&CUWRAP_NVJITLINK_SYMBOL(Create))>(
      CUWRAP_STRING(CUWRAP_NVJITLINK_SYMBOL(Create)));
  if (const auto injected = link_calls.enter("nvJitLinkCreate")) return *injected;
  const nvJitLinkResult r = real(handle, numOptions, options);
  if (*handle != nullptr) ++link_calls.created;  // a failed create can leave a handle
  return r;
}

extern "C" nvJitLinkResult CUWRAP_NVJITLINK_SYMBOL(Destroy)(nvJitLinkHandle* handle) {
  static const auto real = real_function<decltype(&CUWRAP_NVJITLINK_SYMBOL(Destroy))>(
      CUWRAP_STRING(CUWRAP_NVJITLINK_SYMBOL(Destroy)));
  const bool had_handle = handle != nullptr && *handle != nullptr;
  if (const auto injected = link_calls.enter("nvJitLinkDestroy")) return *injected;
  const nvJitLinkResult r = real(handle);
  if (r == NVJITLINK_SUCCESS && had_handle) ++link_calls.destroyed;
  return r;
}

// Not instrumented: on its error paths libnvJitLink formats a string from a stale stack address
// (vsnprintf reads inside this caller's frame), which AddressSanitizer reports as a
// use-after-scope of this function's `injected` when the function is instrumented.
#define CUWRAP_INTERPOSE_NVJITLINK(name, parameters, arguments)                                    \
  extern "C" __attribute__((no_sanitize("address"))) nvJitLinkResult CUWRAP_NVJITLINK_SYMBOL(name) \
      parameters {                                                                                 \
    static const auto real = real_function<decltype(&CUWRAP_NVJITLINK_SYMBOL(name))>(              \
        CUWRAP_STRING(CUWRAP_NVJITLINK_SYMBOL(name)));                                             \
    if (const auto injected = link_calls.enter("nvJitLink" #name)) return *injected;               \
    return real arguments;                                                                         \
  }

CUWRAP_INTERPOSE_NVJITLINK(AddData,
                           (nvJitLinkHandle handle, nvJitLinkInputType inputType, const void* data,
                            size_t size, const char* name),
                           (handle, inputType, data, size, name))
CUWRAP_INTERPOSE_NVJITLINK(AddFile,
                           (nvJitLinkHandle handle, nvJitLinkInputType inputType,
                            const char* fileName),
                           (handle, inputType, fileName))
CUWRAP_INTERPOSE_NVJITLINK(Complete, (nvJitLinkHandle handle), (handle))
CUWRAP_INTERPOSE_NVJITLINK(GetLinkedCubinSize, (nvJitLinkHandle handle, size_t* size),
                           (handle, size))
CUWRAP_INTERPOSE_NVJITLINK(GetLinkedCubin, (nvJitLinkHandle handle, void* cubin), (handle, cubin))
CUWRAP_INTERPOSE_NVJITLINK(GetErrorLogSize, (nvJitLinkHandle handle, size_t* size), (handle, size))
CUWRAP_INTERPOSE_NVJITLINK(GetErrorLog, (nvJitLinkHandle handle, char* log), (handle, log))
CUWRAP_INTERPOSE_NVJITLINK(GetInfoLogSize, (nvJitLinkHandle handle, size_t* size), (handle, size))
CUWRAP_INTERPOSE_NVJITLINK(GetInfoLog, (nvJitLinkHandle handle, char* log), (handle, log))

#undef CUWRAP_INTERPOSE_NVJITLINK

// nvJitLinkVersion is a plain export, not a versioned inline wrapper.
extern "C" nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
  static const auto real = real_function<decltype(&nvJitLinkVersion)>("nvJitLinkVersion");
  if (const auto injected = link_calls.enter("nvJitLinkVersion")) return *injected;
  return real(major, minor);
}

namespace {

constexpr std::string_view fill_source = R"(
#include "params.h"
template <class T> __global__ void fill(T* out, T value) { out[threadIdx.x] = value * SCALE; }
)";

constexpr std::string_view use_source =
    "extern __device__ float twice(float);\n"
    "extern \"C\" __global__ void use(float* x) { x[0] = twice(x[0]); }\n";
constexpr std::string_view twice_source = "__device__ float twice(float v) { return 2 * v; }\n";

// Links two relocatable programs (one as PTX, one as a cubin) and reads the logs: every
// nvJitLink call rtc::linker makes.
void link_twice() {
  rtc::program use{use_source, "use.cu"};
  const auto used = use.compile({.arch = "compute_90", .relocatable_device_code = true});
  rtc::program twice{twice_source, "twice.cu"};
  const auto defined = twice.compile({.arch = "sm_90", .relocatable_device_code = true});
  rtc::linker lk{{.arch = "sm_90"}};
  lk.add(rtc::input_type::ptx, std::string_view{used.ptx()}, "use.ptx");
  lk.add(defined);
  const auto cubin = lk.link();
  REQUIRE(cubin.size() > 64);
  (void)lk.log();
}

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

  TEST_CASE("the nvJitLink interposers see cuwrap's calls and count handles") {
    link_calls.reset();
    const int live_before = link_calls.live();
    link_twice();
    CHECK(link_calls.made["nvJitLinkCreate"] == 1);
    CHECK(link_calls.made["nvJitLinkAddData"] == 2);
    CHECK(link_calls.made["nvJitLinkComplete"] == 1);
    CHECK(link_calls.made["nvJitLinkGetLinkedCubin"] == 1);
    CHECK(link_calls.made["nvJitLinkDestroy"] == 1);
    CHECK(link_calls.live() == live_before);
    link_calls.reset();
  }

  TEST_CASE("fault sweep: every nvJitLink call of a link fails in turn") {
    // nvJitLink has no out-of-memory code: it reports a failed allocation as an internal error.
    link_calls.reset();
    const int live_before = link_calls.live();
    link_twice();
    const auto baseline = link_calls.made;
    REQUIRE(link_calls.live() == live_before);
    int points = 0;
    for (const auto& [function, count] : baseline) {
      // A destructor's call is reported, not thrown; a log that cannot be read is left out of
      // the error (and out of log()), never a failure of its own.
      if (function == "nvJitLinkDestroy" || function.find("Log") != std::string::npos) continue;
      for (int n = 1; n <= count; ++n) {
        CAPTURE(function);
        CAPTURE(n);
        link_calls.reset();
        link_calls.fail_function = function;
        link_calls.fail_call = n;
        link_calls.fail_with = NVJITLINK_ERROR_INTERNAL;
        std::string outcome = "no exception";
        bool right_error = false;
        try {
          link_twice();
        } catch (const cuwrap::error& e) {
          right_error = e.code() == cuwrap::make_error_code(NVJITLINK_ERROR_INTERNAL) &&
                        std::string{e.api()} == function;
          outcome = e.what();
        }
        CHECK_MESSAGE(right_error, "failing ", function, " call ", n, " gave: ", outcome);
        CHECK_MESSAGE(link_calls.live() == live_before, "failing ", function, " left a handle");
        ++points;
      }
    }
    link_calls.reset();
    CHECK(points >= 6);  // create, two inputs, complete, cubin size, cubin
  }

  TEST_CASE("a log nvJitLink cannot give is left out, and the error still says what failed") {
    rtc::program use{use_source, "use.cu"};
    // A cubin, as in the test below: nvJitLink's own error path for PTX input trips ASan
    // inside libnvJitLink (a vsnprintf on its stack), which is not cuwrap's to fix.
    const auto used = use.compile({.arch = "sm_90", .relocatable_device_code = true});
    rtc::linker lk{{.arch = "sm_90"}};
    lk.add(used);  // twice() undefined
    link_calls.reset();
    link_calls.fail_function = "nvJitLinkGetErrorLogSize";
    link_calls.fail_call = 1;
    link_calls.fail_with = NVJITLINK_ERROR_INTERNAL;
    try {
      (void)lk.link();
      FAIL("an undefined function linked");
    } catch (const cuwrap::rtc::rtc_error& e) {
      CHECK(std::string{e.api()} == "nvJitLinkComplete");
      CHECK(e.log().empty());
      CHECK(std::string{e.what()}.find("use.cu") != std::string::npos);
    }
    link_calls.reset();
    CHECK_FALSE(lk.error_log().empty());  // the log itself is still there
  }

  TEST_CASE("a moved-from program or linker throws usage_error, never terminates") {
    rtc::program prog{twice_source, "twice.cu"};
    auto kept = std::move(prog);
    CHECK_THROWS_WITH_AS((void)prog.compile({.arch = "sm_90"}),
                         doctest::Contains("rtc::program::compile: this rtc::program was moved"),
                         cuwrap::usage_error);
    CHECK_THROWS_AS(prog.add_name_expression("twice"), cuwrap::usage_error);
    rtc::linker lk{{.arch = "sm_90"}};
    auto kept_linker = std::move(lk);
    CHECK_THROWS_WITH_AS((void)lk.link(),
                         doctest::Contains("rtc::linker::link: this rtc::linker was moved"),
                         cuwrap::usage_error);
    CHECK_THROWS_AS(lk.add(rtc::input_type::ptx, std::string_view{".version 9.0"}, "x.ptx"),
                    cuwrap::usage_error);
    CHECK_THROWS_AS(lk.add_file(rtc::input_type::object, "x.o"), cuwrap::usage_error);
  }

  TEST_CASE("failed version and architecture queries report the caller's line") {
    const auto check_here = [](const char* function, auto query, auto& library, auto code,
                               std::source_location site) {
      CAPTURE(function);
      library.reset();
      library.fail_function = function;
      library.fail_call = 1;
      library.fail_with = code;
      try {
        query(site);
        FAIL("the query did not throw");
      } catch (const cuwrap::error& e) {
        CHECK(std::string{e.api()} == function);
        CHECK(std::string{e.where().file_name()} == __FILE__);
        CHECK(e.where().line() == site.line());
      }
      library.reset();
    };
    using std::source_location;
    check_here(
        "nvrtcVersion", [](source_location w) { (void)rtc::nvrtc_version(w); }, calls,
        NVRTC_ERROR_INTERNAL_ERROR, source_location::current());
    check_here(
        "nvrtcGetNumSupportedArchs", [](source_location w) { (void)rtc::supported_archs(w); },
        calls, NVRTC_ERROR_INTERNAL_ERROR, source_location::current());
    check_here(
        "nvrtcGetSupportedArchs", [](source_location w) { (void)rtc::supported_archs(w); }, calls,
        NVRTC_ERROR_INTERNAL_ERROR, source_location::current());
    check_here(
        "nvJitLinkVersion", [](source_location w) { (void)rtc::nvjitlink_version(w); }, link_calls,
        NVJITLINK_ERROR_INTERNAL, source_location::current());
    // And without passing a location: the default is the caller's line.
    calls.fail_function = "nvrtcVersion";
    calls.fail_call = 1;
    calls.fail_with = NVRTC_ERROR_INTERNAL_ERROR;
    std::optional<cuwrap::error> caught;
    const unsigned line = __LINE__ + 2;
    try {
      (void)rtc::nvrtc_version();
    } catch (const cuwrap::error& e) {
      caught = e;
    }
    calls.reset();
    REQUIRE(caught.has_value());
    CHECK(caught->where().line() == line);
    CHECK(std::string{caught->where().file_name()} == __FILE__);
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
