// tma_transpose: a matrix transpose whose tiles move through the tensor memory accelerator (the
// counterpart of NVIDIA's transpose sample, written the Hopper way). Two tensor maps
// (cuwrap::tensor_map, checked before the driver) describe the input and the output; each block
// loads a 32 x 32 tile with cp.async.bulk.tensor (128-byte swizzle), transposes it in shared
// memory and stores it with another. The matrix sizes need not be multiples of 32: the tiles at
// the edges reach outside it. Checks the result against the host and prints GB/s.
//
//   tma_transpose [--rows=R] [--cols=C] [--kernels=DIR]
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <vector>

#include "options.hpp"

int main(int argc, char** argv) try {
  constexpr unsigned tile = 32;  // matches kTile in the kernel
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"rows", "1000"}, {"cols", "1500"}}};
  const auto rows = static_cast<std::size_t>(options.positive("rows"));
  const auto cols = static_cast<std::size_t>(options.positive("cols"));
  if (cols % 4 != 0 || rows % 4 != 0) {
    std::fprintf(stderr, "tma_transpose: rows and cols must be multiples of 4 (16-byte rows)\n");
    return 2;
  }

  const auto dev = cuwrap::device::get(0);
  if (dev.compute_capability().major < 9) {
    std::printf("%s has no tensor memory accelerator (compute capability 9.0 needed): skipped\n",
                dev.name().c_str());
    return 77;
  }
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod =
      cuwrap::module::load_file(ctx, options.text("kernels") + "/tma_transpose.fatbin");
  const auto transpose = mod.kernel<void(cuwrap::tensor_map, cuwrap::tensor_map)>("tma_transpose");

  std::vector<float> in(rows * cols), out(rows * cols, -1.0f);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 9973) * 0.25f;
  cuwrap::device_buffer<float> din{ctx, in.size()}, dout{ctx, out.size()};
  cuwrap::copy(s, din, in);
  cuwrap::fill(s, dout, -1.0f);

  // in: cols x rows (innermost first), 32 x 32 boxes, swizzled; out: rows x cols, not swizzled
  const auto in_map = cuwrap::tensor_map::tiled(ctx, din.span(), {cols, rows})
                          .box({tile, tile})
                          .swizzle(cuwrap::tensor_swizzle::bytes128)
                          .build();
  const auto out_map =
      cuwrap::tensor_map::tiled(ctx, dout.span(), {rows, cols}).box({tile, tile}).build();
  const cuwrap::launch_config config{{static_cast<unsigned>((cols + tile - 1) / tile),
                                      static_cast<unsigned>((rows + tile - 1) / tile)},
                                     {tile, 8}};

  cuwrap::event start{ctx, cuwrap::event_flags::timing}, stop{ctx, cuwrap::event_flags::timing};
  s.record(start);
  s.launch(transpose, config, in_map, out_map);
  s.record(stop);
  cuwrap::copy(s, out, dout);
  s.synchronize();
  const double ms = static_cast<double>(cuwrap::elapsed(start, stop).count());
  const double bytes = 2.0 * static_cast<double>(in.size() * sizeof(float));
  std::printf("%s: %zu x %zu transposed in %.3f ms (%.2f GB/s)\n", dev.name().c_str(), rows, cols,
              ms, ms > 0 ? bytes / (ms * 1e6) : 0.0);

  std::size_t wrong = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (out[c * rows + r] != in[r * cols + c] && wrong++ < 5) {
        std::fprintf(stderr, "out[%zu][%zu] = %g, want %g\n", c, r,
                     static_cast<double>(out[c * rows + r]), static_cast<double>(in[r * cols + c]));
      }
    }
  }
  std::printf("%s\n", wrong == 0 ? "PASSED" : "FAILED");
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "tma_transpose: %s\n", e.what());
  return 1;
}
