// SWCUDA_KERNELS plug-ins (each test case in a process of its own, set up by CMakeLists.txt).
#include <cstdlib>
#include <numeric>

#include "module_support.hpp"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

TEST_SUITE("env") {
  TEST_CASE("SWCUDA_KERNELS plug-ins register host functions at cuInit") {
    REQUIRE_MESSAGE(!env("SWCUDA_KERNELS").empty(), "run by CTest with SWCUDA_KERNELS set");
    swcu::test::ModuleTest t;  // cuInit loads the plug-in, which registers saxpy
    const CUmodule m = t.load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")));
    constexpr int n = 300;
    std::vector<float> x(n), y(n, 1.0f);
    std::iota(x.begin(), x.end(), 0.0f);
    CUdeviceptr dx = 0, dy = 0;
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemAlloc_v2(&dx, n * sizeof(float)));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemAlloc_v2(&dy, n * sizeof(float)));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemcpyHtoD_v2(dx, x.data(), n * sizeof(float)));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemcpyHtoD_v2(dy, y.data(), n * sizeof(float)));
    float a = 3.0f;
    int count = n;
    void* params[] = {&a, &dx, &dy, &count};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(t.function(m, "saxpy"), 3, 1, 1, 128,
                                                               1, 1, 0, nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemcpyDtoH_v2(y.data(), dy, n * sizeof(float)));
    for (int i = 0; i < n; ++i)
      REQUIRE(y[static_cast<std::size_t>(i)] == 3.0f * static_cast<float>(i) + 1.0f);
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(t.cu.cuMemFree_v2(dy));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  TEST_CASE("a failing SWCUDA_KERNELS plug-in makes cuInit fail and names it") {
    const std::string expected = env("SWCUDA_TEST_EXPECT");
    const std::string library = env("SWCUDA_TEST_LIBRARY");
    REQUIRE_MESSAGE(!expected.empty(), "run by CTest with SWCUDA_TEST_EXPECT set");
    const swcu::test::Api& cu = swcu::test::api();
    swcu::test::StderrCapture capture;
    const CUresult first = cu.cuInit(0);
    const CUresult second = cu.cuInit(0);
    const std::string text = capture.finish();
    INFO(text);
    CHECK(swcu::test::error_name(first) == expected);
    CHECK(swcu::test::error_name(second) == expected);
    CHECK(text.starts_with("swcuda: SWCUDA_KERNELS: "));
    CHECK(text.find(library) != std::string::npos);
    CHECK(text.find('\n') == text.size() - 1);  // one line, printed once
    int devices = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(&devices), CUDA_ERROR_NOT_INITIALIZED);
  }
}
