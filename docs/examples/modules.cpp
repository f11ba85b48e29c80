// docs/modules-and-kernels.md and docs/launch.md: load PTX, look up a typed kernel, launch it.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <vector>

#include "scale_ptx.hpp"

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load(ctx, std::string_view{examples::scale_ptx});
  // The signature is checked against the kernel's parameter layout here, once.
  const auto scale = mod.kernel<void(float*, float, int)>("scale");
  std::printf("scale: %zu parameters, up to %d threads per block\n", scale.params().size(),
              scale.max_threads_per_block());

  constexpr int n = 1000;
  cuwrap::device_buffer<float> data{ctx, n};
  cuwrap::fill(s, data, 1.0f);
  s.launch(scale, cuwrap::launch_config::linear(n, 256), data.data(), 2.0f, n);  // one call
  std::vector<float> host(n);
  cuwrap::copy(s, host, data);
  s.synchronize();
  std::printf("host[0] = %g\n", static_cast<double>(host[0]));
  return host == std::vector<float>(n, 2.0f) ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
