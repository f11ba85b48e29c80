// docs/devices-and-contexts.md: feature detection, context-wide events, a profiler range.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <vector>

int main() try {
  if (!cuwrap::supports(cuwrap::feature::context_events)) {
    std::printf("the driver has no cuCtxRecordEvent (needs CUDA %d)\n",
                cuwrap::minimum_driver_version(cuwrap::feature::context_events));
    return 0;
  }
  auto dev = cuwrap::device::get(0);
  cuwrap::context producer{dev};
  cuwrap::context consumer{dev};
  cuwrap::stream a{producer}, b{producer}, c{consumer};
  cuwrap::event all_of_producer{producer};
  std::vector<int> order;
  {
    const cuwrap::profiler_range profiled{producer};  // collected by nsys/ncu when asked
    a.enqueue([&order] { order.push_back(1); });
    b.enqueue([&order] { order.push_back(2); });
    producer.record_event(all_of_producer);  // every stream of `producer` so far
  }
  consumer.wait_event(all_of_producer);  // all later work of `consumer` waits for it
  c.enqueue([&order] { order.push_back(3); });
  consumer.synchronize();
  std::printf("order: %d %d %d\n", order[0], order[1], order[2]);
  return order == std::vector<int>{1, 2, 3} ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
