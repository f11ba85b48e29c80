// Tool controls: cuProfilerStart/cuProfilerStop and the coredump attributes.
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "sched_support.hpp"

namespace {

using swcu::test::api;

using ProfilerFn = CUresult(CUDAAPI*)();

ProfilerFn profiler(const char* name) { return swcu::test::proc<ProfilerFn>(name, 4000); }

std::string host_pid() {
  char host[HOST_NAME_MAX + 1] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  return std::string(host) + "." + std::to_string(getpid());
}

using Getter = PFN_cuCoredumpGetAttribute_v12010;
using Setter = PFN_cuCoredumpSetAttribute_v12010;

bool get_bool(Getter get, CUcoredumpSettings a) {
  bool v = false;
  std::size_t size = sizeof v;
  REQUIRE(get(a, &v, &size) == CUDA_SUCCESS);
  return v;
}

void set_bool(Setter set, CUcoredumpSettings a, bool value) {
  std::size_t size = sizeof value;
  REQUIRE(set(a, &value, &size) == CUDA_SUCCESS);
}

std::string get_string(Getter get, CUcoredumpSettings a) {
  char buffer[1024] = {};
  std::size_t size = sizeof buffer;
  REQUIRE(get(a, buffer, &size) == CUDA_SUCCESS);
  return buffer;
}

}  // namespace

