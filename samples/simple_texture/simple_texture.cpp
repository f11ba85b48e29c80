// simple_texture: NVIDIA's simpleTextureDrv with cuwrap. An image is read through a texture
// object (cuwrap::texture_object: normalized coordinates, wrap addressing, linear filtering, as
// the original) and rotated by an angle around its centre; the result is checked against a host
// reference of the texture unit's rules (bilinear weights in 1/256 steps), pixel by pixel within
// the original's tolerance. The original reads lena_bw.pgm into a CUDA array; this port
// copies a synthetic image into a CUDA array (cuwrap::array, cuwrap::copy_3d) the same way.
//
//   simple_texture [--width=W] [--height=H] [--angle=RADIANS] [--kernels=DIR]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/texture.hpp>
#include <vector>

#include "options.hpp"

namespace {

// What tex2D<float> returns for (u, v) on a width x height image with normalized coordinates,
// wrap addressing and linear filtering (CUDA C++ Programming Guide, "Texture Fetching"): the
// fractions a, b of x - 0.5 and y - 0.5 in 1/256 steps, and the texel weights in 1/256 steps as
// a GPU rounds them (w11 = ab / 256 rounded, the other three what is left of a, b and 256).
float reference(const std::vector<float>& img, int w, int h, float u, float v) {
  const auto texel = [&](long x, long y) {
    x = ((x % w) + w) % w;
    y = ((y % h) + h) % h;
    return static_cast<double>(img[static_cast<std::size_t>(y * w + x)]);
  };
  const auto steps = [](double c) { return std::lround(std::floor((c - 0.5) * 256 + 0.5)); };
  const long x = steps((u - std::floor(u)) * static_cast<double>(w));
  const long y = steps((v - std::floor(v)) * static_cast<double>(h));
  const long i = x >> 8, j = y >> 8, a = x & 255, b = y & 255;
  const long w11 = (a * b + 128) >> 8;
  const double sum = static_cast<double>(256 - a - b + w11) * texel(i, j) +
                     static_cast<double>(a - w11) * texel(i + 1, j) +
                     static_cast<double>(b - w11) * texel(i, j + 1) +
                     static_cast<double>(w11) * texel(i + 1, j + 1);
  return static_cast<float>(sum / 256);
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{argc,
                                 argv,
                                 {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR},
                                  {"width", "512"},
                                  {"height", "512"},
                                  {"angle", "0.5"}}};
  const int width = options.positive("width"), height = options.positive("height");
  const auto angle = static_cast<float>(std::stod(options.text("angle")));

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod =
      cuwrap::module::load_file(ctx, options.text("kernels") + "/simple_texture.fatbin");
  const auto transform =
      mod.kernel<void(float*, int, int, float, unsigned long long)>("transform_kernel");

  // A synthetic grey image in [0, 1]: rings and a diagonal ramp.
  std::vector<float> img(static_cast<std::size_t>(width) * height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double r = std::hypot(x - width / 3.0, y - height / 2.5);
      img[static_cast<std::size_t>(y * width + x)] =
          static_cast<float>(0.5 + 0.25 * std::sin(r / 6.0) + 0.25 * (x + y) / (width + height));
    }
  }
  const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
  const cuwrap::array<float> dimg{ctx, {w, h}};
  cuwrap::copy_3d(s, cuwrap::volume<float>{dimg}, cuwrap::volume_of(img, {w, h, 1}));
  cuwrap::texture_options sampling;
  sampling.with_address(cuwrap::address_mode::wrap);
  sampling.filter = cuwrap::filter_mode::linear;
  sampling.normalized_coordinates = true;
  const cuwrap::texture_object tex{ctx, dimg, sampling};

  cuwrap::device_buffer<float> dout{ctx, img.size()};
  const cuwrap::launch_config config{
      {static_cast<unsigned>((width + 7) / 8), static_cast<unsigned>((height + 7) / 8)}, {8, 8}};
  s.launch(transform, config, dout.data(), width, height, angle, tex.handle());
  std::vector<float> out(img.size());
  cuwrap::copy(s, out, dout);
  s.synchronize();

  // The kernel's cosf and sinf may differ from the host's in the last bit, which can move a
  // weight by 1/256: the original's tolerance (5e-3) covers that on an image in [0, 1].
  std::size_t wrong = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float u = static_cast<float>(x) - static_cast<float>(width) / 2;
      const float v = static_cast<float>(y) - static_cast<float>(height) / 2;
      const float tu = (u * std::cos(angle) - v * std::sin(angle)) / static_cast<float>(width);
      const float tv = (v * std::cos(angle) + u * std::sin(angle)) / static_cast<float>(height);
      const float want = reference(img, width, height, tu + 0.5f, tv + 0.5f);
      const float got = out[static_cast<std::size_t>(y * width + x)];
      if (!(std::fabs(got - want) <= 5e-3f) && wrong++ < 5) {
        std::fprintf(stderr, "out(%d, %d) = %g, want %g\n", x, y, static_cast<double>(got),
                     static_cast<double>(want));
      }
    }
  }
  std::printf("%s: %d x %d image rotated by %g rad through a texture\n%s\n", dev.name().c_str(),
              width, height, static_cast<double>(angle), wrong == 0 ? "PASSED" : "FAILED");
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "simple_texture: %s\n", e.what());
  return 1;
}
