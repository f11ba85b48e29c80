// Test support: the software driver, loaded by full path and reached only through
// cuGetProcAddress_v2 and cuGetExportTable (the test binary does not link libcuda).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <doctest/doctest.h>
#include <swcuda/control.h>

#include <string>

namespace swcu::test {

/// cuGetProcAddress_v2 of the loaded driver (dlopen'ed once, never closed).
[[nodiscard]] PFN_cuGetProcAddress_v12000 get_proc_address();

/// The raw pointer for (base, version, flags); nullptr when the driver has none.
[[nodiscard]] void* lookup(const char* base, int version,
                           cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM);

/// A typed pointer; fails the test when the driver has none.
template <class F>
[[nodiscard]] F proc(const char* base, int version,
                     cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM) {
  void* const p = lookup(base, version, flags);
  REQUIRE_MESSAGE(p != nullptr, std::string(base), " at ", version);
  return reinterpret_cast<F>(p);
}

/// The exported name of a function pointer (dladdr), or "" when it names none.
[[nodiscard]] std::string exported_name(const void* function);

/// The driver's dlopen handle (for dlsym).
[[nodiscard]] void* library();

/// The control table; fails the test when the driver refuses its id.
[[nodiscard]] const swcu_control& control();

/// The functions the tests call, each at the version that gives the named export.
struct Api {
#define SWCU_TEST_API(member, base, version) PFN_##base##_v##version member = nullptr;
#include "api_functions.inc"
#undef SWCU_TEST_API
#define SWCU_TEST_API_PT(member, base, version, suffix) \
  PFN_##base##_v##version##_##suffix member = nullptr;
#include "api_functions_ptsz.inc"
#undef SWCU_TEST_API_PT
};

/// The resolved functions (resolved once); a member is NULL where the configured driver version
/// is too old for it.
[[nodiscard]] const Api& api();

/// An enum value outside the enumerators, to test how the driver refuses it.
template <class Enum>
[[nodiscard]] Enum invalid_enum(int value) {
  return static_cast<Enum>(value);
}

/// The name of a code, for messages ("CUDA_ERROR_INVALID_VALUE"); makes no driver call.
[[nodiscard]] std::string error_name(CUresult code);

/// A test that needs an initialized driver (the default configuration): cuInit(0) must succeed;
/// call counters and fault rules start empty. At the end the test must have left no live
/// handle and an empty context stack.
struct DriverTest {
  DriverTest();
  ~DriverTest();
  DriverTest(const DriverTest&) = delete;
  DriverTest& operator=(const DriverTest&) = delete;

  const Api& cu = api();
  const swcu_control& ctl = control();
};

/// Captures what the calling process writes to a file descriptor while alive.
class FdCapture {
 public:
  /// Flushes the C streams and starts capturing `fd` (1: stdout, 2: stderr).
  explicit FdCapture(int fd);
  ~FdCapture();
  FdCapture(const FdCapture&) = delete;
  FdCapture& operator=(const FdCapture&) = delete;
  /// Stops capturing and returns the text.
  [[nodiscard]] std::string finish();

 private:
  int fd_;
  int saved_ = -1;
  int file_ = -1;
  std::string text_;
};

/// Captures what the calling process writes to stderr (fd 2) while alive.
struct StderrCapture : FdCapture {
  StderrCapture() : FdCapture(2) {}
};

/// Captures what the calling process writes to stdout (fd 1) while alive.
struct StdoutCapture : FdCapture {
  StdoutCapture() : FdCapture(1) {}
};

}  // namespace swcu::test

/// CHECK that a driver call returns `expected`, naming both codes on failure.
#define SWCU_TEST_CHECK_RESULT(call, expected) \
  CHECK_EQ(::swcu::test::error_name(call), ::swcu::test::error_name(expected))
#define SWCU_TEST_REQUIRE_SUCCESS(call) \
  REQUIRE_EQ(::swcu::test::error_name(call), ::swcu::test::error_name(CUDA_SUCCESS))