TEST_SUITE("tool controls") {
  // cudaProfiler.h: cuProfilerStart "Enables profile collection by the active profiling tool for
  // the current context. If profiling is already enabled, then cuProfilerStart() has no effect";
  // both return CUDA_SUCCESS or CUDA_ERROR_INVALID_CONTEXT.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the profiler controls need a current context") {
    const ProfilerFn start = profiler("cuProfilerStart");
    const ProfilerFn stop = profiler("cuProfilerStop");
    SWCU_TEST_CHECK_RESULT(start(), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(stop(), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = swcu::test::create_context();
    SWCU_TEST_CHECK_RESULT(start(), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(start(), CUDA_SUCCESS);  // already started: no effect, no error
    SWCU_TEST_CHECK_RESULT(stop(), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(stop(), CUDA_SUCCESS);
    CHECK(ctl.call_count("cuProfilerStart") == 3);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // cuda.h, cuCoredumpGetAttribute(Global) and cuCoredumpSetAttribute(Global): the attributes,
  // their types and defaults, "If the caller calls this function with *value equal to NULL, the
  // size of the memory region (in bytes) expected for attrib will be placed in size".
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "coredump attributes are stored and read back") {
    const Getter get_global = cu.cuCoredumpGetAttributeGlobal;
    const Setter set_global = cu.cuCoredumpSetAttributeGlobal;

    // The documented defaults.
    CHECK(get_bool(get_global, CU_COREDUMP_ENABLE_ON_EXCEPTION) == false);
    CHECK(get_bool(get_global, CU_COREDUMP_TRIGGER_HOST) == true);
    CHECK(get_bool(get_global, CU_COREDUMP_LIGHTWEIGHT) == false);
    CHECK(get_bool(get_global, CU_COREDUMP_ENABLE_USER_TRIGGER) == false);
    CHECK(get_string(get_global, CU_COREDUMP_FILE) == "core.cuda." + host_pid());
    CHECK(get_string(get_global, CU_COREDUMP_PIPE) == "corepipe.cuda." + host_pid());
    int flags = -1;
    std::size_t size = sizeof flags;
    SWCU_TEST_REQUIRE_SUCCESS(get_global(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
    CHECK(flags == CU_COREDUMP_DEFAULT_FLAGS);

    // The sizes expected.
    for (auto [a, expected] : {std::pair{CU_COREDUMP_ENABLE_ON_EXCEPTION, sizeof(bool)},
                               std::pair{CU_COREDUMP_FILE, std::size_t{1024}},
                               std::pair{CU_COREDUMP_GENERATION_FLAGS, sizeof(int)}}) {
      size = 0;
      SWCU_TEST_REQUIRE_SUCCESS(get_global(a, nullptr, &size));
      CHECK(size == expected);
      size = 0;
      SWCU_TEST_REQUIRE_SUCCESS(set_global(a, nullptr, &size));
      CHECK(size == expected);
    }

    // Set and read back, as cuda-python's test does (a string's size without its NUL).
    set_bool(set_global, CU_COREDUMP_TRIGGER_HOST, false);
    char file[] = "corefile";
    size = std::strlen(file);
    SWCU_TEST_REQUIRE_SUCCESS(set_global(CU_COREDUMP_FILE, file, &size));
    char pipe[] = "corepipe";
    size = sizeof pipe;
    SWCU_TEST_REQUIRE_SUCCESS(set_global(CU_COREDUMP_PIPE, pipe, &size));
    set_bool(set_global, CU_COREDUMP_LIGHTWEIGHT, true);
    flags = CU_COREDUMP_SKIP_ABORT | CU_COREDUMP_SKIP_SHARED_MEMORY;
    size = sizeof flags;
    SWCU_TEST_REQUIRE_SUCCESS(set_global(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
    CHECK(get_bool(get_global, CU_COREDUMP_TRIGGER_HOST) == false);
    CHECK(get_string(get_global, CU_COREDUMP_FILE) == "corefile");
    CHECK(get_string(get_global, CU_COREDUMP_PIPE) == "corepipe");
    CHECK(get_bool(get_global, CU_COREDUMP_LIGHTWEIGHT) == true);
    flags = 0;
    size = sizeof flags;
    SWCU_TEST_REQUIRE_SUCCESS(get_global(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
    CHECK(flags == (CU_COREDUMP_SKIP_ABORT | CU_COREDUMP_SKIP_SHARED_MEMORY));

    // Bad attributes, sizes and values.
    bool b = true;
    size = sizeof b;
    // Plain ints in the list: an enum object holding -3 would be undefined behaviour to load.
    for (const int value : {0, int{CU_COREDUMP_MAX}, -3}) {
      SWCU_TEST_CHECK_RESULT(
          get_global(swcu::test::invalid_enum<CUcoredumpSettings>(value), &b, &size),
          CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(
          set_global(swcu::test::invalid_enum<CUcoredumpSettings>(value), &b, &size),
          CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(get_global(CU_COREDUMP_LIGHTWEIGHT, &b, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    size = 0;
    SWCU_TEST_CHECK_RESULT(set_global(CU_COREDUMP_LIGHTWEIGHT, &b, &size),
                           CUDA_ERROR_INVALID_VALUE);
    char small[4] = {};
    size = sizeof small;  // "corefile" does not fit
    SWCU_TEST_CHECK_RESULT(get_global(CU_COREDUMP_FILE, small, &size), CUDA_ERROR_INVALID_VALUE);
    const std::string too_long(1024, 'x');
    size = too_long.size();
    SWCU_TEST_CHECK_RESULT(set_global(CU_COREDUMP_FILE, const_cast<char*>(too_long.data()), &size),
                           CUDA_ERROR_INVALID_VALUE);
    flags = 1 << 12;
    size = sizeof flags;
    SWCU_TEST_CHECK_RESULT(set_global(CU_COREDUMP_GENERATION_FLAGS, &flags, &size),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(get_string(get_global, CU_COREDUMP_FILE) == "corefile");  // unchanged by failures

    // Per context: no current context is CUDA_ERROR_INVALID_CONTEXT.
    size = sizeof b;
    SWCU_TEST_CHECK_RESULT(cu.cuCoredumpGetAttribute(CU_COREDUMP_LIGHTWEIGHT, &b, &size),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCoredumpSetAttribute(CU_COREDUMP_LIGHTWEIGHT, &b, &size),
                           CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = swcu::test::create_context();
    // A context reads the application's values until it sets its own.
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT) == true);
    set_bool(cu.cuCoredumpSetAttribute, CU_COREDUMP_LIGHTWEIGHT, false);
    set_bool(cu.cuCoredumpSetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION, true);
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT) == false);
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION) == true);
    CHECK(get_bool(get_global, CU_COREDUMP_LIGHTWEIGHT) == true);  // the application's stays
    CHECK(get_bool(get_global, CU_COREDUMP_ENABLE_ON_EXCEPTION) == false);
    // "CU_COREDUMP_ENABLE_USER_TRIGGER and CU_COREDUMP_PIPE cannot be set on a per-context basis"
    SWCU_TEST_CHECK_RESULT(cu.cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_USER_TRIGGER, &b, &size),
                           CUDA_ERROR_INVALID_VALUE);
    size = sizeof pipe;
    SWCU_TEST_CHECK_RESULT(cu.cuCoredumpSetAttribute(CU_COREDUMP_PIPE, pipe, &size),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(get_string(cu.cuCoredumpGetAttribute, CU_COREDUMP_PIPE) == "corepipe");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));

    // A context created with CU_CTX_COREDUMP_ENABLE dumps on exceptions by default; one created
    // with CU_CTX_USER_COREDUMP_ENABLE (which implies it) also takes user triggers.
    CUcontext flagged = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxCreate_v4(&flagged, nullptr, CU_CTX_USER_COREDUMP_ENABLE, 0));
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_ON_EXCEPTION) == true);
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_ENABLE_USER_TRIGGER) == true);
    CHECK(get_bool(cu.cuCoredumpGetAttribute, CU_COREDUMP_LIGHTWEIGHT) == true);  // a new one
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(flagged));

    // Back to the defaults for the rest of the process.
    set_bool(set_global, CU_COREDUMP_TRIGGER_HOST, true);
    set_bool(set_global, CU_COREDUMP_LIGHTWEIGHT, false);
    flags = CU_COREDUMP_DEFAULT_FLAGS;
    size = sizeof flags;
    SWCU_TEST_REQUIRE_SUCCESS(set_global(CU_COREDUMP_GENERATION_FLAGS, &flags, &size));
    for (auto [a, prefix] : {std::pair{CU_COREDUMP_FILE, "core.cuda."},
                             std::pair{CU_COREDUMP_PIPE, "corepipe.cuda."}}) {
      std::string value = prefix + host_pid();
      size = value.size() + 1;
      SWCU_TEST_REQUIRE_SUCCESS(set_global(a, value.data(), &size));
    }
  }
}
