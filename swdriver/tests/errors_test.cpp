// cuGetErrorName and cuGetErrorString, against the table generated from cuda.h.
#include <string>
#include <vector>

#include "swdriver_test.hpp"

namespace {

struct Error {
  int value;
  const char* name;
  const char* description;
};

const std::vector<Error> kErrors = {
#define SWCU_ERROR(value, name, description) {value, #name, description},
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
      CHECK(std::string(text) == e.description);
      CHECK(!std::string(text).empty());
    }
  }

  TEST_CASE("error descriptions come from the cuda.h doc comments") {
    const char* text = nullptr;
    REQUIRE(swcu::test::api().cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text) == CUDA_SUCCESS);
    CHECK(std::string(text).find("not within an acceptable range of values") != std::string::npos);
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
