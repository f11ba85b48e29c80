// Images are checked against their size before the driver sees them (src/image_check.hpp):
// short and crafted cubins and fatbins, and the in-memory fatbin wrapper, fail in cuwrap with
// CUDA_ERROR_INVALID_IMAGE and no driver call; real images from nvcc still load. Each image
// sits in a heap block of exactly its size, so the asan lane catches any read past it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::kernels_file;
using cuwrap::testing::read_bytes;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::total;

namespace {

// The first `size` bytes of `image` in a heap block of exactly that size.
struct exact_block {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size;
  exact_block(const std::vector<std::byte>& image, std::size_t n)
      : bytes{std::make_unique<std::byte[]>(n)}, size{n} {
    std::memcpy(bytes.get(), image.data(), n);
  }
  std::span<const std::byte> span() const { return {bytes.get(), size}; }
};

// A file in the build tree holding `bytes`, removed afterwards.
struct scratch_file {
  std::string path;
  explicit scratch_file(const std::string& name, std::span<const std::byte> bytes)
      : path{std::string{CUWRAP_TEST_KERNELS_DIR} + "/" + name} {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  ~scratch_file() { std::remove(path.c_str()); }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
};

std::vector<std::byte> fatbin_wrapper() {
  std::vector<std::byte> wrapper(16);
  const std::uint32_t magic = 0x466243B1, version = 1;
  const std::uint64_t pointer = 0x1000;  // points nowhere: only meaningful in memory
  std::memcpy(wrapper.data(), &magic, 4);
  std::memcpy(wrapper.data() + 4, &version, 4);
  std::memcpy(wrapper.data() + 8, &pointer, 8);
  return wrapper;
}

// Runs `load`, which must throw an invalid-image module_load_error without any driver call,
// and returns its message.
template <class Load>
std::string refused(Load&& load) {
  std::string message;
  const auto calls = calls_made_by([&] {
    try {
      load();
      FAIL("the image loaded");
    } catch (const cuwrap::module_load_error& e) {
      CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_INVALID_IMAGE));
      CHECK(std::string{e.where().file_name()}.ends_with("image_validation_test.cpp"));
      message = e.what();
    }
  });
  CHECK_MESSAGE(calls.count("cuModuleLoadDataEx") == 0, "the driver saw the image");
  CHECK_MESSAGE(calls.count("cuLibraryLoadData") == 0, "the driver saw the image");
  return message;
}

}  // namespace

TEST_SUITE("image validation") {
  TEST_CASE_FIXTURE(sw_fixture, "real cubins, fatbins and PTX load from blocks of their size") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    for (const char* extension : {"cubin", "fatbin", "ptx"}) {
      CAPTURE(extension);
      const auto image = read_bytes(kernels_file(extension));
      const exact_block block{image, image.size()};  // PTX: no NUL at the end
      const auto mod = cuwrap::module::load(ctx, block.span());
      CHECK(mod.kernel("saxpy").get() != nullptr);
      const auto lib = cuwrap::library::load(block.span());
      CHECK(lib.get() != nullptr);
      CHECK(cuwrap::module::load_file(ctx, kernels_file(extension)).get() != nullptr);
      CHECK(cuwrap::library::load_file(kernels_file(extension)).get() != nullptr);
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "a fatbin wrapper file is refused, naming the file") {
    // It used to crash: the driver followed the pointer in bytes 8-15.
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const scratch_file file{"wrapper.fatbin", fatbin_wrapper()};
    for (const bool as_library : {false, true}) {
      CAPTURE(as_library);
      const std::string message = refused([&] {
        if (as_library) {
          (void)cuwrap::library::load_file(file.path);
        } else {
          (void)cuwrap::module::load_file(ctx, file.path);
        }
      });
      CHECK(message.find("'" + file.path + "' (16 bytes): a fatbin wrapper (magic 0x466243B1") !=
            std::string::npos);
      CHECK(message.find(as_library ? "cuwrap::library::load_file" : "cuwrap::module::load_file") !=
            std::string::npos);
    }
    const exact_block block{fatbin_wrapper(), 16};
    CHECK(refused([&] {
            (void)cuwrap::module::load(ctx, block.span());
          }).find("16-byte image: a fatbin wrapper") != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "short cubins and fatbins are refused before the driver reads them") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto cubin = read_bytes(kernels_file("cubin"));
    const auto fatbin = read_bytes(kernels_file("fatbin"));
    REQUIRE(cubin.size() > 200);
    const exact_block header{cubin, 64};
    const std::string header_message =
        refused([&] { (void)cuwrap::module::load(ctx, header.span()); });
    CHECK(header_message.find("64-byte image: cubin: ") != std::string::npos);
    CHECK(header_message.find("of a 64-byte image") != std::string::npos);

    const exact_block prefix{cubin, 200};
    CHECK(refused([&] {
            (void)cuwrap::library::load(prefix.span());
          }).find("200-byte image: cubin: ") != std::string::npos);

    const exact_block fatbin_header{fatbin, 16};
    CHECK(refused([&] {
            (void)cuwrap::module::load(ctx, fatbin_header.span());
          }).find("16-byte image: fatbin: its entries (") != std::string::npos);

    // Every cut of the real images, at 64-byte steps and one byte short: none reaches the driver.
    for (const auto* image : {&cubin, &fatbin}) {
      std::vector<std::size_t> cuts;
      for (std::size_t size = 4; size < image->size(); size += 64) cuts.push_back(size);
      cuts.push_back(image->size() - 1);
      for (const std::size_t size : cuts) {
        CAPTURE(size);
        const exact_block cut{*image, size};
        (void)refused([&] { (void)cuwrap::module::load(ctx, cut.span()); });
      }
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "a cubin inside a fatbin is checked against its entry") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    auto fatbin = read_bytes(kernels_file("fatbin"));
    const auto cubin = read_bytes(kernels_file("cubin"));
    // The fatbin's first ELF entry: find the cubin's ELF header inside it and move its section
    // header table past the entry.
    const auto elf = std::search(fatbin.begin(), fatbin.end(), cubin.begin(), cubin.begin() + 4);
    REQUIRE(elf != fatbin.end());
    const std::size_t at = static_cast<std::size_t>(elf - fatbin.begin());
    const std::uint64_t far = fatbin.size();
    std::memcpy(fatbin.data() + at + 0x28, &far, sizeof far);  // e_shoff
    const exact_block block{fatbin, fatbin.size()};
    const std::string message = refused([&] { (void)cuwrap::module::load(ctx, block.span()); });
    CHECK(message.find(" (ELF for sm_90): the section header table") != std::string::npos);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a driver error from load_file names the file") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const std::string bad_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.entry broken( {\n";
    const scratch_file file{"broken.ptx", std::as_bytes(std::span{bad_ptx.data(), bad_ptx.size()})};
    CHECK_THROWS_WITH_AS((void)cuwrap::module::load_file(ctx, file.path),
                         doctest::Contains(("cuModuleLoadDataEx('" + file.path + "' (").c_str()),
                         cuwrap::module_load_error);
    CHECK_THROWS_WITH_AS((void)cuwrap::library::load_file(file.path),
                         doctest::Contains(("cuLibraryLoadData('" + file.path + "' (").c_str()),
                         cuwrap::module_load_error);
  }
}
