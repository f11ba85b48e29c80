// Libraries and kernels (cuLibrary*, cuKernel*): loading without a context, listing kernels,
// kernels and globals per context, unloading.
#include <algorithm>
#include <string>
#include <vector>

#include "module_support.hpp"

namespace {

using swcu::test::Jit;
using swcu::test::kKernelNames;
using swcu::test::mod;

}  // namespace

TEST_SUITE("libraries") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a library loads without a context and lists its kernels") {
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.fatbin"));
    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 1);
    unsigned count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernelCount(&count, lib));
    CHECK(count == kKernelNames.size());
    std::vector<CUkernel> kernels(count);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryEnumerateKernels(kernels.data(), count, lib));
    std::vector<std::string> names;
    for (CUkernel k : kernels) {
      const char* name = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetName(&name, k));
      names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    CHECK(names == kKernelNames);
    CUkernel saxpy = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernel(&saxpy, lib, "saxpy"));
    CUkernel missing = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetKernel(&missing, lib, "saxpi"), CUDA_ERROR_NOT_FOUND);
    std::size_t offset = 0;
    std::size_t size = 0;
    // As NVIDIA's driver: parameter information needs a current context.
    SWCU_TEST_CHECK_RESULT(mod().cuKernelGetParamInfo(saxpy, 1, &offset, &size),
                           CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = swcu::test::create_context();
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetParamInfo(saxpy, 1, &offset, &size));
    CHECK(offset == 8);
    CHECK(size == 8);
    SWCU_TEST_CHECK_RESULT(mod().cuKernelGetParamInfo(saxpy, 4, &offset, &size),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CUlibrary owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetLibrary(&owner, saxpy));
    CHECK(owner == lib);
    int value = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuKernelGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, saxpy, 0));
    CHECK(value == 1024);
    SWCU_TEST_CHECK_RESULT(
        mod().cuKernelGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, saxpy, 5),
        CUDA_ERROR_INVALID_DEVICE);
    // A CUkernel is accepted where a CUfunction is, when no context is needed.
    const auto as_function = reinterpret_cast<CUfunction>(saxpy);
    const char* name = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetName(&name, as_function));
    CHECK(std::string(name) == "saxpy");
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetParamInfo(as_function, 3, &offset, &size));
    CHECK(offset == 24);
    CUmodule module = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetModule(&module, lib), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(
        mod().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, as_function),
        CUDA_ERROR_INVALID_CONTEXT);

    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 0);
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(mod().cuKernelGetName(&name, saxpy), CUDA_ERROR_INVALID_HANDLE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a library has a module, functions and globals per context") {
    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadFromFile(&lib, swcu::test::kernel_file("sw_kernels.ptx").c_str(),
                                    nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel count_up = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernel(&count_up, lib, "count_up"));
    const CUcontext a = swcu::test::create_context();
    CUmodule module_a = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetModule(&module_a, lib));
    CUmodule again = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetModule(&again, lib));
    CHECK(again == module_a);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);  // the library's, not the program's
    SWCU_TEST_CHECK_RESULT(mod().cuModuleUnload(module_a), CUDA_ERROR_NOT_PERMITTED);
    CUfunction function_a = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetFunction(&function_a, count_up));
    CUmodule owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetModule(&owner, function_a));
    CHECK(owner == module_a);
    CUfunction by_name = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&by_name, module_a, "count_up"));
    CHECK(by_name == function_a);
    CUdeviceptr global_a = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetGlobal(&global_a, &bytes, lib, "counter"));
    CHECK(bytes == 4);
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetGlobal(&global_a, &bytes, lib, "nothing"),
                           CUDA_ERROR_NOT_FOUND);

    const CUcontext b = swcu::test::create_context();  // now current
    CUfunction function_b = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetFunction(&function_b, count_up));
    CHECK(function_b != function_a);
    CUdeviceptr global_b = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetGlobal(&global_b, nullptr, lib, "counter"));
    CHECK(global_b != global_a);

    // cuKernelSetAttribute sets the kernel's value for a device; cuFuncSetAttribute overrides
    // it for one function, and cuKernelGetAttribute still reads the kernel's.
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelSetAttribute(
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 60000, count_up, 0));
    int value = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetAttribute(
        &value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function_b));
    CHECK(value == 60000);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncSetAttribute(
        function_b, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 70000));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetAttribute(
        &value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function_b));
    CHECK(value == 70000);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetAttribute(
        &value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, count_up, 0));
    CHECK(value == 60000);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetAttribute(
        &value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function_a));
    CHECK(value == 60000);
    SWCU_TEST_CHECK_RESULT(mod().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 1, count_up, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1, count_up, 3),
        CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(mod().cuKernelSetCacheConfig(count_up, CU_FUNC_CACHE_PREFER_L1, 0),
                           CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(
        mod().cuKernelSetCacheConfig(count_up, swcu::test::invalid_enum<CUfunc_cache>(7), 0),
        CUDA_ERROR_INVALID_VALUE);
    // The CUkernel itself resolves to the current context's function.
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 reinterpret_cast<CUfunction>(count_up)));
    CHECK(value == 70000);

    // A destroyed context takes its module of the library with it (not a program handle, so
    // not counted as reclaimed).
    const std::size_t reclaimed = ctl.reclaimed_handles(SWCU_MODULE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    CHECK(ctl.reclaimed_handles(SWCU_MODULE) == reclaimed);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetModule(&owner, function_b), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(a));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetModule(&owner, function_a));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetModule(&owner, function_a), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&by_name, module_a, "count_up"),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
  }

  // "If no unified function with name symbol exists, the call returns CUDA_ERROR_NOT_FOUND. If
  // there is no device with attribute CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS present in
  // the system, the call may return CUDA_ERROR_NOT_FOUND": no device here has it.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuLibraryGetUnifiedFunction finds no function") {
    int unified = -1;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, 0));
    CHECK(unified == 0);
    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadFromFile(&lib, swcu::test::kernel_file("sw_kernels.ptx").c_str(),
                                    nullptr, nullptr, 0, nullptr, nullptr, 0));
    int marker = 0;
    void* fptr = &marker;
    for (const char* symbol : {"saxpy", "counter", "nothing"}) {  // a kernel, a global, nothing
      INFO(symbol);
      SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(&fptr, lib, symbol),
                             CUDA_ERROR_NOT_FOUND);
    }
    CHECK(fptr == &marker);  // untouched
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(nullptr, lib, "saxpy"),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(&fptr, lib, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(&fptr, nullptr, "saxpy"),
                           CUDA_ERROR_INVALID_HANDLE);
    REQUIRE(ctl.add_fault_rule("cuLibraryGetUnifiedFunction:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(&fptr, lib, "saxpy"),
                           CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryGetUnifiedFunction(&fptr, lib, "saxpy"),
                           CUDA_ERROR_INVALID_HANDLE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "library loading checks its options and reports JIT logs") {
    CUlibrary lib = nullptr;
    Jit jit;
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryLoadData(&lib, "not PTX", jit.options.data(),
                                                   jit.values.data(), 4, nullptr, nullptr, 0),
                           CUDA_ERROR_INVALID_IMAGE);
    CHECK(std::string(jit.error).find("not a PTX") != std::string::npos);
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx"));
    auto option = swcu::test::invalid_enum<CUlibraryOption>(CU_LIBRARY_NUM_OPTIONS);
    void* value = nullptr;
    SWCU_TEST_CHECK_RESULT(
        mod().cuLibraryLoadData(&lib, image.c_str(), nullptr, nullptr, 0, &option, &value, 1),
        CUDA_ERROR_INVALID_VALUE);
    option = CU_LIBRARY_BINARY_IS_PRESERVED;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadData(&lib, image.c_str(), nullptr, nullptr, 0, &option, &value, 1));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
    SWCU_TEST_CHECK_RESULT(mod().cuLibraryLoadFromFile(&lib, "/nonexistent.ptx", nullptr, nullptr,
                                                       0, nullptr, nullptr, 0),
                           CUDA_ERROR_FILE_NOT_FOUND);
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 0);
  }
}
