// unified_memory: the idea of NVIDIA's UnifiedMemoryStreams sample with cuwrap. Several tasks,
// each on its own stream, work on managed memory: the data is prefetched to the device,
// advised read-mostly, then brought back to the host, where a host function (standing in for
// the kernel until launches land) computes y = a * x + y in stream order. Every result is
// checked.
#include <cuwrap/cuwrap.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct task {
  cuwrap::stream stream;
  cuwrap::managed_buffer<float> x;
  cuwrap::managed_buffer<float> y;
  float a;
};

}  // namespace

int main() try {
  constexpr int tasks = 4;
  constexpr std::size_t n = 1 << 16;
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  std::printf("device %d: %s, concurrent managed access: %s\n", dev.ordinal(), dev.name().c_str(),
              dev.attribute<CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS>() ? "yes" : "no");

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
    w.x.advise(cuwrap::memory_advice::set_read_mostly, cuwrap::memory_location::on(dev));
    w.x.prefetch(w.stream, cuwrap::memory_location::on(dev));
    w.y.prefetch(w.stream, cuwrap::memory_location::on(dev));
    // Bring the data home for the host step, in stream order.
    w.x.prefetch(w.stream, cuwrap::memory_location::host());
    w.y.prefetch(w.stream, cuwrap::memory_location::host());
    w.stream.enqueue([&w] {
      for (std::size_t i = 0; i < n; ++i) w.y[i] = w.a * w.x[i] + w.y[i];
    });
  }

  bool ok = true;
  for (auto& w : work) {
    w.stream.synchronize();
    ok = ok && w.x.read_mostly() &&
         w.y.last_prefetch_location() == cuwrap::memory_location::host();
    for (std::size_t i = 0; ok && i < n; ++i) {
      ok = std::fabs(w.y[i] - (w.a * static_cast<float>(i) + 1.0f)) < 1e-3f;
    }
  }
  std::puts(ok ? "PASSED: every task's result is correct" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "unified_memory: %s\n", e.what());
  return 1;
}
