// NVRTC's LTO-IR (rtc::program compiled with -dlto) given to module::load and library::load.
// cuwrap recognises its container, checks it against the span, and hands the driver the bytes
// as they are (PTX gets a NUL-terminated copy; LTO-IR is binary). NVIDIA's driver JIT-links it
// (issue 15, measured on GPUs). The software driver cannot: in memory the container records no
// length and the IR is opaque (docs/software-driver.md, "Stricter than the real driver"), so the
// load fails with CUDA_ERROR_NOT_SUPPORTED and the driver's reason in the JIT log. Containers cut
// short never reach the driver.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/rtc.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;

namespace {

constexpr std::string_view kAddSeven =
    R"(extern "C" __global__ void add_seven(int* p) { p[threadIdx.x] += 7 + threadIdx.x; })";

cuwrap::rtc::compiled_program add_seven_lto_ir() {
  cuwrap::rtc::program prog{kAddSeven, "add_seven.cu"};
  return prog.compile({.arch = "compute_90", .lto = true});
}

// The first `size` bytes of `image` in a heap block of exactly that size.
struct exact_block {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size;
  exact_block(std::span<const std::byte> image, std::size_t n)
      : bytes{std::make_unique<std::byte[]>(n)}, size{n} {
    std::memcpy(bytes.get(), image.data(), n);
  }
  std::span<const std::byte> span() const { return {bytes.get(), size}; }
};

// What a failed load threw: its message and the JIT error log.
struct failure {
  std::string what;
  std::string log;
};

// Runs `load`, which must throw a module_load_error with `code`.
template <class Load>
failure load_failure(CUresult code, Load&& load) {
  try {
    load();
  } catch (const cuwrap::module_load_error& e) {
    CHECK(e.code() == cuwrap::make_error_code(code));
    return {e.what(), e.log()};
  }
  FAIL("the image loaded");
  return {};
}

}  // namespace

TEST_SUITE("lto-ir") {
  TEST_CASE("NVRTC's LTO-IR is recognised by its container's magic") {
    const auto out = add_seven_lto_ir();
    CHECK(cuwrap::detect_image_kind(out.lto_ir()) == cuwrap::image_kind::lto_ir);
  }

  TEST_CASE_FIXTURE(sw_fixture, "NVRTC's LTO-IR reaches the driver, which needs its length") {
    const auto out = add_seven_lto_ir();
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto calls = calls_made_by([&] {
      const auto e = load_failure(CUDA_ERROR_NOT_SUPPORTED,
                                  [&] { (void)cuwrap::module::load(ctx, out.lto_ir()); });
      CHECK(e.log.find("its container records no length") != std::string::npos);
      CHECK(e.what.find("cuModuleLoadDataEx") != std::string::npos);
    });
    CHECK(calls.at("cuModuleLoadDataEx") == 1);
    const auto e =
        load_failure(CUDA_ERROR_NOT_SUPPORTED, [&] { (void)cuwrap::library::load(out.lto_ir()); });
    CHECK(e.log.find("in a fatbin") != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture, "LTO-IR cut short is refused before the driver reads it") {
    const auto out = add_seven_lto_ir();
    const std::span<const std::byte> ir = out.lto_ir();
    REQUIRE(ir.size() > 44);
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    std::uint32_t ir_offset = 0;
    std::memcpy(&ir_offset, ir.data() + 20, sizeof ir_offset);
    const struct {
      std::size_t size;
      std::string message;
    } cuts[] = {
        {4, "4-byte image: LTO-IR: a 4-byte image is shorter than the 24-byte container header"},
        {20, "LTO-IR: a 20-byte image is shorter than the 24-byte container header"},
        {ir_offset, "LTO-IR: its IR starts at byte " + std::to_string(ir_offset) + " of a"},
    };
    for (const auto& cut : cuts) {
      CAPTURE(cut.size);
      const exact_block block{ir, cut.size};
      const auto calls = calls_made_by([&] {
        const auto e = load_failure(CUDA_ERROR_INVALID_IMAGE,
                                    [&] { (void)cuwrap::module::load(ctx, block.span()); });
        CHECK(e.what.find(cut.message) != std::string::npos);
        (void)load_failure(CUDA_ERROR_INVALID_IMAGE,
                           [&] { (void)cuwrap::library::load(block.span()); });
      });
      CHECK(calls.count("cuModuleLoadDataEx") == 0);
      CHECK(calls.count("cuLibraryLoadData") == 0);
    }

    auto swapped = std::vector<std::byte>(ir.begin(), ir.end());
    const std::uint32_t before_data = 30;  // the IR offset before the options' data (40)
    std::memcpy(swapped.data() + 20, &before_data, sizeof before_data);
    const auto e =
        load_failure(CUDA_ERROR_INVALID_IMAGE, [&] { (void)cuwrap::module::load(ctx, swapped); });
    CHECK(e.what.find("are not in order") != std::string::npos);
  }
}
