// vector_add: cuwrap's version of NVIDIA's vectorAddDrv. Loads the vector_add kernel (built
// from samples/kernels/vector_add.cu) as a fatbin (sm_90 SASS and compute_90 PTX, the default),
// as PTX or as a cubin (SASS only), adds two vectors on the device and checks every element.
// The software driver runs the PTX of the first two; it cannot run a cubin's SASS.
//
//   vector_add [--fatbin | --ptx | --cubin] [--kernels=DIR] [--n=N]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

int main(int argc, char** argv) try {
  std::string format = "fatbin";
  std::string dir = CUWRAP_SAMPLE_KERNELS_DIR;
  int n = 50000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg{argv[i]};
    if (arg == "--fatbin" || arg == "--ptx" || arg == "--cubin") {
      format = arg.substr(2);
    } else if (arg.starts_with("--kernels=")) {
      dir = arg.substr(10);
    } else if (arg.starts_with("--n=")) {
      n = std::stoi(std::string{arg.substr(4)});
    } else {
      std::fprintf(stderr,
                   "usage: vector_add [--fatbin | --ptx | --cubin] [--kernels=DIR] [--n=N]\n");
      return 2;
    }
  }

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, dir + "/vector_add." + format);
  const auto vector_add = mod.kernel<void(const float*, const float*, float*, int)>("vector_add");
  std::printf("vector_add of %d elements on %s (%s)\n", n, dev.name().c_str(), format.c_str());

  std::mt19937 random{42};
  std::uniform_real_distribution<float> uniform{0.0f, 1.0f};
  std::vector<float> a(static_cast<std::size_t>(n)), b(a.size()), c(a.size());
  for (auto& v : a) v = uniform(random);
  for (auto& v : b) v = uniform(random);

  cuwrap::device_buffer<float> da{ctx, a.size()}, db{ctx, a.size()}, dc{ctx, a.size()};
  cuwrap::copy(s, da, a);
  cuwrap::copy(s, db, b);
  s.launch(vector_add, cuwrap::launch_config::linear(a.size(), 256), da.data(), db.data(),
           dc.data(), n);
  cuwrap::copy(s, c, dc);
  s.synchronize();

  for (std::size_t i = 0; i < c.size(); ++i) {
    if (std::fabs(a[i] + b[i] - c[i]) > 1e-5f) {
      std::fprintf(stderr, "FAILED: element %zu is %f, expected %f\n", i, static_cast<double>(c[i]),
                   static_cast<double>(a[i] + b[i]));
      return 1;
    }
  }
  std::puts("PASSED");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "vector_add: %s\n", e.what());
  return 1;
}
