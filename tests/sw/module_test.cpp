#include "cuwrap/module.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

std::string kernels_file(const char* extension) {
  return std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels." + extension;
}

std::string read_text(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

struct with_module {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::module mod = cuwrap::module::load_file(ctx, kernels_file("ptx"));
};

}  // namespace

TEST_SUITE("module") {
  TEST_CASE("images are recognised by their content") {
    const auto kind = [](const std::string& path) {
      const auto text = read_text(path);
      return cuwrap::detect_image_kind(std::as_bytes(std::span{text.data(), text.size()}));
    };
    CHECK(kind(kernels_file("ptx")) == cuwrap::image_kind::ptx);
    CHECK(kind(kernels_file("cubin")) == cuwrap::image_kind::cubin);
    CHECK(kind(kernels_file("fatbin")) == cuwrap::image_kind::fatbin);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a PTX module lists its kernels, mangled names included") {
    with_module m;
    CHECK(swcuda().live_handles(SWCU_MODULE) == 1);
    auto names = m.mod.kernels();
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"_Z4fillIfEvPT_S0_i", "count_up", "no_params", "saxpy",
                                            "scale", "sixteen", "uses_shared", "with_struct"});
  }

  TEST_CASE_FIXTURE(sw_fixture, "cubin and fatbin images load and name their kernels") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    for (const char* extension : {"cubin", "fatbin"}) {
      CAPTURE(extension);
      const auto mod = cuwrap::module::load_file(ctx, kernels_file(extension));
      const auto names = mod.kernels();
      CHECK(std::find(names.begin(), names.end(), "saxpy") != names.end());
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "kernels know their parameter layout") {
    with_module m;
    const auto saxpy = m.mod.kernel("saxpy");
    REQUIRE(saxpy.layout_known());
    const std::vector<cuwrap::kernel_param> expected{{0, 4}, {8, 8}, {16, 8}, {24, 4}};
    CHECK(
        std::equal(saxpy.params().begin(), saxpy.params().end(), expected.begin(), expected.end()));
    const auto with_struct = m.mod.kernel("with_struct");
    const std::vector<cuwrap::kernel_param> struct_layout{{0, 16}, {16, 1}, {18, 2}, {24, 8}};
    CHECK(std::equal(with_struct.params().begin(), with_struct.params().end(),
                     struct_layout.begin(), struct_layout.end()));
    CHECK(m.mod.kernel("no_params").params().empty());
    CHECK(saxpy.max_threads_per_block() == 1024);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a typed kernel whose signature does not match names the parameter") {
    with_module m;
    CHECK_NOTHROW(m.mod.kernel<void(float, const float*, float*, int)>("saxpy"));
    CHECK_THROWS_WITH_AS(
        m.mod.kernel<void(float, const float*, float*, double)>("saxpy"),
        doctest::Contains("kernel saxpy, parameter 3: the kernel has 4 bytes, the signature's type "
                          "has 8"),
        cuwrap::error);
    CHECK_THROWS_WITH_AS(m.mod.kernel<void(float, const float*)>("saxpy"),
                         doctest::Contains("kernel saxpy has 4 parameters; the signature has 2"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a missing kernel lists the module's kernels") {
    with_module m;
    try {
      (void)m.mod.kernel("saxpi");
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::not_found);
      const std::string what = e.what();
      CHECK(what.find("kernel 'saxpi' not found; it has: ") != std::string::npos);
      CHECK(what.find("saxpy") != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "globals are device spans of the right size") {
    with_module m;
    const auto counter = m.mod.global<int>("counter");
    CHECK(counter.size() == 1);
    const auto coefficients = m.mod.global<float>("coefficients");
    CHECK(coefficients.size() == 4);
    CHECK_THROWS_WITH_AS((void)m.mod.global<double>("counter"),
                         doctest::Contains("not a multiple of the element size 8"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)m.mod.global<int>("nothing"), doctest::Contains("global 'nothing'"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "bad PTX fails to load with the JIT error log") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    try {
      (void)cuwrap::module::load(ctx, std::string_view{"this is not PTX"});
      FAIL("no exception");
    } catch (const cuwrap::module_load_error& e) {
      CHECK(e.code() == cuwrap::errc::invalid_image);
      CHECK_FALSE(e.log().empty());
    }
    CHECK(swcuda().live_handles(SWCU_MODULE) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a file that cannot be read is named") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    CHECK_THROWS_WITH_AS((void)cuwrap::module::load_file(ctx, "/nonexistent/k.ptx"),
                         doctest::Contains("cannot read '/nonexistent/k.ptx'"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a kernel keeps its module alive") {
    std::optional<cuwrap::kernel> k;
    {
      with_module m;
      k = m.mod.kernel("scale");
    }
    CHECK(swcuda().live_handles(SWCU_MODULE) == 1);
    k.reset();
    CHECK(swcuda().live_handles(SWCU_MODULE) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a module or library without kernels lists none") {
    // The driver refuses a null array for zero entries: cuwrap must not pass one.
    const std::string text =
        ".version 9.0\n.target sm_90\n.address_size 64\n.global .align 4 .u32 only_data;\n";
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto mod = cuwrap::module::load(ctx, std::string_view{text});
    CHECK(mod.kernels().empty());
    const auto lib = cuwrap::library::load(std::string_view{text});
    CHECK(lib.kernels().empty());
    CHECK_THROWS_WITH_AS((void)mod.kernel("missing"), doctest::Contains("missing"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a library loads once for every context") {
    const auto lib = cuwrap::library::load(read_text(kernels_file("ptx")));
    CHECK(swcuda().live_handles(SWCU_LIBRARY) == 1);
    const auto names = lib.kernels();
    CHECK(std::find(names.begin(), names.end(), "scale") != names.end());
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    const auto saxpy = lib.kernel<void(float, const float*, float*, int)>("saxpy");
    CHECK(saxpy.params().size() == 4);
    CHECK_THROWS_AS((void)lib.kernel("missing"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "kernel attributes are read") {
    with_module m;
    cuwrap::scoped_current_context current{m.ctx};
    auto k = m.mod.kernel("uses_shared");
    const auto attributes = k.attributes();
    CHECK(attributes.max_threads_per_block == 1024);
    CHECK(attributes.ptx_version > 0);
    k.set_max_dynamic_shared_memory(64 * 1024);
    CHECK(k.max_dynamic_shared_bytes() == 64 * 1024);
    CHECK(k.attributes().max_dynamic_shared_bytes == 64 * 1024);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: loading a module and looking up a kernel") {
    const auto ptx = read_text(kernels_file("ptx"));
    const int points = cuwrap::testing::fault_sweep([&] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      const auto mod = cuwrap::module::load(ctx, ptx);
      const auto k = mod.kernel<void(float*, float, int)>("scale");
      (void)mod.global<int>("counter");
    });
    CHECK(points >= 6);
  }
}
