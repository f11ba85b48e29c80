// cuGetProcAddress(_v2): which export a (base name, version, flags) request gets.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "swdriver_test.hpp"

namespace {

struct Row {
  const char* base;
  int version;
  bool per_thread;
  const char* exported;
};

#define NONE false
#define PTDS true
#define PTSZ true
const std::vector<Row> kRows = {
#define SWCU_VARIANT(base, version, per_thread, exported) {#base, version, per_thread, #exported},
#include "core/generated/symbols.inc"
#undef SWCU_VARIANT
};
#undef NONE
#undef PTDS
#undef PTSZ

struct Answer {
  CUresult result;
  void* function;
  CUdriverProcAddressQueryResult status;
};

Answer ask(const char* symbol, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  Answer a{CUDA_ERROR_UNKNOWN, reinterpret_cast<void*>(0x1), CU_GET_PROC_ADDRESS_SUCCESS};
  a.result = swcu::test::get_proc_address()(symbol, &a.function, version, flags, &a.status);
  return a;
}

std::string name_at(const char* base, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  const Answer a = ask(base, version, flags);
  if (a.result != CUDA_SUCCESS || a.function == nullptr) return "<none>";
  return swcu::test::exported_name(a.function);
}

constexpr cuuint64_t kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
constexpr cuuint64_t kLegacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;

}  // namespace

TEST_SUITE("cuGetProcAddress") {
  TEST_CASE("cuCtxCreate resolves to the ABI of the requested version") {
    CHECK(name_at("cuCtxCreate", 13000) == "cuCtxCreate_v4");
    CHECK(name_at("cuCtxCreate", 12050) == "cuCtxCreate_v4");
    CHECK(name_at("cuCtxCreate", 12040) == "cuCtxCreate_v3");
    CHECK(name_at("cuCtxCreate", 11040) == "cuCtxCreate_v3");
    CHECK(name_at("cuCtxCreate", 11030) == "cuCtxCreate_v2");
    CHECK(name_at("cuCtxCreate", 3020) == "cuCtxCreate_v2");
    CHECK(name_at("cuCtxCreate", 3010) == "cuCtxCreate");
  }

  TEST_CASE("cuMemAlloc at 3020 is cuMemAlloc_v2 and at 2000 the 32-bit cuMemAlloc") {
    CHECK(name_at("cuMemAlloc", 3020) == "cuMemAlloc_v2");
    CHECK(name_at("cuMemAlloc", 2000) == "cuMemAlloc");
  }

  TEST_CASE("every row of the generated version table resolves to its exported name") {
    REQUIRE(kRows.size() == 637);
    for (const Row& row : kRows) {
      INFO(row.base, " at ", row.version, row.per_thread ? " per-thread" : "");
      CHECK(name_at(row.base, row.version, row.per_thread ? kPerThread : kLegacy) == row.exported);
    }
  }

  TEST_CASE("returned pointers are the driver's exported functions") {
    for (const char* name : {"cuCtxCreate_v4", "cuInit", "cuMemcpyHtoD_v2_ptds"}) {
      void* const exported = dlsym(swcu::test::library(), name);
      REQUIRE(exported != nullptr);
      CHECK(swcu::test::exported_name(exported) == name);
    }
    CHECK(ask("cuCtxCreate", 12050).function == dlsym(swcu::test::library(), "cuCtxCreate_v4"));
  }

  TEST_CASE("the per-thread flag gives the _ptds or _ptsz variant where one exists") {
    CHECK(name_at("cuMemcpyHtoD", 13000, kPerThread) == "cuMemcpyHtoD_v2_ptds");
    CHECK(name_at("cuMemcpyHtoD", 13000, kLegacy) == "cuMemcpyHtoD_v2");
    CHECK(name_at("cuMemcpyHtoD", 13000) == "cuMemcpyHtoD_v2");
    CHECK(name_at("cuLaunchKernel", 7000, kPerThread) == "cuLaunchKernel_ptsz");
    CHECK(name_at("cuStreamGetCaptureInfo", 12030, kPerThread) == "cuStreamGetCaptureInfo_v3_ptsz");
    CHECK(name_at("cuStreamGetCaptureInfo", 11030, kPerThread) == "cuStreamGetCaptureInfo_v2_ptsz");
    // Before the per-thread variant existed, and for functions without one: the legacy variant.
    CHECK(name_at("cuLaunchKernel", 6050, kPerThread) == "cuLaunchKernel");
    CHECK(name_at("cuMemcpyHtoD", 6050, kPerThread) == "cuMemcpyHtoD_v2");
    CHECK(name_at("cuCtxCreate", 12050, kPerThread) == "cuCtxCreate_v4");
  }

  TEST_CASE("a symbol newer than the requested version is found but not sufficient") {
    const Answer a = ask("cuCtxGetId", 11080);
    CHECK(a.result == CUDA_SUCCESS);
    CHECK(a.function == nullptr);
    CHECK(a.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(ask("cuCtxGetId", 12000).status == CU_GET_PROC_ADDRESS_SUCCESS);
  }

  TEST_CASE("an unknown symbol or an exported name is reported as not found") {
    for (const char* symbol : {"cuNoSuchFunction", "cuMemAlloc_v2", "cuCtxCreate_v4", "CUINIT"}) {
      INFO(symbol);
      const Answer a = ask(symbol, 13000);
      CHECK(a.result == CUDA_SUCCESS);
      CHECK(a.function == nullptr);
      CHECK(a.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    }
  }

  TEST_CASE("the empty-string probe of the CUDA runtime does not crash") {
    const Answer a = ask("", 0, 0);
    CHECK(a.result == CUDA_SUCCESS);
    CHECK(a.function == nullptr);
    CHECK(a.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    void* p = nullptr;
    CHECK(swcu::test::get_proc_address()("", &p, 0, 0, nullptr) == CUDA_SUCCESS);
    CHECK(p == nullptr);
  }

  TEST_CASE("a version above the driver version is CUDA_ERROR_INVALID_VALUE") {
    const Answer a = ask("cuInit", 13010);
    CHECK(a.result == CUDA_ERROR_INVALID_VALUE);
    CHECK(a.function == reinterpret_cast<void*>(0x1));  // untouched
  }

  TEST_CASE("invalid arguments are CUDA_ERROR_INVALID_VALUE") {
    void* p = nullptr;
    const auto get = swcu::test::get_proc_address();
    CHECK(get(nullptr, &p, 13000, 0, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(get("cuInit", nullptr, 13000, 0, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(get("cuInit", &p, 13000, 4, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(get("cuInit", &p, 13000, kLegacy | kPerThread, nullptr) == CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE("the 4-argument cuGetProcAddress gives the same pointers") {
    const auto legacy = swcu::test::api().cuGetProcAddress_v1;
    CHECK(swcu::test::exported_name(reinterpret_cast<void*>(legacy)) == "cuGetProcAddress");
    for (const Row& row : kRows) {
      void* p = nullptr;
      REQUIRE(legacy(row.base, &p, row.version, row.per_thread ? kPerThread : kLegacy) ==
              CUDA_SUCCESS);
      CHECK(swcu::test::exported_name(p) == row.exported);
    }
    void* p = reinterpret_cast<void*>(0x1);
    CHECK(legacy("cuNoSuchFunction", &p, 13000, 0) == CUDA_SUCCESS);
    CHECK(p == nullptr);
    CHECK(legacy("cuInit", &p, 13010, 0) == CUDA_ERROR_INVALID_VALUE);
  }
}
