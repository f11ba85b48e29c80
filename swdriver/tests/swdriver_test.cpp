#include "swdriver_test.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace swcu::test {
namespace {

void* load() {
  void* const handle = dlopen(SWDRIVER_TEST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "cannot load the software driver %s: %s\n", SWDRIVER_TEST_LIBRARY,
                 dlerror());
    std::abort();
  }
  return handle;
}

}  // namespace

void* library() {
  static void* const handle = load();
  return handle;
}

PFN_cuGetProcAddress_v12000 get_proc_address() {
  static const auto function =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library(), "cuGetProcAddress_v2"));
  REQUIRE((function != nullptr));
  return function;
}

void* lookup(const char* base, int version, cuuint64_t flags) {
  void* function = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult result = get_proc_address()(base, &function, version, flags, &status);
  if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) return nullptr;
  return function;
}

std::string exported_name(const void* function) {
  Dl_info info{};
  if (dladdr(function, &info) == 0 || info.dli_sname == nullptr) return "";
  if (info.dli_saddr != function) return "";  // inside some other function
  return info.dli_sname;
}

const swcu_control& control() {
  static const swcu_control* const table = [] {
    const void* t = nullptr;
    const auto get_table = proc<PFN_cuGetExportTable_v3000>("cuGetExportTable", 3000);
    REQUIRE(get_table(&t, &SWCU_CONTROL_TABLE_ID) == CUDA_SUCCESS);
    REQUIRE(t != nullptr);
    return static_cast<const swcu_control*>(t);
  }();
  return *table;
}

const Api& api() {
  static const Api functions = [] {
    Api a;
#define SWCU_TEST_API(member, base, version) \
  a.member = reinterpret_cast<PFN_##base##_v##version>(lookup(#base, version));
#include "api_functions.inc"
#undef SWCU_TEST_API
#define SWCU_TEST_API_PT(member, base, version, suffix)            \
  a.member = reinterpret_cast<PFN_##base##_v##version##_##suffix>( \
      lookup(#base, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
#include "api_functions_ptsz.inc"
#undef SWCU_TEST_API_PT
    return a;
  }();
  return functions;
}

std::string error_name(CUresult code) {
  // From the generated table rather than the driver, so that messages do not count as calls.
  switch (static_cast<int>(code)) {
#define SWCU_ERROR(value, name, description) \
  case value:                                \
    return #name;
#include "core/generated/errors.inc"
#undef SWCU_ERROR
  }
  return "unknown CUresult " + std::to_string(static_cast<int>(code));
}

DriverTest::DriverTest() {
  REQUIRE(cu.cuInit(0) == CUDA_SUCCESS);
  ctl.clear_fault_rules();
  ctl.reset_call_counts();
}

DriverTest::~DriverTest() {
  ctl.clear_fault_rules();
  CHECK_MESSAGE(ctl.live_handles_total() == 0, "the test leaked driver handles");
  CHECK_MESSAGE(ctl.context_stack_depth() == 0, "the test left contexts on the stack");
}

FdCapture::FdCapture(int fd) : fd_(fd) {
  std::fflush(nullptr);
  FILE* const file = std::tmpfile();
  REQUIRE(file != nullptr);
  file_ = dup(fileno(file));
  std::fclose(file);
  saved_ = dup(fd_);
  dup2(file_, fd_);
}

FdCapture::~FdCapture() {
  if (saved_ >= 0) static_cast<void>(finish());
}

std::string FdCapture::finish() {
  if (saved_ < 0) return text_;
  std::fflush(nullptr);
  dup2(saved_, fd_);
  close(saved_);
  saved_ = -1;
  lseek(file_, 0, SEEK_SET);
  char buffer[4096];
  for (ssize_t n; (n = read(file_, buffer, sizeof buffer)) > 0;) {
    text_.append(buffer, static_cast<std::size_t>(n));
  }
  close(file_);
  return text_;
}

}  // namespace swcu::test
