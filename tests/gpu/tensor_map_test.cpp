// Tensor maps on a real device: the builder's maps are accepted by NVIDIA's driver, and a TMA
// kernel (tests/kernels/tma_kernels.cu) loads the boxes they describe (compute capability 9.0).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu tensor maps") {
  TEST_CASE("a tiled map's boxes arrive through the tensor memory accelerator") {
    const auto dev = cuwrap::device::get(0);
    if (dev.compute_capability().major < 9) {
      MESSAGE("no tensor memory accelerator on ", dev.name());
      return;
    }
    cuwrap::primary_context ctx{dev};
    cuwrap::stream s{ctx};
    constexpr std::size_t cols = 64, rows = 32;
    std::vector<float> host(cols * rows);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
    cuwrap::device_buffer<float> data{ctx, host.size()}, out{ctx, host.size()};
    cuwrap::copy(s, data, host);
    const auto map = cuwrap::tensor_map::tiled(ctx, data.span(), {cols, rows}).box({8, 4}).build();
    const auto mod = cuwrap::module::load_file(
        ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/tma_kernels.fatbin");
    const auto k = mod.kernel<void(cuwrap::tensor_map, float*, int, int)>("tma_load_boxes");
    s.launch(k, cuwrap::launch_config{{cols / 8, rows / 4, 1}, {32, 1, 1}, 8 * 4 * sizeof(float)},
             map, out.data(), 8, 4);
    std::vector<float> got(host.size());
    cuwrap::copy(s, got, out);
    s.synchronize();
    for (std::size_t b = 0; b < got.size() / 32; ++b) {
      const std::size_t bx = b % (cols / 8), by = b / (cols / 8);
      for (std::size_t i = 0; i < 32; ++i) {
        REQUIRE(got[32 * b + i] == host[(4 * by + i / 8) * cols + 8 * bx + i % 8]);
      }
    }
  }
}
