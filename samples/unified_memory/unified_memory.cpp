// unified_memory: cuwrap's version of NVIDIA's UnifiedMemoryStreams. Several tasks, each on its
// own stream, compute y = a * x + y on managed memory. As in NVIDIA's sample, some tasks run
// on the device (the data is advised read-mostly and prefetched there, a kernel runs, the
// result is prefetched back) and the others on the host (a host function in stream order).
// The host reads every result through the same pointers and checks it.
//
//   unified_memory [--kernels=DIR]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

struct task {
  cuwrap::stream stream;
  cuwrap::managed_buffer<float> x;
  cuwrap::managed_buffer<float> y;
  float a;
};

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}}};
  constexpr int tasks = 4;
  constexpr std::size_t n = 1 << 16;
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  std::printf("device %d: %s, concurrent managed access: %s\n", dev.ordinal(), dev.name().c_str(),
              dev.attribute<CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS>() ? "yes" : "no");

  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/streams.fatbin");
  const auto saxpy = mod.kernel<void(float, const float*, float*, int)>("managed_saxpy");

  std::vector<task> work;
  work.reserve(tasks);  // host functions hold references to tasks: no reallocation
  for (int t = 0; t < tasks; ++t) {
    work.push_back({cuwrap::stream{ctx}, cuwrap::managed_buffer<float>{ctx, n},
                    cuwrap::managed_buffer<float>{ctx, n}, static_cast<float>(t + 1)});
    auto& w = work.back();
    for (std::size_t i = 0; i < n; ++i) {
      w.x[i] = static_cast<float>(i);
      w.y[i] = 1.0f;
    }
    if (t % 2 == 0) {  // on the device
      w.x.advise(cuwrap::memory_advice::set_read_mostly, cuwrap::memory_location::on(dev));
      w.x.prefetch(w.stream, cuwrap::memory_location::on(dev));
      w.y.prefetch(w.stream, cuwrap::memory_location::on(dev));
      w.stream.launch(saxpy, cuwrap::launch_config::linear(n, 256), w.a, w.x.data(), w.y.data(),
                      static_cast<int>(n));
      w.y.prefetch(w.stream, cuwrap::memory_location::host());  // bring the result home
    } else {                                                    // on the host, in stream order
      w.stream.enqueue([&w] {
        for (std::size_t i = 0; i < n; ++i) w.y[i] = w.a * w.x[i] + w.y[i];
      });
    }
  }

  bool ok = true;
  for (int t = 0; t < tasks; ++t) {
    auto& w = work[static_cast<std::size_t>(t)];
    w.stream.synchronize();
    if (t % 2 == 0) {
      if (!w.x.read_mostly()) {
        std::printf("task %d: x is not advised read-mostly\n", t);
        ok = false;
      }
      if (const auto at = w.y.last_prefetch_location(); at != cuwrap::memory_location::host()) {
        std::printf("task %d: y's last prefetch location is type %d id %d, not the host\n", t,
                    static_cast<int>(at.native().type), at.native().id);
        ok = false;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (std::fabs(w.y[i] - (w.a * static_cast<float>(i) + 1.0f)) >= 1e-3f) {
        std::printf("task %d: y[%zu] is %g, not %g\n", t, i, static_cast<double>(w.y[i]),
                    static_cast<double>(w.a * static_cast<float>(i) + 1.0f));
        ok = false;
        break;
      }
    }
  }
  std::printf("%d tasks, %d on the device and %d on the host\n", tasks, (tasks + 1) / 2, tasks / 2);
  std::puts(ok ? "PASSED: every task's result is correct" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "unified_memory: %s\n", e.what());
  return 1;
}
