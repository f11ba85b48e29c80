// What an expert hits in the first hour (issue 14): C++ kernels by their unmangled names,
// cross-context launches that name both contexts, a readable to_dot(), the software driver's
// control table through cuwrap, and driver lookups that keep their code.
#include <doctest/doctest.h>
#include <swcuda/control.h>

#include <string>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/software_driver.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

using cuwrap::testing::cxx_kernels_ptx;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const cuwrap::error& e) {
    return e.what();
  }
  FAIL("no cuwrap::error was thrown");
  return {};
}

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::module mod = cuwrap::module::load(ctx, std::string_view{cxx_kernels_ptx});
};

}  // namespace

TEST_SUITE("friction") {
  TEST_CASE_FIXTURE(fixture, "a typed lookup finds a C++ kernel by its unmangled name") {
    const auto k = mod.kernel<void(const float*, float*, float, float, int)>("scale_chunk");
    CHECK(k.name() == "_Z11scale_chunkPKfPfffi");
    // The signature picks the overload.
    CHECK(mod.kernel<void(float*, int)>("twice").name() == "_Z5twicePfi");
    CHECK(mod.kernel<void(double*, int)>("twice").name() == "_Z5twicePdi");
    // Qualified names and template instantiations.
    CHECK(mod.kernel<void(int)>("ns::step").name() == "_ZN2ns4stepEi");
    CHECK(mod.kernel<void(int)>("step").name() == "_ZN2ns4stepEi");
    CHECK(mod.kernel<void(float*, float, int)>("fill<float>").name() == "_Z4fillIfEvPT_S0_i");
    CHECK(mod.kernel<void(float*, float, int)>("fill").name() == "_Z4fillIfEvPT_S0_i");
    // Exact names keep working.
    CHECK(mod.kernel<void(float*, int)>("_Z5twicePfi").name() == "_Z5twicePfi");
    CHECK(mod.kernel<void(int)>("plain").name() == "plain");
  }

  TEST_CASE_FIXTURE(fixture, "an untyped lookup by plain name works when it is unambiguous") {
    CHECK(mod.kernel("scale_chunk").name() == "_Z11scale_chunkPKfPfffi");
    CHECK(mod.kernel("ns::step").name() == "_ZN2ns4stepEi");
    CHECK(mod.kernel("scale_chunk(float const*, float*, float, float, int)").name() ==
          "_Z11scale_chunkPKfPfffi");
    const auto what = message_of([&] { (void)mod.kernel("twice"); });
    CHECK(what.find("kernel 'twice' is ambiguous") != std::string::npos);
    CHECK(what.find("twice(float*, int)") != std::string::npos);
    CHECK(what.find("twice(double*, int)") != std::string::npos);
  }

  TEST_CASE_FIXTURE(fixture, "the not-found message lists the kernels demangled") {
    const auto what = message_of([&] { (void)mod.kernel("scale_chunks"); });
    CHECK(what.find("kernel 'scale_chunks' not found; it has: ") != std::string::npos);
    CHECK(what.find(
              "scale_chunk(float const*, float*, float, float, int) [_Z11scale_chunkPKfPfffi]") !=
          std::string::npos);
    CHECK(what.find("ns::step(int)") != std::string::npos);
    const auto typed = message_of([&] { (void)mod.kernel<void(int*, int)>("twice"); });
    CHECK(typed.find("with parameters (int*, int) not found") != std::string::npos);
    CHECK(typed.find("twice(double*, int)") != std::string::npos);
  }

  TEST_CASE_FIXTURE(fixture, "a library finds C++ kernels by unmangled name too") {
    const auto lib = cuwrap::library::load(std::string_view{cxx_kernels_ptx});
    const cuwrap::scoped_current_context current{ctx};  // library kernels' layouts need one
    CHECK(lib.kernel<void(double*, int)>("twice").name() == "_Z5twicePdi");
    CHECK(lib.kernel("ns::step").name() == "_ZN2ns4stepEi");
    CHECK(message_of([&] { (void)lib.kernel("nothing"); }).find("cuLibraryGetKernel") !=
          std::string::npos);
  }

  TEST_CASE_FIXTURE(fixture,
                    "a launch across contexts names the kernel's and the stream's contexts") {
    const cuwrap::context other{cuwrap::device::get(0)};
    const cuwrap::stream s{other};
    const auto k = mod.kernel<void(int)>("ns::step");
    CHECK(k.context() == ctx.get());
    const auto what = message_of([&] { s.launch(k, cuwrap::launch_config{{1}, {32}}, 1); });
    CHECK(what.find("the kernel is from context " + std::to_string(reinterpret_cast<std::uintptr_t>(
                                                        ctx.get()))) != std::string::npos);
    CHECK(what.find("the stream's (or graph's) context is " +
                    std::to_string(reinterpret_cast<std::uintptr_t>(other.get()))) !=
          std::string::npos);
  }

  TEST_CASE_FIXTURE(fixture, "to_dot() is readable by default and verbose on request") {
    cuwrap::graph g{ctx};
    const auto k = mod.kernel<void(int)>("ns::step");
    (void)g.add_kernel(k, cuwrap::launch_config{{1}, {32}}, {}, 1);
    const auto readable = g.to_dot();
    CHECK(readable.find("_ZN2ns4stepEi") != std::string::npos);
    CHECK(readable.find("function 0x") == std::string::npos);  // no handles
    const auto verbose = g.to_dot(CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE);
    CHECK(verbose.find("function 0x") != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture, "cuwrap::software_driver reaches the control table") {
    CHECK(cuwrap::software_driver::is_loaded());
    const swcu_control* table = cuwrap::software_driver::control_table();
    REQUIRE(table != nullptr);
    CHECK(table == &swcuda());
    CHECK(&cuwrap::software_driver::control() == table);
    table->reset_call_counts();
    (void)cuwrap::device::get(0).name();
    CHECK(table->call_count("cuDeviceGetName") == 1);
    REQUIRE(table->add_fault_rule("cuDeviceGetName:1:CUDA_ERROR_UNKNOWN") == 0);
    CHECK_THROWS_AS((void)cuwrap::device::get(0).name(), cuwrap::error);
    CHECK(table->live_handles_total() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a failed cuGetProcAddress keeps its code and does not say too old") {
    // Calls 1 and 2 of a load are cuDriverGetVersion and cuInit; call 3 fills the table's first
    // entry (cuInit), within the driver's version.
    REQUIRE(swcuda().add_fault_rule("cuGetProcAddress:3:CUDA_ERROR_INVALID_VALUE") == 0);
    const auto& table = cuwrap::detail::load_driver("software");
    swcuda().clear_fault_rules();
    try {
      (void)table.cuInit(0);
      FAIL("the stand-in did not throw");
    } catch (const cuwrap::error& e) {
      const std::string what = e.what();
      CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_INVALID_VALUE));
      CHECK(std::string{e.api()} == "cuInit");
      CHECK(what.find("cuGetProcAddress(\"cuInit\"") != std::string::npos);
      CHECK(what.find("needs a driver") == std::string::npos);
    }
  }
}
