// Helpers for the module, library, launch and occupancy tests: the driver functions they call
// (resolved like swcu::test::api()), the test kernels nvcc built, and small builders.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sched_support.hpp"
#include "swdriver_test.hpp"

namespace swcu::test {

// X(member, base name, version): the functions of ModuleApi, each at the version that gives the
// export the member is named after.
#define SWCU_TEST_MODULE_FUNCTIONS(X)                                                           \
  X(cuModuleLoad, cuModuleLoad, 2000)                                                           \
  X(cuModuleLoadData, cuModuleLoadData, 2000)                                                   \
  X(cuModuleLoadDataEx, cuModuleLoadDataEx, 2010)                                               \
  X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, 2000)                                         \
  X(cuModuleUnload, cuModuleUnload, 2000)                                                       \
  X(cuModuleGetFunction, cuModuleGetFunction, 2000)                                             \
  X(cuModuleGetFunctionCount, cuModuleGetFunctionCount, 12040)                                  \
  X(cuModuleEnumerateFunctions, cuModuleEnumerateFunctions, 12040)                              \
  X(cuModuleGetGlobal, cuModuleGetGlobal, 3020)                                                 \
  X(cuModuleGetLoadingMode, cuModuleGetLoadingMode, 11070)                                      \
  X(cuFuncGetAttribute, cuFuncGetAttribute, 2020)                                               \
  X(cuFuncSetAttribute, cuFuncSetAttribute, 9000)                                               \
  X(cuFuncSetCacheConfig, cuFuncSetCacheConfig, 3000)                                           \
  X(cuFuncSetSharedMemConfig, cuFuncSetSharedMemConfig, 4020)                                   \
  X(cuFuncGetModule, cuFuncGetModule, 11000)                                                    \
  X(cuFuncGetName, cuFuncGetName, 12030)                                                        \
  X(cuFuncGetParamInfo, cuFuncGetParamInfo, 12040)                                              \
  X(cuFuncIsLoaded, cuFuncIsLoaded, 12040)                                                      \
  X(cuFuncLoad, cuFuncLoad, 12040)                                                              \
  X(cuLibraryLoadData, cuLibraryLoadData, 12000)                                                \
  X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, 12000)                                        \
  X(cuLibraryUnload, cuLibraryUnload, 12000)                                                    \
  X(cuLibraryGetKernel, cuLibraryGetKernel, 12000)                                              \
  X(cuLibraryGetKernelCount, cuLibraryGetKernelCount, 12040)                                    \
  X(cuLibraryEnumerateKernels, cuLibraryEnumerateKernels, 12040)                                \
  X(cuLibraryGetModule, cuLibraryGetModule, 12000)                                              \
  X(cuLibraryGetGlobal, cuLibraryGetGlobal, 12000)                                              \
  X(cuLibraryGetUnifiedFunction, cuLibraryGetUnifiedFunction, 12000)                            \
  X(cuKernelGetFunction, cuKernelGetFunction, 12000)                                            \
  X(cuKernelGetLibrary, cuKernelGetLibrary, 12050)                                              \
  X(cuKernelGetName, cuKernelGetName, 12030)                                                    \
  X(cuKernelGetParamInfo, cuKernelGetParamInfo, 12040)                                          \
  X(cuKernelGetAttribute, cuKernelGetAttribute, 12000)                                          \
  X(cuKernelSetAttribute, cuKernelSetAttribute, 12000)                                          \
  X(cuKernelSetCacheConfig, cuKernelSetCacheConfig, 12000)                                      \
  X(cuLaunchKernel, cuLaunchKernel, 4000)                                                       \
  X(cuLaunchKernelEx, cuLaunchKernelEx, 11060)                                                  \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000)                                 \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor,   \
    6050)                                                                                       \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,                                       \
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000)                                 \
  X(cuOccupancyMaxPotentialBlockSize, cuOccupancyMaxPotentialBlockSize, 6050)                   \
  X(cuOccupancyMaxPotentialBlockSizeWithFlags, cuOccupancyMaxPotentialBlockSizeWithFlags, 7000) \
  X(cuOccupancyAvailableDynamicSMemPerBlock, cuOccupancyAvailableDynamicSMemPerBlock, 10020)    \
  X(cuOccupancyMaxActiveClusters, cuOccupancyMaxActiveClusters, 11070)                          \
  X(cuOccupancyMaxPotentialClusterSize, cuOccupancyMaxPotentialClusterSize, 11070)              \
  X(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled, 12000)                                      \
  X(cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2col, 12000)                                    \
  X(cuTensorMapEncodeIm2colWide, cuTensorMapEncodeIm2colWide, 12080)                            \
  X(cuTensorMapReplaceAddress, cuTensorMapReplaceAddress, 12000)

/// The module, library, launch and occupancy functions.
struct ModuleApi {
#define SWCU_TEST_MODULE_MEMBER(member, base, version) PFN_##base##_v##version member = nullptr;
  SWCU_TEST_MODULE_FUNCTIONS(SWCU_TEST_MODULE_MEMBER)
#undef SWCU_TEST_MODULE_MEMBER
  PFN_cuLaunchKernel_v7000_ptsz cuLaunchKernel_ptsz = nullptr;
  PFN_cuLaunchKernelEx_v11060_ptsz cuLaunchKernelEx_ptsz = nullptr;
  PFN_cuLaunchCooperativeKernel_v9000_ptsz cuLaunchCooperativeKernel_ptsz = nullptr;
};

