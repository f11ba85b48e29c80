// matrix_mul: cuwrap's version of NVIDIA's matrixMulDrv. Multiplies two matrices with a tiled
// shared-memory kernel (samples/kernels/matrix_mul.cu, loaded as a fatbin), checks the result
// against a host computation and prints GFLOP/s measured with events.
//
//   matrix_mul [--size=N] [--kernels=DIR]     (N a multiple of 16; default 512)
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "options.hpp"

int main(int argc, char** argv) try {
  constexpr unsigned tile = 16;  // matches TILE in the kernel
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"size", "512"}}};
  const int size = options.positive("size");
  if (size % static_cast<int>(tile) != 0) {
    std::fprintf(stderr, "matrix_mul: --size must be a positive multiple of %u\n", tile);
    return 2;
  }
  const auto n = static_cast<std::size_t>(size);

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/matrix_mul.fatbin");
  const auto matrix_mul =
      mod.kernel<void(float*, const float*, const float*, int, int)>("matrix_mul");

  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 7) * 0.5f;
    b[i] = static_cast<float>(i % 5) * 0.25f;
  }
  cuwrap::device_buffer<float> da{ctx, a.size()}, db{ctx, b.size()}, dc{ctx, c.size()};
  cuwrap::copy(s, da, a);
  cuwrap::copy(s, db, b);

  const cuwrap::launch_config config{{size / tile, size / tile}, {tile, tile}};
  cuwrap::event start{ctx, cuwrap::event_flags::timing}, stop{ctx, cuwrap::event_flags::timing};
  constexpr int iterations = 10;
  s.launch(matrix_mul, config, dc.data(), da.data(), db.data(), size, size);  // warm-up
  s.record(start);
  for (int i = 0; i < iterations; ++i) {
    s.launch(matrix_mul, config, dc.data(), da.data(), db.data(), size, size);
  }
  s.record(stop);
  cuwrap::copy(s, c, dc);
  s.synchronize();

  const double ms = static_cast<double>(cuwrap::elapsed(start, stop).count()) / iterations;
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf("%s: %dx%d matrices, %.3f ms per multiply, %.1f GFLOP/s\n", dev.name().c_str(), size,
              size, ms, ms > 0 ? flops / (ms * 1e6) : 0.0);

  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      double expected = 0;
      for (std::size_t k = 0; k < n; ++k) {
        expected += static_cast<double>(a[row * n + k]) * static_cast<double>(b[k * n + col]);
      }
      const double got = c[row * n + col];
      if (std::fabs(got - expected) > 1e-3 * std::fabs(expected) + 1e-3) {
        std::fprintf(stderr, "FAILED: C[%zu][%zu] = %f, expected %f\n", row, col, got, expected);
        return 1;
      }
    }
  }
  std::puts("PASSED");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "matrix_mul: %s\n", e.what());
  return 1;
}
