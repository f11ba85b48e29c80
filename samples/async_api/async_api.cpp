// async_api: the idea of NVIDIA's asyncAPI sample with cuwrap. The host queues work on a stream
// (host callbacks standing in for copies and kernels until those land), records events around
// it, and keeps computing while the stream runs; then it checks that the work ran, in order,
// and reports how much CPU work overlapped. Exits non-zero if the results are wrong.
#include <chrono>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <thread>
#include <vector>

int main() try {
  constexpr int steps = 8;
  auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  cuwrap::event start{ctx, cuwrap::event_flags::timing};
  cuwrap::event stop{ctx, cuwrap::event_flags::timing};

  std::vector<int> order;  // written only by the stream's callbacks, read after synchronize
  s.record(start);
  for (int i = 0; i < steps; ++i) {
    s.enqueue([&order, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // "GPU work"
      order.push_back(i);
    });
  }
  s.record(stop);

  // The CPU keeps working while the stream runs. Poll a bounded number of times: a driver
  // that runs work only when synchronized (the software driver's deferred mode) never
  // finishes on its own.
  long cpu_iterations = 0;
  for (int polls = 0; polls < 1'000'000 && !stop.is_done(); ++polls) {
    ++cpu_iterations;
  }
  stop.synchronize();

  const auto ms = cuwrap::elapsed(start, stop).count();
  std::printf("device %d: %s\n", dev.ordinal(), dev.name().c_str());
  std::printf("time spent in the stream: %.2f ms\n", static_cast<double>(ms));
  std::printf("CPU iterations while waiting: %ld\n", cpu_iterations);

  bool ok = order.size() == steps;
  for (int i = 0; ok && i < steps; ++i) {
    ok = order[static_cast<std::size_t>(i)] == i;
  }
  ok = ok && ms >= 0;
  std::puts(ok ? "PASSED: the stream ran its work in order" : "FAILED: wrong order or count");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "async_api: %s\n", e.what());
  return 1;
}
