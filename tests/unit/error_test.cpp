#include "cuwrap/error.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

namespace {

std::string what_of(CUresult r, const char* api = "cuMemAlloc") {
  try {
    cuwrap::check(r, api);
  } catch (const cuwrap::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("error") {
  TEST_CASE("driver codes have names and descriptions without any driver") {
    const auto code = cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(std::string{code.category().name()} == "cuda_driver");
    CHECK(code.message() == "out of memory (CUDA_ERROR_OUT_OF_MEMORY)");
    CHECK(cuwrap::error_name(code) == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(cuwrap::make_error_code(CUDA_ERROR_STUB_LIBRARY).message() ==
          "stub library (CUDA_ERROR_STUB_LIBRARY)");
  }

  TEST_CASE("an unknown driver code still gets a message") {
    const std::error_code code{123456, cuwrap::driver_category()};
    CHECK(code.message() == "CUresult 123456");
    CHECK(cuwrap::error_name(code).empty());
  }

  TEST_CASE("runtime, NVRTC and nvJitLink codes have their own categories") {
    const std::error_code runtime{2, cuwrap::runtime_category()};
    CHECK(runtime.message() == "memory allocation (cudaErrorMemoryAllocation)");
    const std::error_code nvrtc{6, cuwrap::nvrtc_category()};
    CHECK(nvrtc.message() == "compilation (NVRTC_ERROR_COMPILATION)");
    const std::error_code jitlink{4, cuwrap::nvjitlink_category()};
    CHECK(jitlink.message() == "PTX compile (NVJITLINK_ERROR_PTX_COMPILE)");
    CHECK(runtime != cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY));
  }

  TEST_CASE("driver and runtime out-of-memory both compare equal to errc::out_of_memory") {
    CHECK(cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY) == cuwrap::errc::out_of_memory);
    CHECK(std::error_code{2, cuwrap::runtime_category()} == cuwrap::errc::out_of_memory);
    CHECK(std::error_code{1, cuwrap::nvrtc_category()} == cuwrap::errc::out_of_memory);
    CHECK(cuwrap::make_error_code(CUDA_ERROR_INVALID_VALUE) != cuwrap::errc::out_of_memory);
  }

  TEST_CASE("codes that share a number but not a meaning map to different conditions") {
    // 201 is CUDA_ERROR_INVALID_CONTEXT in the driver and cudaErrorDeviceUninitialized in the
    // runtime; 4 is CUDA_ERROR_DEINITIALIZED but cudaErrorCudartUnloading.
    CHECK(cuwrap::make_error_code(CUDA_ERROR_INVALID_CONTEXT) == cuwrap::errc::invalid_context);
    CHECK(cuwrap::make_error_code(CUDA_ERROR_NO_DEVICE) == cuwrap::errc::no_device);
    CHECK(cuwrap::make_error_code(CUDA_ERROR_NOT_READY) == cuwrap::errc::not_ready);
    CHECK(cuwrap::make_error_code(CUDA_ERROR_STUB_LIBRARY) == cuwrap::errc::driver_unavailable);
    CHECK(std::error_code{6, cuwrap::nvrtc_category()} == cuwrap::errc::compilation_failed);
    CHECK(cuwrap::make_error_code(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) ==
          cuwrap::errc::stream_capture);
  }

  TEST_CASE("illegal address and launch failure are sticky, out of memory is not") {
    CHECK(cuwrap::is_sticky(cuwrap::make_error_code(CUDA_ERROR_ILLEGAL_ADDRESS)));
    CHECK(cuwrap::is_sticky(cuwrap::make_error_code(CUDA_ERROR_LAUNCH_FAILED)));
    CHECK(cuwrap::is_sticky(std::error_code{700, cuwrap::runtime_category()}));
    CHECK_FALSE(cuwrap::is_sticky(cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY)));
    CHECK_FALSE(cuwrap::is_sticky(std::error_code{700, cuwrap::nvrtc_category()}));
    CHECK(cuwrap::make_error_code(CUDA_ERROR_ILLEGAL_ADDRESS) == cuwrap::errc::launch_failure);
  }

  TEST_CASE("check() does nothing on success") { CHECK_NOTHROW(cuwrap::check(CUDA_SUCCESS, "x")); }

  TEST_CASE("check() throws an error naming the API, the code and the call site") {
    const int line = __LINE__ + 2;
    try {
      cuwrap::check(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate");
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_INVALID_VALUE));
      CHECK(std::strcmp(e.api(), "cuStreamCreate") == 0);
      CHECK(e.where().line() == line);
      CHECK(std::string{e.what()} ==
            "cuStreamCreate: invalid value (CUDA_ERROR_INVALID_VALUE) at "
            "error_test.cpp:" +
                std::to_string(line));
      CHECK_FALSE(e.sticky());
    }
  }

  TEST_CASE("details go between the API name and the description") {
    try {
      cuwrap::detail::throw_error(cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY), "cuMemAlloc",
                                  "1099511627776 bytes on device 0", {});
    } catch (const cuwrap::error& e) {
      CHECK(
          std::string{e.what()} ==
          "cuMemAlloc(1099511627776 bytes on device 0): out of memory (CUDA_ERROR_OUT_OF_MEMORY)");
    }
  }

  TEST_CASE("out-of-memory errors are thrown as cuwrap::out_of_memory") {
    CHECK_THROWS_AS(cuwrap::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc"), cuwrap::out_of_memory);
    CHECK_THROWS_AS(cuwrap::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc"), cuwrap::error);
    CHECK(what_of(CUDA_ERROR_INVALID_VALUE).starts_with("cuMemAlloc: invalid value"));
  }

  TEST_CASE("check_ready() maps not-ready to false and throws for other failures") {
    CHECK(cuwrap::check_ready(CUDA_SUCCESS, "cuStreamQuery"));
    CHECK_FALSE(cuwrap::check_ready(CUDA_ERROR_NOT_READY, "cuStreamQuery"));
    CHECK_THROWS_AS((void)cuwrap::check_ready(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamQuery"),
                    cuwrap::error);
  }

  TEST_CASE("copying an error keeps its message and never throws") {
    static_assert(std::is_nothrow_copy_constructible_v<cuwrap::error>);
    try {
      cuwrap::check(CUDA_ERROR_INVALID_HANDLE, "cuEventQuery");
    } catch (const cuwrap::error& e) {
      const cuwrap::error copy = e;
      CHECK(std::string{copy.what()} == e.what());
      CHECK(std::strcmp(copy.api(), "cuEventQuery") == 0);
    }
  }
}

namespace {
std::error_code last_code;
const char* last_api = nullptr;
void record(std::error_code code, const char* api) noexcept {
  last_code = code;
  last_api = api;
}
}  // namespace

TEST_SUITE("error") {
  TEST_CASE("check_nothrow reports failures to the installed handler and ignores deinitialized") {
    const auto previous = cuwrap::set_nothrow_error_handler(&record);
    last_api = nullptr;
    cuwrap::check_nothrow(CUDA_SUCCESS, "cuStreamDestroy");
    cuwrap::check_nothrow(CUDA_ERROR_DEINITIALIZED, "cuStreamDestroy");
    CHECK(last_api == nullptr);
    cuwrap::check_nothrow(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy");
    CHECK(last_api != nullptr);
    CHECK(last_code == cuwrap::make_error_code(CUDA_ERROR_INVALID_HANDLE));
    const bool restored_ours = cuwrap::set_nothrow_error_handler(previous) == &record;
    CHECK(restored_ours);
  }
}
