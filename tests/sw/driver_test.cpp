#include "cuwrap/driver.hpp"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "cuwrap/error.hpp"
#include "sw_fixture.hpp"
#include "swcuda.hpp"

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

  TEST_CASE_FIXTURE(sw_fixture, "once loaded, every process table entry is the driver's function") {
    const auto& loaded = cuwrap::detail::load_process_driver();
    const auto& process = cuwrap::detail::driver();
    REQUIRE(&loaded != &process);
    const auto* loaded_slots = reinterpret_cast<void* const*>(&loaded);
    const auto* process_slots = reinterpret_cast<void* const*>(&process);
    const auto entries = cuwrap::detail::driver_entries();
    for (std::size_t i = 0; i < entries.size(); ++i) {
      CAPTURE(entries[i].base_name);
      CHECK(process_slots[i] == loaded_slots[i]);
    }
    CHECK(&cuwrap::detail::driver_info(process) == &cuwrap::detail::driver_info(loaded));
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

TEST_SUITE("sw_env") {
  TEST_CASE("the first call through the process table loads the driver") {
    // Needs a process of its own (so it is in sw_env, run only by name): nothing has loaded
    // the driver yet.
    const auto& process = cuwrap::detail::driver();
    const auto address = [](auto fn) { return reinterpret_cast<const void*>(fn); };
    const void* before = address(process.cuDeviceGetCount.get());
    int count = 0;
    REQUIRE(process.cuDeviceGetCount(&count) == CUDA_SUCCESS);
    CHECK(count >= 1);
    const auto& loaded = cuwrap::detail::load_process_driver();
    CHECK(before != address(loaded.cuDeviceGetCount.get()));
    CHECK(address(process.cuDeviceGetCount.get()) == address(loaded.cuDeviceGetCount.get()));
  }

  TEST_CASE("first calls from many threads at once load the driver once") {
    // Needs a process of its own, like the case above.
    constexpr int thread_count = 8;
    std::vector<int> counts(thread_count, 0);
    std::vector<CUresult> results(thread_count, CUDA_ERROR_UNKNOWN);
    {
      std::vector<std::jthread> threads;
      for (int i = 0; i < thread_count; ++i) {
        threads.emplace_back(
            [&, i] { results[i] = cuwrap::detail::driver().cuDeviceGetCount(&counts[i]); });
      }
    }
    for (int i = 0; i < thread_count; ++i) {
      CHECK(results[i] == CUDA_SUCCESS);
      CHECK(counts[i] >= 1);
    }
    const auto calls = cuwrap::testing::current_call_counts();
    CHECK(calls.at("cuInit") == 1);
    CHECK(calls.at("cuDeviceGetCount") == thread_count);
  }
}
