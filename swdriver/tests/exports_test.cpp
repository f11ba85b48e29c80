// The driver exports every name of the toolkit stub; unimplemented ones are counted stubs.
#include <dlfcn.h>

#include <set>
#include <string>
#include <vector>

#include "swdriver_test.hpp"

namespace {

struct Export {
  const char* name;
  const char* base;
};

const std::vector<Export> kExports = {
#define SWCU_EXPORT(name, base) {#name, #base},
#include "core/generated/exports.inc"
#undef SWCU_EXPORT
};

}  // namespace

TEST_SUITE("exports") {
  TEST_CASE("every export of the toolkit stub can be found with dlsym") {
    REQUIRE(kExports.size() == 637);
    std::set<std::string> names;
    for (const Export& e : kExports) {
      INFO(e.name);
      void* const function = dlsym(swcu::test::library(), e.name);
      CHECK(function != nullptr);
      CHECK(swcu::test::exported_name(function) == e.name);
      names.insert(e.name);
    }
    CHECK(names.size() == kExports.size());
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an unimplemented function is counted and returns CUDA_ERROR_NOT_SUPPORTED") {
    const auto unregister = swcu::test::proc<PFN_cuGraphicsUnregisterResource_v3000>(
        "cuGraphicsUnregisterResource", 3000);
    ctl.reset_call_counts();  // resolving it called cuGetProcAddress_v2
    SWCU_TEST_CHECK_RESULT(unregister(nullptr), CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_CHECK_RESULT(unregister(nullptr), CUDA_ERROR_NOT_SUPPORTED);
    CHECK(ctl.call_count("cuGraphicsUnregisterResource") == 2);
    CHECK(ctl.total_call_count() == 2);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "every unimplemented variant is counted under its own name") {
    // Graphics interop will stay unimplemented. Called through dlsym without arguments: the
    // default bodies read none.
    for (const char* name : {"cuGraphicsMapResources", "cuGraphicsMapResources_ptsz"}) {
      INFO(name);
      const auto function = reinterpret_cast<CUresult (*)()>(dlsym(swcu::test::library(), name));
      REQUIRE((function != nullptr));
      SWCU_TEST_CHECK_RESULT(function(), CUDA_ERROR_NOT_SUPPORTED);
      CHECK(ctl.call_count(name) == 1);
    }
    CHECK(ctl.call_count("cuGraphicsUnmapResources") == 0);
  }
}
