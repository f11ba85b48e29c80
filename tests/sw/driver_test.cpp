#include "cuwrap/driver.hpp"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <string>

#include "cuwrap/error.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

TEST_SUITE("driver") {
  TEST_CASE_FIXTURE(sw_fixture, "the software driver reports CUDA 13.0 and its path") {
    CHECK(cuwrap::driver_version() == 13000);
    CHECK(cuwrap::is_software_driver());
    CHECK(cuwrap::driver_path().find("libcuda.so.1") != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "every table entry is the function cuda.h binds the name to (no _v3 trap)") {
    const auto& table = cuwrap::detail::driver();
    const auto* slots = reinterpret_cast<void* const*>(&table);
    const auto entries = cuwrap::detail::driver_entries();
    REQUIRE(sizeof(table) == entries.size() * sizeof(void*));
    for (std::size_t i = 0; i < entries.size(); ++i) {
      CAPTURE(entries[i].base_name);
      Dl_info info{};
      REQUIRE(dladdr(slots[i], &info) != 0);
      REQUIRE(info.dli_sname != nullptr);
      CHECK(std::string{info.dli_sname} == entries[i].exported_name);
    }
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "cuCtxCreate is requested at 12050 and resolves to cuCtxCreate_v4") {
    for (const auto& entry : cuwrap::detail::driver_entries()) {
      if (std::string{entry.base_name} == "cuCtxCreate") {
        CHECK(entry.version == 12050);
        CHECK(std::string{entry.exported_name} == "cuCtxCreate_v4");
      }
    }
  }
}
