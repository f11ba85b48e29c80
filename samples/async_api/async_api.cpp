// async_api: cuwrap's version of NVIDIA's asyncAPI. One stream copies an array to the device,
// runs a kernel that adds a value to every element and copies the result back, all
// asynchronously and bracketed by timing events; meanwhile the CPU keeps counting until the
// stop event is done. Then every element is checked. Exits non-zero if a result is wrong.
//
//   async_api [--kernels=DIR] [--n=N]
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>

#include "options.hpp"

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"n", "16777216"}}};
  const int n = options.positive("n");
  constexpr int value = 26;

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  std::printf("device %d: %s\n", dev.ordinal(), dev.name().c_str());
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/streams.fatbin");
  const auto increment = mod.kernel<void(int*, int, int)>("increment");

  cuwrap::pinned_buffer<int> host{ctx, static_cast<std::size_t>(n)};  // async copies need it
  for (auto& x : host) x = 0;
  cuwrap::device_buffer<int> device{ctx, host.size()};
  cuwrap::stream s{ctx};
  cuwrap::event start{ctx, cuwrap::event_flags::timing};
  cuwrap::event stop{ctx, cuwrap::event_flags::timing};

  // Everything below returns at once; the stream does the work.
  s.record(start);
  cuwrap::copy(s, device, host);
  s.launch(increment, cuwrap::launch_config::linear(host.size(), 512), device.data(), value, n);
  cuwrap::copy(s, host, device);
  s.record(stop);

  // The CPU keeps working until the GPU is done. A driver that runs work only when something
  // synchronizes (the software driver's deferred mode) never finishes on its own, so the
  // polling is bounded.
  long cpu_iterations = 0;
  for (int polls = 0; polls < 10'000'000 && !stop.is_done(); ++polls) {
    ++cpu_iterations;
  }
  stop.synchronize();
  std::printf("time spent executing by the GPU: %.2f ms\n",
              static_cast<double>(cuwrap::elapsed(start, stop).count()));
  std::printf("CPU executed %ld iterations while waiting for the GPU to finish\n", cpu_iterations);

  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] != value) {
      std::fprintf(stderr, "FAILED: element %zu is %d, expected %d\n", i, host[i], value);
      return 1;
    }
  }
  std::printf("PASSED: all %d elements are %d\n", n, value);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "async_api: %s\n", e.what());
  return 1;
}
