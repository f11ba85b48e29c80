// cuGetErrorName and cuGetErrorString, against the table generated from cuda.h and libcudart.
#include <string>
#include <utility>
#include <vector>

#include "swdriver_test.hpp"

namespace {

struct Error {
  int value;
  const char* name;
  const char* message;
};

const std::vector<Error> kErrors = {
#define SWCU_ERROR(value, name, message) {value, #name, message},
#include "core/generated/errors.inc"
#undef SWCU_ERROR
};

}  // namespace

TEST_SUITE("errors") {
  TEST_CASE("cuGetErrorName and cuGetErrorString know every CUresult in cuda.h") {
    REQUIRE(kErrors.size() >= 100);
    const swcu::test::Api& cu = swcu::test::api();
    for (const Error& e : kErrors) {
      INFO(e.name);
      const char* name = nullptr;
      const char* text = nullptr;
      REQUIRE(cu.cuGetErrorName(static_cast<CUresult>(e.value), &name) == CUDA_SUCCESS);
      REQUIRE(cu.cuGetErrorString(static_cast<CUresult>(e.value), &text) == CUDA_SUCCESS);
      CHECK(std::string(name) == e.name);
      CHECK(std::string(text) == e.message);
      CHECK(!std::string(text).empty());
    }
  }

  // NVIDIA's driver answers cuGetErrorString with short messages, the same texts the runtime's
  // cudaGetErrorString gives for the runtime code of the same number (CUDA driver API reference,
  // cuGetErrorString: "a string containing the description of the error"; e.g. "invalid
  // argument" for CUDA_ERROR_INVALID_VALUE), not the header's doc comments.
  TEST_CASE("cuGetErrorString gives the real driver's short messages") {
    const std::vector<std::pair<CUresult, std::string>> known = {
        {CUDA_SUCCESS, "no error"},
        {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
        {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
        {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
        {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
        {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
        {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
        {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
        {CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"},
        {CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"},
        {CUDA_ERROR_FILE_NOT_FOUND, "file not found"},
        {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
        {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
        {CUDA_ERROR_NOT_READY, "device not ready"},
        {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
        {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
        {CUDA_ERROR_NOT_PERMITTED, "operation not permitted"},
        {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
        {CUDA_ERROR_UNKNOWN, "unknown error"},
    };
    for (const auto& [code, message] : known) {
      INFO(message);
      const char* text = nullptr;
      REQUIRE(swcu::test::api().cuGetErrorString(code, &text) == CUDA_SUCCESS);
      CHECK(std::string(text) == message);
    }
  }

  TEST_CASE("a code the runtime lacks reads as the words of its name") {
    const char* text = nullptr;
    REQUIRE(swcu::test::api().cuGetErrorString(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, &text) ==
            CUDA_SUCCESS);
    CHECK(std::string(text) == "context already current");
  }

  TEST_CASE("an unknown error code is CUDA_ERROR_INVALID_VALUE and yields NULL") {
    const swcu::test::Api& cu = swcu::test::api();
    const char* text = "untouched";
    CHECK(cu.cuGetErrorName(swcu::test::invalid_enum<CUresult>(12345), &text) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(text == nullptr);
    text = "untouched";
    CHECK(cu.cuGetErrorString(swcu::test::invalid_enum<CUresult>(-1), &text) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(text == nullptr);
  }

  TEST_CASE("a NULL output pointer is CUDA_ERROR_INVALID_VALUE") {
    CHECK(swcu::test::api().cuGetErrorName(CUDA_SUCCESS, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(swcu::test::api().cuGetErrorString(CUDA_SUCCESS, nullptr) == CUDA_ERROR_INVALID_VALUE);
  }
}