inline const ModuleApi& mod() {
  static const ModuleApi functions = [] {
    ModuleApi a;
#define SWCU_TEST_MODULE_RESOLVE(member, base, version) \
  a.member = proc<PFN_##base##_v##version>(#base, version);
    SWCU_TEST_MODULE_FUNCTIONS(SWCU_TEST_MODULE_RESOLVE)
#undef SWCU_TEST_MODULE_RESOLVE
    const auto pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    a.cuLaunchKernel_ptsz = proc<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", 7000, pt);
    a.cuLaunchKernelEx_ptsz = proc<PFN_cuLaunchKernelEx_v11060_ptsz>("cuLaunchKernelEx", 11060, pt);
    a.cuLaunchCooperativeKernel_ptsz =
        proc<PFN_cuLaunchCooperativeKernel_v9000_ptsz>("cuLaunchCooperativeKernel", 9000, pt);
    return a;
  }();
  return functions;
}

/// A test kernel file built by nvcc (swdriver/tests/kernels), e.g. "sw_kernels.ptx".
inline std::string kernel_file(const std::string& name) {
  return std::string(SWDRIVER_TEST_KERNELS_DIR) + "/" + name;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A driver test with a created context, current on this thread.
struct ModuleTest : DriverTest {
  ModuleTest() : ctx(create_context()) {}
  ~ModuleTest() {
    ctl.clear_launch_log();
    api().cuCtxDestroy_v2(ctx);
  }
  ModuleTest(const ModuleTest&) = delete;
  ModuleTest& operator=(const ModuleTest&) = delete;

  /// Loads an image (PTX text, or binary bytes) into the current context.
  CUmodule load(const std::string& image) {
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, image.c_str()));
    return m;
  }
  CUfunction function(CUmodule m, const char* name) {
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&f, m, name));
    return f;
  }
  /// The layout cuFuncGetParamInfo reports, as (offset, size) pairs.
  std::vector<std::pair<std::size_t, std::size_t>> layout(CUfunction f) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0;
      std::size_t size = 0;
      const CUresult r = mod().cuFuncGetParamInfo(f, i, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE) break;
      REQUIRE_EQ(error_name(r), error_name(CUDA_SUCCESS));
      out.emplace_back(offset, size);
    }
    return out;
  }
  int attribute(CUfunction f, CUfunction_attribute a) {
    int value = -12345;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetAttribute(&value, a, f));
    return value;
  }
  /// The names of a module's functions, in its order.
  std::vector<std::string> names(CUmodule m) {
    unsigned count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunctionCount(&count, m));
    std::vector<CUfunction> functions(count);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleEnumerateFunctions(functions.data(), count, m));
    std::vector<std::string> out;
    for (CUfunction f : functions) {
      const char* name = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetName(&name, f));
      out.emplace_back(name);
    }
    return out;
  }
  /// The most recent launch log entry.
  swcu_launch last_launch() {
    const std::size_t n = ctl.launch_log_size();
    REQUIRE(n > 0);
    swcu_launch l{};
    REQUIRE(ctl.launch_log_entry(n - 1, &l) == 0);
    return l;
  }

  CUcontext ctx = nullptr;
};

/// A PTX module around some text: the header, then `body`.
inline std::string ptx(const std::string& body) {
  return ".version 9.0\n.target sm_90\n.address_size 64\n" + body;
}

/// The kernels of kernels/sw_kernels.cu, in the order the driver lists them.
inline const std::vector<std::string> kKernelNames{"_ZN2ns4fillIdEEvPT_S1_i",
                                                   "bounded",
                                                   "by_value",
                                                   "calls_device_function",
                                                   "clustered",
                                                   "count_up",
                                                   "no_params",
                                                   "saxpy",
                                                   "static_shared",
                                                   "with_struct"};

/// JIT options with both logs, for cuModuleLoadDataEx and cuLibraryLoadData.
struct Jit {
  char info[1024] = "unchanged";
  char error[1024] = "unchanged";
  std::array<CUjit_option, 5> options{CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                      CU_JIT_WALL_TIME};
  std::array<void*, 5> values{info, reinterpret_cast<void*>(std::uintptr_t{sizeof info}), error,
                              reinterpret_cast<void*>(std::uintptr_t{sizeof error}),
                              reinterpret_cast<void*>(std::uintptr_t{12345})};
  CUresult load(CUmodule* m, const void* image) {
    return mod().cuModuleLoadDataEx(m, image, static_cast<unsigned>(options.size()), options.data(),
                                    values.data());
  }
  [[nodiscard]] std::size_t info_size() const {
    return reinterpret_cast<std::uintptr_t>(values[1]);
  }
  [[nodiscard]] std::size_t error_size() const {
    return reinterpret_cast<std::uintptr_t>(values[3]);
  }
  [[nodiscard]] float wall_time() const {
    float ms = -1;
    std::memcpy(&ms, &values[4], sizeof ms);
    return ms;
  }
};

}  // namespace swcu::test
